// The wabt interpreter as cmhost's core engine: compiling, one wabt store per
// cmhost store, calls, host functions, memories and globals.
//
// Reentrancy: a host function may call back into wasm. Each nesting depth
// gets its own wabt Thread (made once, then reused), because a Thread that
// trapped keeps its frames and cannot be reset through wabt's API: it is
// dropped and the next call at that depth makes a fresh one. Giving nested
// calls their own Thread means a host function can catch a trap from a
// nested call and carry on without the outer call's Thread being disturbed.
#include "wabt_backend.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "cmhost/error.hpp"
#include "../metering/meter.hpp"
#include "../metering/instrument.hpp"
#include <wabt/binary-reader-nop.h>
#include <wabt/binary-reader.h>
#include <wabt/interp/binary-reader-interp.h>
#include <wabt/interp/interp.h>
#include "../wabt_support.hpp"

namespace cmhost::engine::wabt_backend {

namespace wi = wabt::interp;

struct CompiledCode {
  wi::ModuleDesc desc;
  bool metered = false;
  std::vector<EngineImport> engine_imports;  // after the module's own (instrument.hpp)
  uint64_t id = 0;  // a store's key for its copy of the module; never reused

  // Unmetered code that grows memories or tables loads as it is; a store
  // that cannot bound its growth by a maximum alone (see WabtStore::
  // instantiate) takes the guarded copy, made from `original` when first
  // wanted.
  GrowthSites growth;
  std::vector<uint8_t> original;
  std::shared_ptr<const CompiledCode> guarded() const;

 private:
  mutable std::mutex guarded_mutex_;
  mutable std::shared_ptr<const CompiledCode> guarded_;
};

namespace {

// Host -> wasm -> host -> ... nesting costs native stack (about 2 KiB a level
// here, 5 KiB under AddressSanitizer, plus the host functions' own) and one
// Thread (128 KiB) per level. Threads beyond the first few are freed once
// the outermost call returns.
constexpr unsigned kMaxCallNesting = 128;
constexpr size_t kThreadsKept = 4;

// Traps and uncaught exceptions are store objects that only a collection
// frees; collect after this many failed calls.
constexpr unsigned kFailuresBetweenCollections = 64;

std::atomic<uint64_t> next_code_id{1};

[[noreturn]] void usage_error(const std::string& message) { throw Error(ErrorKind::Usage, message); }

//// Types ////

std::optional<ValCode> val_code(wabt::Type type) {
  switch (type) {
    case wabt::Type::I32: return ValCode::I32;
    case wabt::Type::I64: return ValCode::I64;
    case wabt::Type::F32: return ValCode::F32;
    case wabt::Type::F64: return ValCode::F64;
    case wabt::Type::V128: return ValCode::V128;
    case wabt::Type::FuncRef: return ValCode::FuncRef;
    case wabt::Type::ExternRef: return ValCode::ExternRef;
    default: return std::nullopt;
  }
}

ValCode checked_val_code(wabt::Type type) {
  if (auto code = val_code(type)) return *code;
  throw Error(ErrorKind::Validate, "unsupported value type " + type.GetName());
}

wabt::Type wabt_type(ValCode code) {
  switch (code) {
    case ValCode::I32: return wabt::Type::I32;
    case ValCode::I64: return wabt::Type::I64;
    case ValCode::F32: return wabt::Type::F32;
    case ValCode::F64: return wabt::Type::F64;
    case ValCode::V128: return wabt::Type::V128;
    case ValCode::FuncRef: return wabt::Type::FuncRef;
    case ValCode::ExternRef: return wabt::Type::ExternRef;
  }
  usage_error("unknown value type code");
}

std::vector<ValCode> val_codes(const wi::ValueTypes& types) {
  std::vector<ValCode> codes;
  codes.reserve(types.size());
  for (wabt::Type type : types) codes.push_back(checked_val_code(type));
  return codes;
}

void describe_limits(const wabt::Limits& limits, ExternSignature& out) {
  out.min = limits.initial;
  // wabt fills in `max` for unbounded limits; only has_max says it was declared.
  if (limits.has_max) out.max = limits.max;
  out.is64 = limits.is_64;
  out.shared = limits.is_shared;
}

ExternSignature describe_extern(const wi::ExternType& type) {
  ExternSignature out;
  switch (type.kind) {
    case wabt::ExternalKind::Func: {
      const auto& func = static_cast<const wi::FuncType&>(type);
      out.kind = KindCode::Func;
      out.func = {val_codes(func.params), val_codes(func.results)};
      break;
    }
    case wabt::ExternalKind::Table: {
      const auto& table = static_cast<const wi::TableType&>(type);
      out.kind = KindCode::Table;
      out.value = checked_val_code(table.element);
      describe_limits(table.limits, out);
      break;
    }
    case wabt::ExternalKind::Memory: {
      out.kind = KindCode::Memory;
      describe_limits(static_cast<const wi::MemoryType&>(type).limits, out);
      break;
    }
    case wabt::ExternalKind::Global: {
      const auto& global = static_cast<const wi::GlobalType&>(type);
      out.kind = KindCode::Global;
      out.value = checked_val_code(global.type);
      out.mutable_global = global.mut == wi::Mutability::Var;
      break;
    }
    case wabt::ExternalKind::Tag: {
      out.kind = KindCode::Tag;
      out.func.params = val_codes(static_cast<const wi::TagType&>(type).signature);
      break;
    }
  }
  return out;
}

std::optional<KindCode> kind_of(const wi::Object& object) {
  switch (object.kind()) {
    case wi::ObjectKind::DefinedFunc:
    case wi::ObjectKind::HostFunc: return KindCode::Func;
    case wi::ObjectKind::Table: return KindCode::Table;
    case wi::ObjectKind::Memory: return KindCode::Memory;
    case wi::ObjectKind::Global: return KindCode::Global;
    case wi::ObjectKind::Tag: return KindCode::Tag;
    default: return std::nullopt;
  }
}

const char* kind_name(KindCode kind) {
  switch (kind) {
    case KindCode::Func: return "function";
    case KindCode::Table: return "table";
    case KindCode::Memory: return "memory";
    case KindCode::Global: return "global";
    case KindCode::Tag: return "tag";
  }
  return "extern";
}

//// Values ////

// Only numbers cross the interface; i32 and f32 share a union member's bits
// in wabt's Value, as do i64 and f64, so no float conversion is involved.
bool is_number(wabt::Type type) {
  return type == wabt::Type::I32 || type == wabt::Type::F32 || type == wabt::Type::I64 ||
         type == wabt::Type::F64;
}

wi::Value to_value(wabt::Type type, uint64_t bits) {
  if (type == wabt::Type::I32 || type == wabt::Type::F32) {
    return wi::Value::Make(static_cast<uint32_t>(bits));
  }
  return wi::Value::Make(bits);
}

uint64_t from_value(wabt::Type type, const wi::Value& value) {
  if (type == wabt::Type::I32 || type == wabt::Type::F32) return value.Get<uint32_t>();
  return value.Get<uint64_t>();
}

void require_numbers(const wi::FuncType& type, const char* what) {
  auto is_other = [](wabt::Type t) { return !is_number(t); };
  if (std::any_of(type.params.begin(), type.params.end(), is_other) ||
      std::any_of(type.results.begin(), type.results.end(), is_other)) {
    usage_error(std::string(what) + ": only i32, i64, f32 and f64 values cross the engine interface");
  }
}

//// Compiling ////

// wabt's interpreter reader decodes and validates in one pass; when it fails,
// a decode-only pass tells a malformed module from an invalid one.
bool decodes(const uint8_t* bytes, size_t size, const wabt::ReadBinaryOptions& options) {
  struct QuietDecoder : wabt::BinaryReaderNop {
    bool OnError(const wabt::Error&) override { return true; }  // don't print
  } decoder;
  return wabt::Succeeded(wabt::ReadBinary(bytes, size, &decoder, options));
}

}  // namespace

namespace {

constexpr uint64_t kPageBytes = 65536;

// The module's memories and tables checked against the caps as the store
// makes them, given what the store's memories and tables hold already (Trap
// naming the limit when one starts above them), each memory's maximum
// lowered to the cap on one memory. The totals are checked as memories and
// tables grow (instrument.hpp's guards and the host's grow_memory).
void apply_caps(wi::ModuleDesc& desc, const Caps& caps, uint64_t memory_bytes_in_use,
                uint64_t table_elements_in_use) {
  uint64_t bytes = memory_bytes_in_use;
  for (size_t i = 0; i < desc.memories.size(); ++i) {
    wabt::Limits& limits = desc.memories[i].type.limits;
    const uint64_t initial_bytes = limits.initial * kPageBytes;
    check_memory_start(caps, i, initial_bytes, bytes);
    bytes += initial_bytes;
    if (!caps.memory_bytes) continue;
    const uint64_t cap_pages = *caps.memory_bytes / kPageBytes;
    const uint64_t declared = limits.has_max ? limits.max : limits.is_64 ? uint64_t{1} << 48 : 65536;
    if (cap_pages < declared) {
      limits.max = cap_pages;
      limits.has_max = true;
    }
  }
  uint64_t elements = table_elements_in_use;
  for (size_t i = 0; i < desc.tables.size(); ++i) {
    check_table_start(caps, i, desc.tables[i].type.limits.initial, elements);
    elements += desc.tables[i].type.limits.initial;
  }
}

}  // namespace

namespace {

// Loads `bytes` into wabt, rewritten first when `what` asks for anything.
std::shared_ptr<CompiledCode> load(const uint8_t* original, size_t original_size, Instrumentation what) {
  const wabt::Features features = enabled_features();
  InstrumentedModule instrumented;
  const bool rewritten = what.meter || what.guard_growth;
  if (rewritten) instrumented = instrument(original, original_size, features, what);
  const uint8_t* bytes = rewritten ? instrumented.bytes.data() : original;
  const size_t size = rewritten ? instrumented.bytes.size() : original_size;

  auto code = std::make_shared<CompiledCode>();
  code->metered = what.meter;
  code->engine_imports = std::move(instrumented.imports);
  code->id = next_code_id.fetch_add(1, std::memory_order_relaxed);
  wabt::Errors errors;
  const wabt::ReadBinaryOptions options(features, nullptr, /*read_debug_names=*/false,
                                        /*stop_on_first_error=*/true,
                                        /*fail_on_custom_section_error=*/false);
  if (wabt::Failed(wi::ReadBinaryInterp("module", bytes, size, options, &errors, &code->desc))) {
    if (!rewritten && !decodes(bytes, size, options)) {
      throw Error(ErrorKind::Decode, "malformed core module: " + describe(errors));
    }
    throw Error(ErrorKind::Validate, "invalid core module: " + describe(errors));
  }
  return code;
}

}  // namespace

std::shared_ptr<const CompiledCode> CompiledCode::guarded() const {
  std::lock_guard lock(guarded_mutex_);
  if (!guarded_) {
    auto copy = load(original.data(), original.size(), {/*meter=*/false, /*guard_growth=*/true});
    copy->growth = growth;
    guarded_ = std::move(copy);
  }
  return guarded_;
}

CompiledModule compile(const uint8_t* original, size_t original_size, bool metered) {
  // Metered modules are rewritten anyway, growth guards included.
  const GrowthSites growth =
      metered ? GrowthSites{} : find_growth(original, original_size, enabled_features());
  std::shared_ptr<CompiledCode> code = load(original, original_size, {metered, /*guard_growth=*/metered});
  if (growth.any()) {
    code->growth = growth;
    code->original.assign(original, original + original_size);
  }

  CompiledModule out;
  const auto& imports = code->desc.imports;
  const size_t own_imports = imports.size() - code->engine_imports.size();
  for (size_t i = 0; i < own_imports; ++i) {
    const wi::ImportType& import = imports[i].type;
    out.imports.push_back({import.module, import.name, describe_extern(*import.type)});
  }
  for (const wi::ExportDesc& export_ : code->desc.exports) {
    out.exports.push_back({export_.type.name, describe_extern(*export_.type.type)});
  }
  out.code = std::move(code);
  return out;
}

namespace {

class WabtStore;

// A host function as registered with wabt: the adapter's entry point plus the
// types needed to convert values.
struct HostTarget {
  HostEntry entry;
  void* context;
  wi::FuncType type;
};

class ThreadCaller final : public CallerView {
 public:
  ThreadCaller(WabtStore& store, wi::Thread& thread) : store_(store), thread_(thread) {}
  std::optional<Handle> caller_export(std::string_view name) override;

 private:
  WabtStore& store_;
  wi::Thread& thread_;
};

class WabtStore final : public InterpStore {
 public:
  WabtStore(bool metered, std::shared_ptr<const std::atomic<uint64_t>> epoch)
      : store_(enabled_features()), meter_(std::move(epoch)) {
    if (metered) {
      fuel_ = wi::Global::New(store_, wi::GlobalType(wabt::Type::I64, wi::Mutability::Var),
                              wi::Value::Make(uint64_t{0}));
      refill_ = wi::HostFunc::New(store_, wi::FuncType({}, {}),
                                  [this](wi::Thread&, const wi::Values&, wi::Values&, wi::Trap::Ptr* trap) {
                                    try {
                                      fuel_->UnsafeSet(wi::Value::Make(meter_.next_slice()));
                                      return wabt::Result::Ok;
                                    } catch (const Error& error) {
                                      *trap = wi::Trap::New(store_, error.what());
                                      return wabt::Result::Error;
                                    }
                                  });
    }
  }

  std::vector<Handle> instantiate(const CompiledCode& code, const Handle* imports, size_t count) override;
  Handle host_func(const Signature& signature, HostEntry entry, void* context) override;
  ExternSignature extern_signature(Handle handle) const override;
  void call(Handle func, const uint64_t* args, size_t arg_count, uint64_t* results,
            size_t result_count) override;
  std::unique_ptr<PreparedFunc> prepare(Handle func) override;
  // Calls a resolved function whose types are numbers.
  void invoke(wi::Func& func, const uint64_t* args, size_t arg_count, uint64_t* results, size_t result_count);
  MemoryView memory(Handle memory) override;
  std::optional<uint64_t> grow_memory(Handle memory, uint64_t pages) override;
  uint64_t global_get(Handle global) const override;
  void global_set(Handle global, uint64_t bits) override;
  std::optional<Handle> table_func(Handle table, uint64_t index) override;
  void* new_stack() override { return new StackState(); }
  void delete_stack(void* stack) override { delete static_cast<StackState*>(stack); }
  void* switch_stack(void* stack) override {
    StackState* previous = stack_;
    stack_ = stack ? static_cast<StackState*>(stack) : &main_stack_;
    return previous == &main_stack_ ? nullptr : previous;
  }

  // Records an extern a handle may name and returns that handle.
  Handle remember(wi::Ref ref);
  wi::Store& wabt_store() { return store_; }

  void set_caps(const Caps& caps) override {
    caps_ = caps;
    refresh_unguarded_room();
  }
  void set_fuel(std::optional<uint64_t> units) override {
    require_metered("set_fuel");
    meter_.set_fuel(units);
    fuel_->UnsafeSet(wi::Value::Make(int64_t{0}));  // the next unit asks for a slice
  }
  std::optional<uint64_t> fuel() const override {
    require_metered("fuel");
    return meter_.fuel(fuel_->UnsafeGet<int64_t>());
  }
  void set_epoch_deadline(uint64_t epoch) override {
    require_metered("set_epoch_deadline");
    meter_.set_deadline(epoch);
  }
  bool deadline_passed() const override { return fuel_ && meter_.deadline_passed(); }

 private:
  // One level of host -> wasm nesting: its Thread and argument buffers.
  struct CallContext {
    explicit CallContext(wi::Store& store) : thread(store) {}
    wi::Thread thread;
    wi::Values params;
    wi::Values results;
  };

  // The calls nested on one native stack: a Thread per level.
  struct StackState {
    std::vector<std::unique_ptr<CallContext>> contexts;  // by nesting depth
    unsigned depth = 0;
  };

  // Marks a call from the host as running: bounds nesting, and refuels when
  // the call is the outermost one of its stack.
  class Nesting {
   public:
    explicit Nesting(WabtStore& store);
    ~Nesting() {
      --store_.total_depth_;
      if (--stack_.depth == 0 && stack_.contexts.size() > kThreadsKept) stack_.contexts.resize(kThreadsKept);
    }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    unsigned depth() const { return depth_; }
    StackState& stack() { return stack_; }

   private:
    WabtStore& store_;
    StackState& stack_;
    unsigned depth_;
  };

  wi::Extern& resolve(Handle handle) const;
  template <typename T>
  T& resolve_as(Handle handle, KindCode kind) const;
  wi::Module::Ptr module_for(const CompiledCode& code, const Caps& caps);
  CallContext& context_at(StackState& stack, unsigned depth);
  wabt::Result run_host(const HostTarget& target, wi::Thread& thread, const wi::Values& params,
                        wi::Values& results, wi::Trap::Ptr* trap);
  [[noreturn]] void fail(const wi::Trap::Ptr& trap, bool outermost);
  void require_metered(const char* what) const {
    if (!fuel_) usage_error(std::string(what) + ": the engine does not meter guest code (EngineConfig::metering)");
  }
  // What the store's memories and tables hold now.
  template <typename Object, typename Size>
  uint64_t sum_over(const wi::RefVec& (wi::Instance::*objects)() const, Size size);
  uint64_t memory_bytes_in_use();
  uint64_t table_elements_in_use();
  // Grows a memory by `pages` within the store's caps: the old size in
  // pages, or nullopt when refused.
  std::optional<uint64_t> grow_within_caps(wi::Memory& memory, uint64_t pages);
  // Sets the maximum of the one memory unguarded code grows to what the
  // store's limits leave it now.
  void refresh_unguarded_room();
  // What the store gives an instrumented module for one of its engine imports.
  wi::Ref engine_import(EngineImport import);

  // Declared first so it is destroyed last: the roots and Threads below
  // unregister themselves from it.
  wi::Store store_;
  Meter meter_;
  wi::Global::Ptr fuel_;      // metered stores: the slice counter the modules import
  wi::HostFunc::Ptr refill_;  // metered stores: what the modules call when a slice is spent
  wi::HostFunc::Ptr growth_guards_[6];  // by EngineImport, made when a module first needs one
  wi::Memory* unguarded_memory_ = nullptr;  // the one memory code without growth guards grows
  uint64_t unguarded_max_pages_ = 0;        // its own maximum, the store's per-memory cap applied
  Caps caps_;
  // The store's copy of each module (by CompiledCode::id), with the memory
  // and table maxima it was made with.
  struct CappedModule {
    std::vector<uint64_t> maxima;
    wi::Module::Ptr module;
  };
  std::unordered_map<uint64_t, CappedModule> modules_;
  // Roots for everything a handle can name (exports are reachable from their
  // instance), so a collection never frees it.
  std::vector<wi::Instance::Ptr> instances_;
  std::vector<wi::HostFunc::Ptr> host_funcs_;
  std::vector<wi::Extern*> externs_;                    // by object index; null where no handle was given
  StackState main_stack_;
  StackState* stack_ = &main_stack_;  // the native stack running now
  unsigned total_depth_ = 0;          // calls in progress on every stack
  std::exception_ptr host_exception_;  // a non-cmhost exception on its way out
  unsigned failures_since_collection_ = 0;
};

std::optional<Handle> ThreadCaller::caller_export(std::string_view name) {
  wi::Instance* instance = thread_.GetCallerInstance();
  if (!instance) return std::nullopt;
  wi::Store& store = store_.wabt_store();
  const auto& export_types = store.UnsafeGet<wi::Module>(instance->module())->export_types();
  for (size_t i = 0; i < export_types.size(); ++i) {
    if (export_types[i].name == name) return store_.remember(instance->exports()[i]);
  }
  return std::nullopt;
}

WabtStore::Nesting::Nesting(WabtStore& store) : store_(store), stack_(*store.stack_), depth_(stack_.depth) {
  if (depth_ >= kMaxCallNesting) {
    throw Error(ErrorKind::Trap, "call stack exhausted: host and wasm calls nested more than " +
                                     std::to_string(kMaxCallNesting) + " deep");
  }
  ++stack_.depth;
  ++store.total_depth_;
}

Handle WabtStore::remember(wi::Ref ref) {
  if (ref.index > std::numeric_limits<uint32_t>::max()) {
    throw Error(ErrorKind::Usage, "store holds too many objects");
  }
  wi::Extern* object = store_.UnsafeGet<wi::Extern>(ref).get();
  if (ref.index >= externs_.size()) externs_.resize(ref.index + 1, nullptr);
  externs_[ref.index] = object;
  return {*kind_of(*object), static_cast<uint32_t>(ref.index)};
}

wi::Extern& WabtStore::resolve(Handle handle) const {
  wi::Extern* object = handle.id < externs_.size() ? externs_[handle.id] : nullptr;
  if (!object || kind_of(*object) != handle.kind) {
    usage_error(std::string("no ") + kind_name(handle.kind) + " with id " + std::to_string(handle.id) +
                " in this store");
  }
  return *object;
}

template <typename T>
T& WabtStore::resolve_as(Handle handle, KindCode kind) const {
  if (handle.kind != kind) {
    usage_error(std::string("expected a ") + kind_name(kind) + ", got a " + kind_name(handle.kind));
  }
  return *wabt::cast<T>(&resolve(handle));
}

wi::Module::Ptr WabtStore::module_for(const CompiledCode& code, const Caps& caps) {
  if (!caps.any()) {
    // The descriptors' own limits: nothing to copy.
    auto found = modules_.find(code.id);
    if (found != modules_.end() && found->second.maxima.empty()) return found->second.module;
    wi::Module::Ptr module = wi::Module::New(store_, code.desc);
    modules_[code.id] = {{}, module};
    return module;
  }
  // Only the limits differ between copies: make one when they change.
  wi::ModuleDesc probe;
  probe.memories = code.desc.memories;
  probe.tables = code.desc.tables;
  apply_caps(probe, caps, memory_bytes_in_use(), table_elements_in_use());
  std::vector<uint64_t> maxima{1};  // never empty: marks a capped copy
  for (const auto& memory : probe.memories) maxima.push_back(memory.type.limits.has_max ? memory.type.limits.max : ~0ull);
  auto found = modules_.find(code.id);
  if (found != modules_.end() && found->second.maxima == maxima) return found->second.module;
  wi::ModuleDesc desc = code.desc;
  desc.memories = std::move(probe.memories);
  wi::Module::Ptr module = wi::Module::New(store_, desc);
  modules_[code.id] = {std::move(maxima), module};
  return module;
}

template <typename Object, typename Size>
uint64_t WabtStore::sum_over(const wi::RefVec& (wi::Instance::*objects)() const, Size size) {
  std::vector<Object*> seen;
  uint64_t total = 0;
  for (const wi::Instance::Ptr& instance : instances_) {
    for (wi::Ref ref : ((*instance).*objects)()) {
      auto* object = store_.UnsafeGet<Object>(ref).get();
      if (std::find(seen.begin(), seen.end(), object) != seen.end()) continue;  // imported: counted once
      seen.push_back(object);
      total += size(*object);
    }
  }
  return total;
}

uint64_t WabtStore::memory_bytes_in_use() {
  return sum_over<wi::Memory>(&wi::Instance::memories, [](wi::Memory& memory) { return memory.ByteSize(); });
}

uint64_t WabtStore::table_elements_in_use() {
  return sum_over<wi::Table>(&wi::Instance::tables, [](wi::Table& table) { return uint64_t{table.size()}; });
}

wi::Ref WabtStore::engine_import(EngineImport import) {
  switch (import) {
    case EngineImport::Refill: return refill_.ref();
    case EngineImport::Fuel: return fuel_.ref();
    default: break;
  }
  wi::HostFunc::Ptr& guard = growth_guards_[static_cast<size_t>(import)];
  if (guard) return guard.ref();
  const bool memory = import == EngineImport::MemoryGrow32 || import == EngineImport::MemoryGrow64;
  const bool is64 = import == EngineImport::MemoryGrow64;
  const wabt::Type element = import == EngineImport::TableGrowExternref ? wabt::Type::ExternRef : wabt::Type::FuncRef;
  wi::FuncType type = memory ? wi::FuncType({is64 ? wabt::Type::I64 : wabt::Type::I32, wabt::Type::I32},
                                            {is64 ? wabt::Type::I64 : wabt::Type::I32})
                             : wi::FuncType({element, wabt::Type::I32, wabt::Type::I32}, {wabt::Type::I32});
  guard = wi::HostFunc::New(store_, std::move(type),
                            [this, memory, is64](wi::Thread& thread, const wi::Values& params, wi::Values& results,
                                                 wi::Trap::Ptr* trap) {
                              wi::Instance* caller = thread.GetCallerInstance();
                              if (!caller) {  // only rewritten code imports the guards
                                *trap = wi::Trap::New(store_, "growth guard called from outside wasm");
                                return wabt::Result::Error;
                              }
                              if (memory) {
                                const uint64_t delta = is64 ? params[0].Get<uint64_t>() : params[0].Get<uint32_t>();
                                auto& grown = *store_.UnsafeGet<wi::Memory>(caller->memories()[params[1].Get<uint32_t>()]);
                                const std::optional<uint64_t> old = grow_within_caps(grown, delta);
                                results[0] = is64 ? wi::Value::Make(old.value_or(~uint64_t{0}))
                                                  : wi::Value::Make(static_cast<uint32_t>(old.value_or(~uint64_t{0})));
                              } else {
                                auto& grown = *store_.UnsafeGet<wi::Table>(caller->tables()[params[2].Get<uint32_t>()]);
                                const uint32_t delta = params[1].Get<uint32_t>();
                                const uint32_t old = grown.size();
                                const bool allowed = table_growth_allowed(caps_, delta, table_elements_in_use()) &&
                                                     wabt::Succeeded(grown.Grow(store_, delta, params[0].Get<wi::Ref>()));
                                results[0] = wi::Value::Make(allowed ? old : ~uint32_t{0});
                              }
                              return wabt::Result::Ok;
                            });
  return guard.ref();
}

std::optional<uint64_t> WabtStore::grow_within_caps(wi::Memory& memory, uint64_t pages) {
  const uint64_t old_pages = memory.PageSize();
  // wabt multiplies pages by 64 KiB unchecked and resizes a vector: refuse
  // what cannot be represented rather than let it wrap or throw midway.
  const uint64_t max_pages = std::vector<uint8_t>().max_size() / kPageBytes;
  if (pages > max_pages || old_pages > max_pages - pages) return std::nullopt;
  if (caps_.any() && !memory_growth_allowed(caps_, old_pages * kPageBytes, pages * kPageBytes, memory_bytes_in_use()))
    return std::nullopt;
  try {
    if (wabt::Failed(memory.Grow(pages))) return std::nullopt;
  } catch (const std::bad_alloc&) {
    // wabt has already counted the new pages by then (memory.size reports
    // them, accesses stay bounded by the real bytes); nothing can undo that.
    return std::nullopt;
  }
  if (&memory != unguarded_memory_) refresh_unguarded_room();
  return old_pages;
}

WabtStore::CallContext& WabtStore::context_at(StackState& stack, unsigned depth) {
  auto& contexts = stack.contexts;
  if (depth >= contexts.size()) contexts.resize(depth + 1);
  if (!contexts[depth]) contexts[depth] = std::make_unique<CallContext>(store_);
  return *contexts[depth];
}

void WabtStore::fail(const wi::Trap::Ptr& trap, bool outermost) {
  std::string message = trap ? trap->message() : "wasm execution failed";
  // Only between outermost calls: no wabt frame is live then.
  if (++failures_since_collection_ >= kFailuresBetweenCollections && outermost) {
    failures_since_collection_ = 0;
    store_.Collect();
  }
  if (host_exception_) std::rethrow_exception(std::exchange(host_exception_, nullptr));
  throw Error(ErrorKind::Trap, message);
}

std::vector<Handle> WabtStore::instantiate(const CompiledCode& given, const Handle* imports, size_t count) {
  if (given.metered != static_cast<bool>(fuel_)) {
    usage_error("module and store disagree on metering (compiled by another engine?)");
  }
  // Code that grows one memory, the only one the store's unguarded code
  // grows, runs as it is: that memory's maximum follows what the store's
  // total leaves (refresh_unguarded_room), which bounds it exactly. Code
  // that grows tables or another memory takes its guarded copy.
  const CompiledCode* chosen = &given;
  std::shared_ptr<const CompiledCode> guarded;
  std::optional<uint32_t> unguarded_index;  // the memory it grows, if it runs as it is
  if (given.growth.any()) {
    bool as_it_is = !given.growth.tables && given.growth.memories.size() == 1;
    if (as_it_is) {
      const uint32_t grown = given.growth.memories.front();
      uint32_t memory_imports = 0;
      for (size_t i = 0; i < given.desc.imports.size() && i < count; ++i) {
        if (given.desc.imports[i].type.type->kind != wi::ExternKind::Memory) continue;
        if (memory_imports++ == grown)
          // Anything but a memory is left to the link check below to name.
          as_it_is = imports[i].kind == KindCode::Memory &&
                     (!unguarded_memory_ || unguarded_memory_ == &resolve_as<wi::Memory>(imports[i], KindCode::Memory));
      }
      if (grown >= memory_imports) as_it_is = !unguarded_memory_;  // one it defines
      if (as_it_is) unguarded_index = grown;
    }
    if (!as_it_is) {
      guarded = given.guarded();
      chosen = guarded.get();
    }
  }
  const CompiledCode& code = *chosen;
  wi::Module::Ptr module = module_for(code, caps_);
  const auto& import_types = module->import_types();
  const size_t own_imports = import_types.size() - code.engine_imports.size();
  if (count != own_imports) {
    throw Error(ErrorKind::Link, "module has " + std::to_string(own_imports) + " imports, " +
                                     std::to_string(count) + " given");
  }

  wi::RefVec refs;
  refs.reserve(import_types.size());
  for (size_t i = 0; i < count; ++i) {
    const wi::ImportType& import = import_types[i];
    wi::Extern& provided = resolve(imports[i]);
    wi::Trap::Ptr mismatch;
    if (wabt::Failed(provided.Match(store_, import, &mismatch))) {
      throw Error(ErrorKind::Link, "import \"" + import.module + "\" \"" + import.name +
                                       "\": " + (mismatch ? mismatch->message() : "type mismatch"));
    }
    refs.push_back(provided.self());
  }
  for (EngineImport import : code.engine_imports) refs.push_back(engine_import(import));

  wi::Instance::Ptr instance;
  wi::Trap::Ptr trap;
  {
    Nesting nesting(*this);
    try {
      instance = wi::Instance::Instantiate(store_, module.ref(), refs, &trap);
    } catch (const std::exception& e) {  // wabt allocating a memory or table
      throw Error(ErrorKind::Trap, std::string("instantiation failed: ") + e.what());
    }
  }
  if (!instance || trap) fail(trap, total_depth_ == 0);  // trap alone: see call()

  instances_.push_back(instance);
  if (unguarded_index && !unguarded_memory_) {
    unguarded_memory_ = store_.UnsafeGet<wi::Memory>(instance->memories()[*unguarded_index]).get();
    const wabt::Limits& limits = unguarded_memory_->type().limits;
    unguarded_max_pages_ = limits.has_max ? limits.max : limits.is_64 ? uint64_t{1} << 48 : 65536;
  }
  refresh_unguarded_room();  // the new memories took some of it
  std::vector<Handle> exports;
  exports.reserve(instance->exports().size());
  for (wi::Ref ref : instance->exports()) exports.push_back(remember(ref));
  return exports;
}

Handle WabtStore::host_func(const Signature& signature, HostEntry entry, void* context) {
  wi::ValueTypes params;
  wi::ValueTypes results;
  for (ValCode code : signature.params) params.push_back(wabt_type(code));
  for (ValCode code : signature.results) results.push_back(wabt_type(code));
  wi::FuncType type(params, results);
  require_numbers(type, "host function");

  auto target = std::make_shared<const HostTarget>(HostTarget{entry, context, type});
  wi::HostFunc::Ptr func = wi::HostFunc::New(
      store_, type,
      [this, target](wi::Thread& thread, const wi::Values& params, wi::Values& results, wi::Trap::Ptr* trap) {
        return run_host(*target, thread, params, results, trap);
      });
  host_funcs_.push_back(func);
  return remember(func.ref());
}

wabt::Result WabtStore::run_host(const HostTarget& target, wi::Thread& thread, const wi::Values& params,
                                 wi::Values& results, wi::Trap::Ptr* trap) {
  try {
    // Most signatures are short: keep their values on the stack.
    constexpr size_t kInline = 16;
    const size_t param_count = target.type.params.size();
    const size_t result_count = target.type.results.size();
    uint64_t inline_bits[kInline];
    std::vector<uint64_t> heap_bits;
    uint64_t* bits = inline_bits;
    if (param_count + result_count > kInline) {
      heap_bits.resize(param_count + result_count);
      bits = heap_bits.data();
    }
    uint64_t* param_bits = bits;
    uint64_t* result_bits = bits + param_count;
    for (size_t i = 0; i < param_count; ++i) param_bits[i] = from_value(target.type.params[i], params[i]);
    std::fill(result_bits, result_bits + result_count, 0);
    results.resize(result_count);

    ThreadCaller caller(*this, thread);
    target.entry(target.context, caller, param_bits, result_bits);

    for (size_t i = 0; i < result_count; ++i) results[i] = to_value(target.type.results[i], result_bits[i]);
    return wabt::Result::Ok;
  } catch (const Error& error) {
    *trap = wi::Trap::New(store_, error.what());
  } catch (...) {
    // Not ours to translate: unwind the wasm code with a trap and rethrow the
    // original from the call that entered it.
    host_exception_ = std::current_exception();
    *trap = wi::Trap::New(store_, "host function threw an exception");
  }
  return wabt::Result::Error;
}

ExternSignature WabtStore::extern_signature(Handle handle) const {
  return describe_extern(resolve(handle).extern_type());
}

void WabtStore::call(Handle handle, const uint64_t* args, size_t arg_count, uint64_t* results,
                     size_t result_count) {
  wi::Func& func = resolve_as<wi::Func>(handle, KindCode::Func);
  require_numbers(func.type(), "call");
  invoke(func, args, arg_count, results, result_count);
}

namespace {

class PreparedInterpFunc final : public PreparedFunc {
 public:
  PreparedInterpFunc(WabtStore& store, wi::Func& func) : store_(store), func_(func) {}
  void call(const uint64_t* args, size_t arg_count, uint64_t* results, size_t result_count) override {
    store_.invoke(func_, args, arg_count, results, result_count);
  }

 private:
  WabtStore& store_;
  wi::Func& func_;  // remembered by the store (a handle names it), so never collected
};

}  // namespace

std::unique_ptr<PreparedFunc> WabtStore::prepare(Handle handle) {
  wi::Func& func = resolve_as<wi::Func>(handle, KindCode::Func);
  require_numbers(func.type(), "call");
  return std::make_unique<PreparedInterpFunc>(*this, func);
}

void WabtStore::invoke(wi::Func& func, const uint64_t* args, size_t arg_count, uint64_t* results,
                       size_t result_count) {
  const wi::FuncType& type = func.type();
  if (arg_count != type.params.size() || result_count != type.results.size()) {
    usage_error("function takes " + std::to_string(type.params.size()) + " arguments and " +
                std::to_string(type.results.size()) + " results; called with " + std::to_string(arg_count) +
                " and " + std::to_string(result_count));
  }

  Nesting nesting(*this);
  CallContext& context = context_at(nesting.stack(), nesting.depth());
  context.params.resize(arg_count);
  for (size_t i = 0; i < arg_count; ++i) context.params[i] = to_value(type.params[i], args[i]);
  context.results.resize(result_count);  // wabt hands this vector to host functions as is

  wi::Trap::Ptr trap;
  wabt::Result result;
  try {
    result = func.Call(context.thread, context.params, context.results, &trap);
  } catch (const std::exception& e) {  // wabt failing to allocate, e.g. in memory.grow
    nesting.stack().contexts[nesting.depth()].reset();
    throw Error(ErrorKind::Trap, std::string("wasm execution failed: ") + e.what());
  }
  // A trap despite success: wabt 1.0.32's call_indirect reports "call stack
  // exhausted" this way, then carries on as if the call had returned.
  if (wabt::Failed(result) || trap) {
    // The Thread still holds the trapped frames; the next call gets a new one.
    nesting.stack().contexts[nesting.depth()].reset();
    fail(trap, total_depth_ == 1);
  }
  for (size_t i = 0; i < result_count; ++i) results[i] = from_value(type.results[i], context.results[i]);
}

MemoryView WabtStore::memory(Handle handle) {
  auto& memory = resolve_as<wi::Memory>(handle, KindCode::Memory);
  return {memory.UnsafeData(), memory.ByteSize()};
}

std::optional<uint64_t> WabtStore::grow_memory(Handle handle, uint64_t pages) {
  return grow_within_caps(resolve_as<wi::Memory>(handle, KindCode::Memory), pages);
}

void WabtStore::refresh_unguarded_room() {
  if (!unguarded_memory_) return;
  uint64_t pages = unguarded_max_pages_;
  if (caps_.total_memory_bytes) {
    const uint64_t in_use = memory_bytes_in_use();
    const uint64_t left = *caps_.total_memory_bytes - std::min(in_use, *caps_.total_memory_bytes);
    pages = std::min(pages, unguarded_memory_->PageSize() + left / kPageBytes);
  }
  // wabt reads the maximum at each memory.grow; nothing else of the memory
  // depends on it.
  wabt::Limits& limits = const_cast<wi::MemoryType&>(unguarded_memory_->type()).limits;
  limits.max = pages;
  limits.has_max = true;
}

uint64_t WabtStore::global_get(Handle handle) const {
  auto& global = resolve_as<wi::Global>(handle, KindCode::Global);
  const wabt::Type type = global.type().type;
  if (!is_number(type)) usage_error("global_get: only numeric globals cross the engine interface");
  return from_value(type, global.Get());
}

void WabtStore::global_set(Handle handle, uint64_t bits) {
  auto& global = resolve_as<wi::Global>(handle, KindCode::Global);
  const wabt::Type type = global.type().type;
  if (global.type().mut != wi::Mutability::Var) usage_error("global_set: the global is immutable");
  if (!is_number(type)) usage_error("global_set: only numeric globals cross the engine interface");
  global.UnsafeSet(to_value(type, bits));
}

std::optional<Handle> WabtStore::table_func(Handle handle, uint64_t index) {
  auto& table = resolve_as<wi::Table>(handle, KindCode::Table);
  if (table.type().element != wabt::Type::FuncRef) usage_error("table_func: not a table of funcref");
  if (index >= table.size()) return std::nullopt;
  wi::Ref ref;
  if (wabt::Failed(table.Get(static_cast<uint32_t>(index), &ref)) || ref == wi::Ref::Null) return std::nullopt;
  return remember(ref);
}

}  // namespace

std::unique_ptr<InterpStore> InterpStore::create(bool metered, std::shared_ptr<const std::atomic<uint64_t>> epoch) {
  return std::make_unique<WabtStore>(metered, std::move(epoch));
}

}  // namespace cmhost::engine::wabt_backend
