// engine.hpp on ahead-of-time artifacts. A store holds its objects (the
// functions, memories, tables and globals handles name) in one table; a
// function is its code, the context it is called with and its signature's
// invoker, so a call from the host is one trap-guarded indirect call.
#include "aot_engine.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "../caps.hpp"
#include "../metering/meter.hpp"
#include "artifact.hpp"
#include "cmhost/error.hpp"
#include "rt.h"
#include "shape.hpp"
#include "tiers.hpp"

namespace cmhost::engine {
namespace {


// As the interpreter: host -> wasm -> host nesting on one native stack.
constexpr unsigned kMaxCallNesting = 128;
constexpr char kFuelModule[] = "cmhost:engine";

[[noreturn]] void usage_error(const std::string& message) { throw Error(ErrorKind::Usage, message); }

CoreType core_type(char letter) {
  switch (letter) {
    case 'i': return CoreType::I32;
    case 'I': return CoreType::I64;
    case 'f': return CoreType::F32;
    case 'F': return CoreType::F64;
    case 'r': return CoreType::FuncRef;
    case 'e': return CoreType::ExternRef;
  }
  usage_error(std::string("artifact names an unknown value type `") + letter + "`");
}

int rt_code(CoreType type) {
  switch (type) {
    case CoreType::I32: return WASM_RT_I32;
    case CoreType::I64: return WASM_RT_I64;
    case CoreType::F32: return WASM_RT_F32;
    case CoreType::F64: return WASM_RT_F64;
    case CoreType::FuncRef: return WASM_RT_FUNCREF;
    case CoreType::ExternRef: return WASM_RT_EXTERNREF;
    default: break;
  }
  return -1;
}

FuncType func_type_of(const aot::ShapeFuncType& t) {
  FuncType type;
  for (char c : t.params) type.params.push_back(core_type(c));
  for (char c : t.results) type.results.push_back(core_type(c));
  return type;
}

bool numeric(const FuncType& type) {
  for (const auto* list : {&type.params, &type.results})
    for (CoreType t : *list)
      if (t == CoreType::FuncRef || t == CoreType::ExternRef || t == CoreType::V128) return false;
  return true;
}

ExternType extern_type_of(const aot::ModuleShape& shape, const aot::ShapeExtern& e) {
  ExternType type;
  switch (e.kind) {
    case 'f': type.kind = ExternKind::Func; break;
    case 't': type.kind = ExternKind::Table; break;
    case 'm': type.kind = ExternKind::Memory; break;
    case 'g': type.kind = ExternKind::Global; break;
    default: type.kind = ExternKind::Tag; break;
  }
  if (e.kind == 'f' || e.kind == 'x') type.func = func_type_of(shape.types.at(e.type_index));
  type.limits = {e.min, e.max, false, e.shared};
  if (e.kind == 'g' || e.kind == 't') type.value = core_type(e.value);
  type.mutable_global = e.mutable_global;
  return type;
}

// Every function type of every loaded module, by the id funcrefs carry:
// how the host calls a function it finds in a table.
struct RegisteredType {
  FuncType type;
  cmhost_aot_invoker invoke = nullptr;
};
std::mutex registry_lock;
std::unordered_map<uint32_t, RegisteredType>& registry() {
  static std::unordered_map<uint32_t, RegisteredType> types;
  return types;
}

class AotModule final : public Module {
 public:
  AotModule(const cmhost_aot_module& table, bool metered) : table_(table) {
    shape_ = aot::ModuleShape::parse(table.shape);
    if (shape_.types.size() != table.signature_count) usage_error("artifact module disagrees with its description");
    size_t own = shape_.imports.size();
    if (metered) {  // refill, then the slice counter
      if (own < 2 || shape_.imports[own - 1].module != kFuelModule || shape_.imports[own - 2].module != kFuelModule)
        usage_error("artifact module lacks the metering imports");
      own -= 2;
    }
    for (size_t i = 0; i < own; ++i) {
      const auto& import = shape_.imports[i];
      imports_.push_back({import.module, import.name, extern_type_of(shape_, import.type)});
    }
    auto exports = std::make_shared<std::vector<ExportDesc>>();
    for (const auto& export_ : shape_.exports) exports->push_back({export_.name, extern_type_of(shape_, export_.type)});
    exports_ = std::move(exports);
    for (const auto& t : shape_.types) types_.push_back(func_type_of(t));
    table.init_module();
    std::lock_guard lock(registry_lock);
    for (size_t k = 0; k < types_.size(); ++k) {
      std::vector<int> codes;
      for (const auto* list : {&types_[k].params, &types_[k].results})
        for (CoreType t : *list) codes.push_back(rt_code(t));
      const uint32_t id = cmhost_rt_type_id(static_cast<uint32_t>(types_[k].params.size()),
                                            static_cast<uint32_t>(types_[k].results.size()), codes.data());
      auto& entry = registry()[id];
      entry.type = types_[k];
      if (!entry.invoke) entry.invoke = table.signatures[k].invoke;
    }
  }

  const std::vector<ImportDesc>& imports() const override { return imports_; }
  const std::vector<ExportDesc>& exports() const override { return *exports_; }
  // Instances keep these: a module may go before its instances.
  const std::shared_ptr<const std::vector<ExportDesc>>& shared_exports() const { return exports_; }
  const cmhost_aot_module& table() const { return table_; }
  const aot::ModuleShape& shape() const { return shape_; }
  const FuncType& type(uint32_t index) const { return types_.at(index); }
  bool metered() const { return imports_.size() != shape_.imports.size(); }

  // A memory or table that starts above the store's caps, checked where
  // the interpreter checks it: before instantiation.
  void check_caps(const StoreCaps& caps, uint64_t memory_bytes_in_use, uint64_t table_elements_in_use) const {
    size_t memory = 0, table = 0;
    uint64_t bytes = memory_bytes_in_use, elements = table_elements_in_use;
    for (const auto& d : shape_.definitions) {
      if (d.kind == 'm') {
        check_memory_start(caps, memory++, d.min * 65536, bytes);
        bytes += d.min * 65536;
      } else if (d.kind == 't') {
        check_table_start(caps, table++, d.min, elements);
        elements += d.min;
      }
    }
  }

 private:
  const cmhost_aot_module& table_;
  aot::ModuleShape shape_;
  std::vector<ImportDesc> imports_;
  std::shared_ptr<const std::vector<ExportDesc>> exports_;
  std::vector<FuncType> types_;
};

class AotArtifact final : public Artifact {
 public:
  AotArtifact(const aot::LoadedArtifact& loaded, const EngineConfig& config) {
    for (uint32_t i = 0; i < loaded.table->module_count; ++i) {
      modules_.push_back(std::make_shared<AotModule>(*loaded.table->modules[i], config.metering));
    }
  }
  size_t module_count() const override { return modules_.size(); }
  std::shared_ptr<Module> module(size_t index) const override {
    return index < modules_.size() ? modules_[index] : nullptr;
  }
  // Baseline code standing in while the optimized artifact at `path` is built.
  void replaced_by(std::string path) { optimized_path_ = std::move(path); }
  std::function<bool()> faster_code_check() const override {
    if (optimized_path_.empty()) return nullptr;
    return [path = optimized_path_] { return access(path.c_str(), F_OK) == 0; };
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::string optimized_path_;
};

class AotStore;

// Which store made each memory and table, for rt.c's growth hook: guest code
// grows them in place, knowing nothing of stores. Stores of any thread
// register here; growth is rare, so one lock serves.
class GrowthOwners {
 public:
  static void add(const void* object, const AotStore* store) {
    std::lock_guard lock(mutex());
    owners()[object] = store;
  }
  static void remove(const void* object) {
    std::lock_guard lock(mutex());
    owners().erase(object);
  }
  static int allowed(const void* object, int is_table, uint64_t delta);

 private:
  static std::mutex& mutex() {
    static std::mutex instance;
    return instance;
  }
  static std::unordered_map<const void*, const AotStore*>& owners() {
    static std::unordered_map<const void*, const AotStore*> instance;
    return instance;
  }
};

// A host function, and what its callers see of it.
struct HostBinding {
  AotStore* store;
  HostFunc func;
  FuncType type;
};

// A host function as one instance imports it: rt.c calls `entry` with this
// binding, and the caller's exports are those of `caller`.
struct ImportedHost {
  cmhost_rt_host_entry entry;  // first: rt.c reads it through the binding pointer
  HostBinding* host;
  size_t caller;  // the importing instance's index in its store
};

struct Object {
  ExternKind kind = ExternKind::Func;
  // Functions: code called with context (null code: a host function).
  void* code = nullptr;
  void* context = nullptr;
  cmhost_aot_invoker invoke = nullptr;
  HostBinding* host = nullptr;
  FuncType type;
  // Memories, tables, globals: the object itself.
  void* pointer = nullptr;
  ExternType declared;  // tables, memories, globals: as their exporter declared them
};

struct InstanceRecord {
  const cmhost_aot_module* table;  // in its artifact, loaded for good
  void* block;
  std::map<std::string, Extern, std::less<>> exports;
};

class AotInstance final : public Instance {
 public:
  AotInstance(std::shared_ptr<const std::vector<ExportDesc>> exports, std::vector<Extern> externs)
      : exports_(std::move(exports)), externs_(std::move(externs)) {}
  std::optional<Extern> get_export(std::string_view name) const override {
    for (size_t i = 0; i < exports_->size(); ++i)
      if ((*exports_)[i].name == name) return externs_[i];
    return std::nullopt;
  }
  const std::vector<ExportDesc>& exports() const override { return *exports_; }

 private:
  std::shared_ptr<const std::vector<ExportDesc>> exports_;
  std::vector<Extern> externs_;
};

class AotCaller final : public Caller {
 public:
  AotCaller(Store& store, const InstanceRecord* caller) : store_(store), caller_(caller) {}
  Store& store() override { return store_; }
  std::optional<Extern> caller_export(std::string_view name) override {
    if (!caller_) return std::nullopt;
    auto found = caller_->exports.find(name);
    if (found == caller_->exports.end()) return std::nullopt;
    return found->second;
  }

 private:
  Store& store_;
  const InstanceRecord* caller_;
};

class AotStore final : public Store {
 public:
  AotStore(const EngineConfig& config, std::shared_ptr<const std::atomic<uint64_t>> epoch)
      : config_(config), meter_(std::move(epoch)) {
    cmhost_rt_enter_thread();
    if (metered_) {
      refill_ = &hosts_.emplace_back(HostBinding{this, [this](engine::Caller&, std::span<const uint64_t>, std::span<uint64_t>) {
                                                   fuel_ = meter_.next_slice();
                                                 },
                                                 FuncType{}});
    }
  }

  ~AotStore() override {
    for (const void* memory : memories_) GrowthOwners::remove(memory);
    for (const void* table : tables_) GrowthOwners::remove(table);
    // An engine that pools lets its instances' memories serve the next ones.
    cmhost_rt_pool_frees(config_.pooling.memory_slots ? std::max<uint64_t>(config_.pooling.max_memory_bytes, 1) : 0);
    for (auto it = instances_.rbegin(); it != instances_.rend(); ++it) {
      it->table->free_instance(it->block);
      std::free(it->block);
    }
    cmhost_rt_pool_frees(0);
  }

  std::shared_ptr<Instance> instantiate(const Module& module, std::span<const Extern> imports) override;

  Extern host_func(FuncType type, HostFunc func) override {
    if (!numeric(type)) usage_error("host functions take and return only i32, i64, f32 and f64");
    HostBinding& binding = hosts_.emplace_back(HostBinding{this, std::move(func), type});
    Object object;
    object.kind = ExternKind::Func;
    object.host = &binding;
    object.type = std::move(type);
    return add(std::move(object));
  }

  FuncType func_type(Extern func) const override {
    if (func.kind != ExternKind::Func) usage_error("func_type: not a function");
    return resolve(func, ExternKind::Func).type;
  }

  ExternType extern_type(Extern e) const override {
    const Object& o = resolve(e, e.kind);
    ExternType type = o.declared;
    type.kind = o.kind;
    switch (o.kind) {
      case ExternKind::Func: type.func = o.type; break;
      case ExternKind::Memory: {
        const auto* memory = static_cast<const wasm_rt_memory_t*>(o.pointer);
        type.limits.min = memory->pages;
        type.limits.max = memory->max_pages;
        break;
      }
      case ExternKind::Table: {
        // Both table structs start with data, max_size, size.
        const auto* table = static_cast<const wasm_rt_funcref_table_t*>(o.pointer);
        type.limits.min = table->size;
        type.limits.max = table->max_size == UINT32_MAX ? std::nullopt : std::optional<uint64_t>(table->max_size);
        break;
      }
      default: break;
    }
    return type;
  }

  void call(Extern func, std::span<const uint64_t> args, std::span<uint64_t> results) override {
    const Object& o = resolve(func, ExternKind::Func);
    check_counts(o.type, args.size(), results.size());
    if (o.host) {
      call_host_directly(*o.host, args, results);
      return;
    }
    if (!o.invoke) usage_error("call: only functions of numbers cross the engine interface");
    run(o.invoke, o.code, o.context, args.data(), results.data());
  }

  std::unique_ptr<PreparedCall> prepare_call(Extern func) override;

  std::span<uint8_t> memory_bytes(Extern memory) override {
    auto* m = static_cast<wasm_rt_memory_t*>(resolve(memory, ExternKind::Memory).pointer);
    return {m->data, static_cast<size_t>(m->pages) * 65536};
  }

  std::optional<uint64_t> grow_memory(Extern memory, uint64_t pages) override {
    auto* m = static_cast<wasm_rt_memory_t*>(resolve(memory, ExternKind::Memory).pointer);
    if (pages > m->max_pages) return std::nullopt;
    // Within the store's limits, as guest code grows it (growth_allowed).
    const uint32_t old = wasm_rt_grow_memory(m, static_cast<uint32_t>(pages));
    if (old == static_cast<uint32_t>(-1)) return std::nullopt;
    return old;
  }

  uint64_t global_get(Extern global) const override {
    const Object& o = resolve(global, ExternKind::Global);
    switch (o.declared.value) {
      case CoreType::I32:
      case CoreType::F32: return *static_cast<const uint32_t*>(o.pointer);
      case CoreType::I64:
      case CoreType::F64: return *static_cast<const uint64_t*>(o.pointer);
      default: usage_error("global_get: only numeric globals cross the engine interface");
    }
  }

  void global_set(Extern global, uint64_t bits) override {
    const Object& o = resolve(global, ExternKind::Global);
    if (!o.declared.mutable_global) usage_error("global_set: the global is immutable");
    switch (o.declared.value) {
      case CoreType::I32:
      case CoreType::F32: *static_cast<uint32_t*>(o.pointer) = static_cast<uint32_t>(bits); break;
      case CoreType::I64:
      case CoreType::F64: *static_cast<uint64_t*>(o.pointer) = bits; break;
      default: usage_error("global_set: only numeric globals cross the engine interface");
    }
  }

  std::optional<Extern> table_func(Extern table, uint64_t index) override {
    const Object& o = resolve(table, ExternKind::Table);
    if (o.declared.value != CoreType::FuncRef) usage_error("table_func: not a table of funcref");
    const auto* t = static_cast<const wasm_rt_funcref_table_t*>(o.pointer);
    if (index >= t->size || !t->data[index].func) return std::nullopt;
    const wasm_rt_funcref_t& ref = t->data[index];
    RegisteredType registered;
    {
      std::lock_guard lock(registry_lock);
      auto found = registry().find(ref.func_type);
      if (found == registry().end()) usage_error("table_func: a function of a type no loaded module declares");
      registered = found->second;
    }
    return function(reinterpret_cast<void*>(ref.func), ref.module_instance, registered.invoke,
                    std::move(registered.type));
  }

  std::unique_ptr<ExecutionStack> new_execution_stack() override { return std::make_unique<Stack>(); }

  ExecutionStack* switch_execution_stack(ExecutionStack* stack) override {
    auto* next = static_cast<Stack*>(stack);
    cmhost_rt_switch(next ? &next->rt : nullptr);
    return std::exchange(current_, next);
  }

  // Calls translated code from the host: nesting bounded, the budget
  // refilled for the outermost call of a stack, traps turned into errors.
  [[gnu::always_inline]] void run(cmhost_aot_invoker invoke, void* code, void* context, const uint64_t* args,
                                  uint64_t* results) {
    unsigned& depth = current_ ? current_->depth : main_depth_;
    if (depth >= kMaxCallNesting) [[unlikely]]
      nested_too_deep();
    ++depth;
    const int trap = cmhost_rt_invoke(invoke, code, context, args, results);
    --depth;
    if (trap) [[unlikely]]
      fail(trap);
  }

 private:
  struct Stack final : ExecutionStack {
    Stack() { cmhost_rt_stack_init(&rt, nullptr, 0, 0); }
    void bind_native_stack(const void* low, size_t size) override {
      cmhost_rt_stack_init(&rt, low, size, CMHOST_RT_HOST_MARGIN);
    }
    cmhost_rt_stack rt{};
    unsigned depth = 0;
  };

  static void check_counts(const FuncType& type, size_t args, size_t results) {
    if (args != type.params.size() || results != type.results.size())
      usage_error("function takes " + std::to_string(type.params.size()) + " arguments and " +
                  std::to_string(type.results.size()) + " results; called with " + std::to_string(args) + " and " +
                  std::to_string(results));
  }

  Extern add(Object object) {
    if (objects_.size() >= std::numeric_limits<uint32_t>::max()) usage_error("store holds too many objects");
    const Extern e{object.kind, static_cast<uint32_t>(objects_.size())};
    objects_.push_back(std::move(object));
    return e;
  }

  static const char* kind_name(ExternKind kind) { return kind == ExternKind::Func ? "function" : to_string(kind); }

  // Handles are checked as the interpreter checks them: one this store did
  // not hand out, or of the wrong kind, is a Usage error.
  const Object& resolve(Extern e, ExternKind kind) const {
    if (e.kind != kind)
      usage_error(std::string("expected a ") + kind_name(kind) + ", got a " + kind_name(e.kind));
    if (e.id >= objects_.size() || objects_[e.id].kind != kind)
      usage_error(std::string("no ") + kind_name(kind) + " with id " + std::to_string(e.id) + " in this store");
    return objects_[e.id];
  }

  // One handle per function and per memory, table or global, however many
  // times it is exported or found.
  Extern function(void* code, void* context, cmhost_aot_invoker invoke, FuncType type) {
    const auto key = std::make_pair(code, context);
    if (auto found = functions_.find(key); found != functions_.end()) return found->second;
    Object object;
    object.code = code;
    object.context = context;
    object.invoke = numeric(type) ? invoke : nullptr;
    object.type = std::move(type);
    const Extern e = add(std::move(object));
    functions_.emplace(key, e);
    return e;
  }

  Extern object_at(ExternKind kind, void* pointer, ExternType declared) {
    if (auto found = pointers_.find(pointer); found != pointers_.end()) return found->second;
    Object object;
    object.kind = kind;
    object.pointer = pointer;
    object.declared = std::move(declared);
    const Extern e = add(std::move(object));
    pointers_.emplace(pointer, e);
    return e;
  }

  void check_import(const AotModule& module, size_t index, const Object& given);

  void call_host_directly(HostBinding& host, std::span<const uint64_t> args, std::span<uint64_t> results) {
    AotCaller caller(*this, nullptr);
    std::fill(results.begin(), results.end(), 0);
    host.func(caller, args, results);
  }

  static int enter_host(void* binding, const uint64_t* args, uint64_t* results) noexcept {
    auto& imported = *static_cast<ImportedHost*>(binding);
    HostBinding& host = *imported.host;
    AotStore& store = *host.store;
    try {
      const size_t result_count = host.type.results.size();
      std::fill(results, results + result_count, 0);
      AotCaller caller(store, &store.instances_[imported.caller]);
      host.func(caller, {args, host.type.params.size()}, {results, result_count});
      return 0;
    } catch (const Error& error) {
      store.pending_message_ = error.what();
    } catch (...) {
      // Not ours to translate: the call that entered wasm rethrows it.
      store.pending_exception_ = std::current_exception();
    }
    return 1;
  }

  [[noreturn, gnu::cold, gnu::noinline]] static void nested_too_deep() {
    throw Error(ErrorKind::Trap, "call stack exhausted: host and wasm calls nested more than " +
                                     std::to_string(kMaxCallNesting) + " deep");
  }

  [[noreturn, gnu::cold, gnu::noinline]] void fail(int trap) {
    if (trap == CMHOST_TRAP_HOST) {
      if (pending_exception_) std::rethrow_exception(std::exchange(pending_exception_, nullptr));
      throw Error(ErrorKind::Trap, std::exchange(pending_message_, {}));
    }
    throw Error(ErrorKind::Trap, cmhost_rt_trap_message(trap));
  }

  void require_metered(const char* what) const {
    if (!metered_) usage_error(std::string(what) + ": the engine does not meter guest code (EngineConfig::metering)");
  }
  // What the store's memories and tables hold now.
  uint64_t memory_bytes_in_use() const {
    uint64_t total = 0;
    for (const wasm_rt_memory_t* m : memories_) total += uint64_t{m->pages} * 65536;
    return total;
  }
  uint64_t table_elements_in_use() const {
    uint64_t total = 0;
    // Both table structs start with data, max_size, size.
    for (const wasm_rt_funcref_table_t* t : tables_) total += t->size;
    return total;
  }
  static void remember_object(void* context, void* object, int is_table) {
    auto& store = *static_cast<AotStore*>(context);
    if (is_table)
      store.tables_.push_back(static_cast<wasm_rt_funcref_table_t*>(object));
    else
      store.memories_.push_back(static_cast<wasm_rt_memory_t*>(object));
    GrowthOwners::add(object, &store);
  }

 public:
  // rt.c asks before one of the store's memories or tables grows.
  bool growth_allowed(const void* object, bool is_table, uint64_t delta) const {
    if (is_table) return table_growth_allowed(caps_, delta, table_elements_in_use());
    const auto* memory = static_cast<const wasm_rt_memory_t*>(object);
    return memory_growth_allowed(caps_, uint64_t{memory->pages} * 65536, delta * 65536, memory_bytes_in_use());
  }

 private:

 public:
  void set_memory_limits(const MemoryLimits& limits) override {
    caps_ = {limits.memory_bytes, limits.total_memory_bytes, limits.table_elements};
  }
  void set_fuel(std::optional<uint64_t> units) override {
    require_metered("set_fuel");
    meter_.set_fuel(units);
    fuel_ = 0;  // the next unit asks for a slice
  }
  std::optional<uint64_t> fuel() const override {
    require_metered("fuel");
    return meter_.fuel(fuel_);
  }
  void set_epoch_deadline(uint64_t epoch) override {
    require_metered("set_epoch_deadline");
    meter_.set_deadline(epoch);
  }
  bool deadline_passed() const override { return metered_ && meter_.deadline_passed(); }

 private:
  const EngineConfig& config_;
  const bool metered_ = config_.metering;
  Meter meter_;
  HostBinding* refill_ = nullptr;  // metered stores: what the modules call when a slice is spent
  StoreCaps caps_;
  std::vector<wasm_rt_memory_t*> memories_;       // every memory the store's instances define
  std::vector<wasm_rt_funcref_table_t*> tables_;  // every table (of either kind) they define
  std::deque<Object> objects_;
  std::deque<HostBinding> hosts_;
  std::deque<ImportedHost> imported_hosts_;
  std::deque<InstanceRecord> instances_;
  std::map<std::pair<void*, void*>, Extern> functions_;
  std::unordered_map<void*, Extern> pointers_;
  int64_t fuel_ = 0;  // metered stores: the slice counter the modules import
  Stack* current_ = nullptr;
  unsigned main_depth_ = 0;
  std::string pending_message_;
  std::exception_ptr pending_exception_;
};

int GrowthOwners::allowed(const void* object, int is_table, uint64_t delta) {
  std::lock_guard lock(mutex());
  const auto found = owners().find(object);
  return found == owners().end() || found->second->growth_allowed(object, is_table != 0, delta);
}

class Prepared final : public PreparedCall {
 public:
  Prepared(AotStore& store, cmhost_aot_invoker invoke, void* code, void* context, size_t args, size_t results)
      : store_(store), invoke_(invoke), code_(code), context_(context), args_(args), results_(results) {}
  void call(std::span<const uint64_t> args, std::span<uint64_t> results) override {
    if (args.size() != args_ || results.size() != results_) [[unlikely]]
      wrong_arity(args.size(), results.size());
    store_.run(invoke_, code_, context_, args.data(), results.data());
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] void wrong_arity(size_t args, size_t results) const {
    usage_error("function takes " + std::to_string(args_) + " arguments and " + std::to_string(results_) +
                " results; called with " + std::to_string(args) + " and " + std::to_string(results));
  }

  AotStore& store_;
  cmhost_aot_invoker invoke_;
  void* code_;
  void* context_;
  size_t args_, results_;
};

// A host function prepared: no trap guard needed, it is called directly.
class PreparedHost final : public PreparedCall {
 public:
  PreparedHost(AotStore& store, Extern func) : store_(store), func_(func) {}
  void call(std::span<const uint64_t> args, std::span<uint64_t> results) override { store_.call(func_, args, results); }

 private:
  AotStore& store_;
  Extern func_;
};

std::unique_ptr<PreparedCall> AotStore::prepare_call(Extern func) {
  const Object& o = resolve(func, ExternKind::Func);
  if (o.host) return std::make_unique<PreparedHost>(*this, func);
  if (!o.invoke) usage_error("call: only functions of numbers cross the engine interface");
  return std::make_unique<Prepared>(*this, o.invoke, o.code, o.context, o.type.params.size(), o.type.results.size());
}

std::string describe_limits(const Limits& limits) {
  return "{min " + std::to_string(limits.min) + (limits.max ? ", max " + std::to_string(*limits.max) : "") + "}";
}

void AotStore::check_import(const AotModule& module, size_t index, const Object& given) {
  const ImportDesc& import = module.imports()[index];
  const auto mismatch = [&](const std::string& why) {
    throw Error(ErrorKind::Link, "import \"" + import.module + "\" \"" + import.name + "\": " + why);
  };
  if (given.kind != import.type.kind)
    mismatch(std::string("expected a ") + to_string(import.type.kind) + ", got a " + to_string(given.kind));
  switch (given.kind) {
    case ExternKind::Func:
      if (given.type != import.type.func)
        mismatch("type mismatch: expected " + to_string(import.type.func) + ", got " + to_string(given.type));
      break;
    case ExternKind::Memory:
    case ExternKind::Table: {
      uint64_t current = 0;
      std::optional<uint64_t> max;
      if (given.kind == ExternKind::Memory) {
        const auto* m = static_cast<const wasm_rt_memory_t*>(given.pointer);
        current = m->pages;
        max = given.declared.limits.max;
      } else {
        current = given.declared.value == CoreType::ExternRef
                      ? static_cast<const wasm_rt_externref_table_t*>(given.pointer)->size
                      : static_cast<const wasm_rt_funcref_table_t*>(given.pointer)->size;
        max = given.declared.limits.max;
        if (given.declared.value != import.type.value) mismatch("table element types differ");
      }
      const Limits& want = import.type.limits;
      if (current < want.min || (want.max && (!max || *max > *want.max)))
        mismatch("limits mismatch: expected " + describe_limits(want) + ", got " +
                 describe_limits({current, max, false, false}));
      break;
    }
    case ExternKind::Global:
      if (given.declared.value != import.type.value || given.declared.mutable_global != import.type.mutable_global)
        mismatch("global type mismatch");
      break;
    case ExternKind::Tag: mismatch("exception tags do not link on the ahead-of-time backend");
  }
}

std::shared_ptr<Instance> AotStore::instantiate(const Module& generic, std::span<const Extern> imports) {
  const auto* module = dynamic_cast<const AotModule*>(&generic);
  if (!module) usage_error("module was not compiled by the ahead-of-time engine");
  if (module->metered() != metered_)
    usage_error("module and store disagree on metering (compiled by another engine?)");
  module->check_caps(caps_, memory_bytes_in_use(), table_elements_in_use());
  if (imports.size() != module->imports().size())
    throw Error(ErrorKind::Link, "module has " + std::to_string(module->imports().size()) + " imports, " +
                                     std::to_string(imports.size()) + " given");
  const cmhost_aot_module& table = module->table();
  const size_t instance_index = instances_.size();

  std::vector<cmhost_aot_slot> slots(module->shape().imports.size());
  for (size_t i = 0; i < imports.size(); ++i) {
    const Object& given = resolve(imports[i], imports[i].kind);
    check_import(*module, i, given);
    if (given.kind != ExternKind::Func) {
      slots[i] = {given.pointer, nullptr};
    } else if (given.host) {
      const uint32_t type_index = module->shape().imports[i].type.type_index;
      void* thunk = table.signatures[type_index].host_thunk;
      if (!thunk) throw Error(ErrorKind::Link, "host functions of reference types do not link on the ahead-of-time backend");
      ImportedHost& binding = imported_hosts_.emplace_back(ImportedHost{&enter_host, given.host, instance_index});
      slots[i] = {thunk, &binding};
    } else {
      slots[i] = {given.code, given.context};
    }
  }
  if (module->metered()) {
    const size_t refill = slots.size() - 2;
    void* thunk = table.signatures[module->shape().imports[refill].type.type_index].host_thunk;
    ImportedHost& binding = imported_hosts_.emplace_back(ImportedHost{&enter_host, refill_, instance_index});
    slots[refill] = {thunk, &binding};
    slots.back() = {&fuel_, nullptr};
  }

  void* block = std::calloc(1, table.instance_size);
  if (!block) throw Error(ErrorKind::Trap, "out of memory for an instance");
  if (!slots.empty())
    std::memcpy(static_cast<char*>(block) + table.slots_offset, slots.data(), slots.size() * sizeof(cmhost_aot_slot));
  InstanceRecord& record = instances_.emplace_back(InstanceRecord{&table, block, {}});

  // Each memory and table is made at most as large as what the store's
  // totals leave now (see MemoryLimits): they only fill up from here, and
  // each growth is checked against what they hold then (growth_allowed).
  const std::optional<uint64_t> room = memory_room(caps_, memory_bytes_in_use());
  const uint64_t elements = table_elements_in_use();
  const uint64_t table_room =
      caps_.table_elements ? *caps_.table_elements - std::min(elements, *caps_.table_elements) : UINT64_MAX;
  cmhost_rt_set_caps(room ? *room / 65536 : UINT64_MAX, table_room, &remember_object, this);
  unsigned& depth = current_ ? current_->depth : main_depth_;
  if (depth >= kMaxCallNesting) nested_too_deep();
  ++depth;
  const int trap = cmhost_rt_instantiate(table.instantiate, block);
  --depth;
  cmhost_rt_set_caps(UINT64_MAX, UINT64_MAX, nullptr, nullptr);
  if (trap == CMHOST_TRAP_CAPS)
    throw Error(ErrorKind::Trap, "memory limit: a memory or table of the module could not be allocated within the store's limits");
  if (trap) fail(trap);

  std::vector<Extern> externs;
  const auto& shape = module->shape();
  for (size_t k = 0; k < shape.exports.size(); ++k) {
    const aot::ShapeExtern& e = shape.exports[k].type;
    void* pointer = table.export_ptr(block, static_cast<uint32_t>(k));
    Extern handle;
    if (e.kind == 'f') {
      handle = function(pointer, block, table.signatures[e.type_index].invoke, module->type(e.type_index));
    } else {
      const ExternType declared = module->exports()[k].type;
      handle = object_at(declared.kind, pointer, declared);
    }
    externs.push_back(handle);
    record.exports.emplace(shape.exports[k].name, handle);
  }
  return std::make_shared<AotInstance>(module->shared_exports(), std::move(externs));
}

class AotEngine final : public Engine {
 public:
  explicit AotEngine(EngineConfig config) : config_(std::move(config)) {
    cmhost_rt_set_growth_hook(&GrowthOwners::allowed);
    cmhost_rt_grow_pool(config_.pooling.memory_slots);
  }

  std::shared_ptr<Module> compile(std::span<const uint8_t> bytes) override {
    auto artifact = cached_artifact(bytes, {bytes});
    return artifact->module(0);
  }

  std::unique_ptr<Artifact> load_artifact(const std::string& path, std::span<const uint8_t> component) override {
    // The runtime compares the artifact's module count with the component's.
    aot::BuildSettings built = settings(config_.aot_tier == EngineConfig::AotTier::Baseline);
    // A tiered engine runs what either tier wrote (`cmhost compile --baseline`).
    if (config_.aot_tier == EngineConfig::AotTier::Tiered) built.baseline = aot::artifact_is_baseline(path);
    const aot::Stamp expected = aot::expected_stamp(component, built, aot::kAnyModuleCount);
    return std::make_unique<AotArtifact>(aot::load_artifact_file(path, expected), config_);
  }

  std::unique_ptr<Artifact> cached_artifact(std::span<const uint8_t> component,
                                            const std::vector<std::span<const uint8_t>>& modules) override {
    const std::string directory = aot::cache_directory(config_.cache_dir);
    const std::string component_sha256 = aot::sha256_hex(component);  // once: a big component takes a while
    if (config_.aot_tier != EngineConfig::AotTier::Tiered)
      return cached_tier(component_sha256, modules, directory,
                         settings(config_.aot_tier == EngineConfig::AotTier::Baseline));
    const aot::BuildSettings optimized = settings(false), baseline = settings(true);
    // Small components (most) go straight to optimized code, without
    // looking for the builder or TinyCC.
    if (aot::code_bytes(modules) <= config_.tiered_code_bytes)
      return cached_tier(component_sha256, modules, directory, optimized);
    const std::string builder = aot::find_builder(config_.aot_builder);
    if (builder.empty() || !aot::tier_compiler_available(baseline))
      return cached_tier(component_sha256, modules, directory, optimized);
    const aot::Stamp optimized_stamp = aot::expected_stamp(component_sha256, optimized, modules.size());
    const std::string optimized_path = aot::cache_path(directory, optimized_stamp);
    if (access(optimized_path.c_str(), F_OK) == 0) {
      try {
        return std::make_unique<AotArtifact>(aot::load_artifact_file(optimized_path, optimized_stamp), config_);
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Usage) throw;
        unlink(optimized_path.c_str());  // a damaged file: built anew, in the background
      }
    }
    auto artifact = cached_tier(component_sha256, modules, directory, baseline);
    artifact->replaced_by(optimized_path);
    if (config_.on_compile)
      config_.on_compile("building optimized native code in the background (" + optimized_path + ")");
    aot::build_in_background(builder, component_sha256, modules, optimized, optimized_path);
    return artifact;
  }

  void write_artifact(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                      const std::string& path) override {
    aot::build_artifact(component, modules, settings(config_.aot_tier == EngineConfig::AotTier::Baseline), path);
  }

  std::unique_ptr<Store> new_store() override { return std::make_unique<AotStore>(config_, epoch_); }
  const EngineConfig& config() const override { return config_; }

 private:
  // The artifact of one tier from the cache, built (and waited for) first
  // when it is not there.
  std::unique_ptr<AotArtifact> cached_tier(const std::string& component_sha256,
                                        const std::vector<std::span<const uint8_t>>& modules,
                                        const std::string& directory, const aot::BuildSettings& tier) {
    const aot::Stamp expected = aot::expected_stamp(component_sha256, tier, modules.size());
    const std::string path = aot::cache_path(directory, expected);
    const auto build = [&](const std::string& verb, const std::string& why) {
      if (config_.on_compile)
        config_.on_compile(verb + " " + std::to_string(modules.size()) + " core module" +
                           (modules.size() == 1 ? "" : "s") + " to " + (tier.baseline ? "baseline " : "") +
                           "native code (" + path + ")" + why);
      aot::build_artifact(component_sha256, modules, tier, path);
    };
    if (access(path.c_str(), F_OK) != 0) {
      build("compiling", "");
    } else {
      try {
        return std::make_unique<AotArtifact>(aot::load_artifact_file(path, expected), config_);
      } catch (const Error& e) {
        // A damaged or foreign file under the artifact's name: built anew
        // (the cache directory itself was checked to be ours).
        if (e.kind() != ErrorKind::Usage) throw;
        build("recompiling", std::string(": ") + e.what());
      }
    }
    return std::make_unique<AotArtifact>(aot::load_artifact_file(path, expected), config_);
  }

  aot::BuildSettings settings(bool baseline) const {
    aot::BuildSettings s;
    s.baseline = baseline;
    s.baseline_compiler = config_.baseline_compiler;
    s.compiler = config_.compiler;
    s.metered = config_.metering;
    s.cache_dir = config_.cache_dir;
    return s;
  }

  EngineConfig config_;
};

}  // namespace

std::unique_ptr<Engine> make_aot_engine(EngineConfig config) { return std::make_unique<AotEngine>(std::move(config)); }

}  // namespace cmhost::engine
