// The core-engine interface a backend implements and the runtime drives
// (src/engine/, docs/architecture.md): modules, stores, instances, memories
// and host functions of core WebAssembly. An embedder does not need it:
// cmhost/engine.hpp has what it configures, cmhost/cmhost.hpp what it runs.
//
// The runtime stage drives core modules only through this interface, so a
// different backend (an ahead-of-time one, say) can replace the default wabt
// interpreter without touching the ABI or runtime stages. No backend header
// leaks through here.
//
// Core values are raw bit patterns in uint64_t, as in the canonical ABI
// stage: i32 and f32 in the low 32 bits with the upper bits zero, i64 and
// f64 in all 64. Reference and v128 values never cross this interface.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmhost/core_type.hpp"
#include "cmhost/engine.hpp"

namespace cmhost::engine {

using cmhost::CoreType;
using cmhost::to_string;

struct FuncType {
  std::vector<CoreType> params;
  std::vector<CoreType> results;
  bool operator==(const FuncType&) const = default;
};
std::string to_string(const FuncType& t);

enum class ExternKind : uint8_t { Func, Table, Memory, Global, Tag };
const char* to_string(ExternKind k) noexcept;

struct Limits {
  uint64_t min = 0;
  std::optional<uint64_t> max;
  bool is64 = false;   // memory64 / table64
  bool shared = false;
};

// The type of an import or export: exactly one of the members is meaningful,
// chosen by kind.
struct ExternType {
  ExternKind kind = ExternKind::Func;
  FuncType func;        // Func, Tag (a tag's parameters)
  Limits limits;        // Table, Memory
  CoreType value = CoreType::I32;  // Global's value type, Table's element type
  bool mutable_global = false;
};

// Per-store caps on linear memories and tables (Store::set_memory_limits).
// Unset: only the modules' own limits apply.
struct MemoryLimits {
  std::optional<uint64_t> memory_bytes = std::nullopt;        // each memory
  std::optional<uint64_t> total_memory_bytes = std::nullopt;  // the store's memories together
  std::optional<uint64_t> table_elements = std::nullopt;      // the store's tables together
};

struct ImportDesc {
  std::string module;
  std::string name;
  ExternType type;
};

struct ExportDesc {
  std::string name;
  ExternType type;
};

// A store-owned extern (function, table, memory, global or tag). Handles are
// only meaningful in the store that made them.
struct Extern {
  ExternKind kind = ExternKind::Func;
  uint32_t id = 0;
  bool operator==(const Extern&) const = default;
};

class Module {
 public:
  virtual ~Module() = default;
  virtual const std::vector<ImportDesc>& imports() const = 0;
  virtual const std::vector<ExportDesc>& exports() const = 0;
};

class Store;

// A function made ready for many calls (a lifted export's core function):
// looked up and checked once, so that a call only passes its values. Valid
// while its store lives.
class PreparedCall {
 public:
  virtual ~PreparedCall() = default;
  // As Store::call, for the prepared function.
  virtual void call(std::span<const uint64_t> args, std::span<uint64_t> results) = 0;
};

// What a host function sees of its caller.
class Caller {
 public:
  virtual ~Caller() = default;
  virtual Store& store() = 0;
  // The calling instance's export of that name, if any (e.g. "memory").
  virtual std::optional<Extern> caller_export(std::string_view name) = 0;
};

// A host function: reads params, writes results (sized from its type).
// Throwing cmhost::Error (any kind) traps the calling wasm code with that
// message; the error reaches the outer call as a Trap.
using HostFunc =
    std::function<void(Caller& caller, std::span<const uint64_t> params, std::span<uint64_t> results)>;

class Instance {
 public:
  virtual ~Instance() = default;
  virtual std::optional<Extern> get_export(std::string_view name) const = 0;
  virtual const std::vector<ExportDesc>& exports() const = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  // Instantiates with imports in module->imports() order. Throws
  // cmhost::Error: Link for missing/mismatched imports, Trap when the start
  // function or a segment initialisation traps.
  virtual std::shared_ptr<Instance> instantiate(const Module& module, std::span<const Extern> imports) = 0;

  virtual Extern host_func(FuncType type, HostFunc func) = 0;
  virtual FuncType func_type(Extern func) const = 0;
  virtual ExternType extern_type(Extern e) const = 0;

  // Calls a function; args and results follow its type. Throws cmhost::Error
  // (Trap) with the engine's message when the wasm code traps, runs out of
  // fuel or passes its epoch deadline.
  virtual void call(Extern func, std::span<const uint64_t> args, std::span<uint64_t> results) = 0;
  // `func` ready for many calls; Usage when it is not a function of this store.
  virtual std::unique_ptr<PreparedCall> prepare_call(Extern func) = 0;

  // The memory's current bytes; the span is invalid after anything that can
  // grow memory (a call into wasm, grow_memory).
  virtual std::span<uint8_t> memory_bytes(Extern memory) = 0;
  // Grows by `pages`; returns the old size in pages, or nullopt on failure.
  virtual std::optional<uint64_t> grow_memory(Extern memory, uint64_t pages) = 0;

  virtual uint64_t global_get(Extern global) const = 0;
  virtual void global_set(Extern global, uint64_t bits) = 0;

  // The function in slot `index` of a funcref table; nullopt when the slot
  // is null or out of range.
  virtual std::optional<Extern> table_func(Extern table, uint64_t index) = 0;

  // Calls nest (host -> wasm -> host -> ...) on a native stack, and the
  // engine keeps state per nesting level: the interpreter its threads, a
  // compiled backend the target a trap unwinds to and its call depth. A
  // runtime that switches between native stacks (fibers) gives each its own
  // ExecutionStack and makes it current while that stack runs, so a trap
  // unwinds the stack it happened on; calls in between use the current one.
  class ExecutionStack {
   public:
    virtual ~ExecutionStack() = default;
    // The native stack this one stands for, [low, low + size), which guest
    // code may use but for room kept for the host frames above it. Compiled
    // backends trap deep recursion by it; the interpreter ignores it.
    virtual void bind_native_stack(const void* low, size_t size) { (void)low, (void)size; }
  };
  virtual std::unique_ptr<ExecutionStack> new_execution_stack() = 0;
  // Makes `stack` current (null: the store's own, the embedder's stack) and
  // returns the one that was. `stack` must stay alive while it is current.
  virtual ExecutionStack* switch_execution_stack(ExecutionStack* stack) = 0;

  // Caps on the memories and tables of the instances made from now on: a
  // module whose memory or table starts above them cannot be instantiated
  // (Error, Trap, naming the limit), and growing past them fails as growing
  // past a declared maximum does (memory.grow and table.grow return -1).
  virtual void set_memory_limits(const MemoryLimits& limits) = 0;

  // Metered engines (EngineConfig::metering) only; Error (Usage) otherwise.
  // Fuel: how many units guest code may still run (nullopt: unlimited, the
  // default); running out traps with "out of fuel". The fuel is the store's,
  // across calls.
  virtual void set_fuel(std::optional<uint64_t> units) = 0;
  virtual std::optional<uint64_t> fuel() const = 0;
  // Guest code traps with "interrupted" once the engine's epoch
  // (Engine::increment_epoch) reaches `epoch` (absolute; none by default).
  virtual void set_epoch_deadline(uint64_t epoch) = 0;
  // Whether the deadline has passed: host work that waits checks it.
  virtual bool deadline_passed() const = 0;
};

// Core modules compiled ahead of time into one artifact (what an
// ahead-of-time backend produces for a component), in the component's
// module order.
class Artifact {
 public:
  virtual ~Artifact() = default;
  virtual size_t module_count() const = 0;
  virtual std::shared_ptr<Module> module(size_t index) const = 0;
  // For a first tier's code (EngineConfig::AotTier::Tiered): says, cheaply,
  // whether the faster code that replaces it is ready to load. Unset for
  // final code.
  virtual std::function<bool()> faster_code_check() const { return nullptr; }
};

class Engine {
 public:
  Engine();
  virtual ~Engine() = default;
  // The epoch stores set their deadlines on. Any thread may bump it; guest
  // code of a store whose deadline it reaches traps within one metering
  // slice (well under a millisecond compiled, about one interpreted), and
  // host work waiting in the engine's stores is woken to look (on_epoch).
  void increment_epoch();
  uint64_t epoch() const noexcept { return epoch_->load(std::memory_order_relaxed); }
  // Calls `wake` on the bumping thread after each increment, for as long as
  // the returned token lives.
  std::shared_ptr<void> on_epoch(std::function<void()> wake);

  // Validates and compiles a core module; Error(Decode/Validate) if invalid.
  // The bytes need to live only for the duration of the call.
  virtual std::shared_ptr<Module> compile(std::span<const uint8_t> bytes) = 0;
  // The modules of an artifact this backend compiled ahead of time from the
  // component `component` (its bytes). Error (Usage) from backends that
  // compile at run time, or when the artifact was made from other bytes or
  // does not fit this engine (another backend, version or build of cmhost,
  // or configuration).
  virtual std::unique_ptr<Artifact> load_artifact(const std::string& path, std::span<const uint8_t> component);
  // Backends that compile ahead of time: the core modules (`modules`, in
  // order, inside `component`) as one artifact, from the cache when a fresh
  // one is there, else compiled into it. Null from the others, which
  // compile each module with compile().
  virtual std::unique_ptr<Artifact> cached_artifact(std::span<const uint8_t> component,
                                                    const std::vector<std::span<const uint8_t>>& modules);
  // Compiles the modules into an artifact file at `path` for load_artifact.
  // Usage from backends without artifacts.
  virtual void write_artifact(std::span<const uint8_t> component,
                              const std::vector<std::span<const uint8_t>>& modules, const std::string& path);
  virtual std::unique_ptr<Store> new_store() = 0;
  virtual const EngineConfig& config() const = 0;

 protected:
  // Shared with the stores, which may outlive the engine object.
  std::shared_ptr<std::atomic<uint64_t>> epoch_ = std::make_shared<std::atomic<uint64_t>>(0);

 private:
  struct EpochWakers;
  std::shared_ptr<EpochWakers> wakers_;
};

// The engine of `config.backend`.
std::unique_ptr<Engine> make_engine(EngineConfig config = {});

}  // namespace cmhost::engine
