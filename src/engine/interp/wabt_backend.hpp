// The wabt interpreter behind a narrow interface that both C++17 and C++20
// code can include. wabt's interpreter headers only compile as C++17 with
// g++ 12 while engine.hpp needs C++20, so the backend (wabt_backend.cpp,
// C++17) and the engine.hpp implementation (interp_engine.cpp, C++20) meet
// here: plain pointers and sizes instead of spans, and mirrors of the engine
// types. No wabt type appears in this header.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../caps.hpp"

namespace cmhost::engine::wabt_backend {

// Numbered exactly as CoreType and engine::ExternKind (interp_engine.cpp
// checks this), so conversions are casts.
enum class ValCode : uint8_t { I32, I64, F32, F64, V128, FuncRef, ExternRef };
enum class KindCode : uint8_t { Func, Table, Memory, Global, Tag };

struct Signature {
  std::vector<ValCode> params;
  std::vector<ValCode> results;
};

// Mirrors engine::ExternType: the members that matter depend on kind.
struct ExternSignature {
  KindCode kind = KindCode::Func;
  Signature func;
  uint64_t min = 0;
  std::optional<uint64_t> max;
  bool is64 = false;
  bool shared = false;
  ValCode value = ValCode::I32;
  bool mutable_global = false;
};

struct ImportSignature {
  std::string module;
  std::string name;
  ExternSignature type;
};

struct ExportSignature {
  std::string name;
  ExternSignature type;
};

// A store-owned extern, as engine::Extern.
struct Handle {
  KindCode kind = KindCode::Func;
  uint32_t id = 0;
};

// A decoded, validated module (opaque here); any number of stores can
// instantiate it.
struct CompiledCode;

struct CompiledModule {
  std::shared_ptr<const CompiledCode> code;
  std::vector<ImportSignature> imports;  // the module's own, never the engine's (instrument.hpp)
  std::vector<ExportSignature> exports;
};

// Caps on what a store's modules define (engine::MemoryLimits).
using Caps = StoreCaps;

// Decodes and validates a core module, adding metering (instrument.hpp)
// when `metered` and growth guards when its code grows a memory or table.
// Throws cmhost::Error of kind Decode or Validate.
CompiledModule compile(const uint8_t* bytes, size_t size, bool metered);

// What a host function can ask about the wasm code that called it.
class CallerView {
 public:
  // The calling instance's export of that name; nullopt if it has none or if
  // the host called the function directly.
  virtual std::optional<Handle> caller_export(std::string_view name) = 0;

 protected:
  ~CallerView() = default;
};

// Runs a host function: params and results are sized by its signature. Any
// exception it throws traps the calling wasm code (see InterpStore::call).
using HostEntry = void (*)(void* context, CallerView& caller, const uint64_t* params, uint64_t* results);

struct MemoryView {
  uint8_t* data = nullptr;
  uint64_t size = 0;
};

// A function looked up and checked once (engine::PreparedCall).
class PreparedFunc {
 public:
  virtual ~PreparedFunc() = default;
  virtual void call(const uint64_t* args, size_t arg_count, uint64_t* results, size_t result_count) = 0;
};

// A wabt store plus everything cmhost keeps per store. Handles are checked:
// one this store did not hand out, or of the wrong kind, is a Usage error.
class InterpStore {
 public:
  // `metered` exactly when the engine meters its modules; `epoch` is the
  // engine's.
  static std::unique_ptr<InterpStore> create(bool metered, std::shared_ptr<const std::atomic<uint64_t>> epoch);
  virtual ~InterpStore() = default;

  // Returns the instance's exports in the module's export order. Throws Link
  // for missing or mismatched imports, Trap when initialisation traps.
  virtual std::vector<Handle> instantiate(const CompiledCode& code, const Handle* imports, size_t count) = 0;

  // `context` must outlive the store.
  virtual Handle host_func(const Signature& signature, HostEntry entry, void* context) = 0;
  virtual ExternSignature extern_signature(Handle handle) const = 0;

  // Calls a function with raw value bits. Throws Trap with the engine's
  // message, or the meter's; an exception other than cmhost::Error thrown
  // by a host function comes out unchanged.
  virtual void call(Handle func, const uint64_t* args, size_t arg_count, uint64_t* results,
                    size_t result_count) = 0;
  // `func` ready for many calls, valid while the store lives.
  virtual std::unique_ptr<PreparedFunc> prepare(Handle func) = 0;

  virtual MemoryView memory(Handle memory) = 0;
  virtual std::optional<uint64_t> grow_memory(Handle memory, uint64_t pages) = 0;
  virtual uint64_t global_get(Handle global) const = 0;
  virtual void global_set(Handle global, uint64_t bits) = 0;

  // The function in slot `index` of a funcref table; nullopt when the slot
  // is null or out of range.
  virtual std::optional<Handle> table_func(Handle table, uint64_t index) = 0;

  // Interpreter state per native stack (see engine::Store::ExecutionStack).
  // Stacks are opaque; null names the store's own.
  virtual void* new_stack() = 0;
  virtual void delete_stack(void* stack) = 0;
  virtual void* switch_stack(void* stack) = 0;

  // Applies to the instances made from now on (engine::Store).
  virtual void set_caps(const Caps& caps) = 0;
  // Metered stores only (Usage otherwise): see engine::Store.
  virtual void set_fuel(std::optional<uint64_t> units) = 0;
  virtual std::optional<uint64_t> fuel() const = 0;
  virtual void set_epoch_deadline(uint64_t epoch) = 0;
  virtual bool deadline_passed() const = 0;
};

}  // namespace cmhost::engine::wabt_backend
