// engine.hpp implemented on the wabt backend (wabt_backend.hpp). This file is
// C++20 like the rest of cmhost and never sees a wabt header; it converts
// between the engine types and the backend's mirrors of them.
#include <deque>
#include <map>
#include <utility>

#include "interp_engine.hpp"

#include "cmhost/error.hpp"
#include "wabt_backend.hpp"

namespace cmhost::engine {
namespace {

namespace wb = wabt_backend;

// The backend numbers its codes like ours, so conversions are casts.
static_assert(static_cast<int>(wb::ValCode::I32) == static_cast<int>(CoreType::I32));
static_assert(static_cast<int>(wb::ValCode::I64) == static_cast<int>(CoreType::I64));
static_assert(static_cast<int>(wb::ValCode::F32) == static_cast<int>(CoreType::F32));
static_assert(static_cast<int>(wb::ValCode::F64) == static_cast<int>(CoreType::F64));
static_assert(static_cast<int>(wb::ValCode::V128) == static_cast<int>(CoreType::V128));
static_assert(static_cast<int>(wb::ValCode::FuncRef) == static_cast<int>(CoreType::FuncRef));
static_assert(static_cast<int>(wb::ValCode::ExternRef) == static_cast<int>(CoreType::ExternRef));
static_assert(static_cast<int>(wb::KindCode::Func) == static_cast<int>(ExternKind::Func));
static_assert(static_cast<int>(wb::KindCode::Table) == static_cast<int>(ExternKind::Table));
static_assert(static_cast<int>(wb::KindCode::Memory) == static_cast<int>(ExternKind::Memory));
static_assert(static_cast<int>(wb::KindCode::Global) == static_cast<int>(ExternKind::Global));
static_assert(static_cast<int>(wb::KindCode::Tag) == static_cast<int>(ExternKind::Tag));

std::vector<CoreType> to_types(const std::vector<wb::ValCode>& codes) {
  std::vector<CoreType> types;
  types.reserve(codes.size());
  for (wb::ValCode code : codes) types.push_back(static_cast<CoreType>(code));
  return types;
}

std::vector<wb::ValCode> to_codes(const std::vector<CoreType>& types) {
  std::vector<wb::ValCode> codes;
  codes.reserve(types.size());
  for (CoreType type : types) codes.push_back(static_cast<wb::ValCode>(type));
  return codes;
}

ExternType to_extern_type(const wb::ExternSignature& signature) {
  ExternType type;
  type.kind = static_cast<ExternKind>(signature.kind);
  type.func = {to_types(signature.func.params), to_types(signature.func.results)};
  type.limits = {signature.min, signature.max, signature.is64, signature.shared};
  type.value = static_cast<CoreType>(signature.value);
  type.mutable_global = signature.mutable_global;
  return type;
}

Extern to_extern(wb::Handle handle) { return {static_cast<ExternKind>(handle.kind), handle.id}; }
wb::Handle to_handle(Extern e) { return {static_cast<wb::KindCode>(e.kind), e.id}; }

// Export descriptions and their lookup by name, shared by a module's instances.
struct ExportTable {
  std::vector<ExportDesc> exports;
  std::map<std::string, size_t, std::less<>> index_by_name;
};

class WabtModule final : public Module {
 public:
  explicit WabtModule(wb::CompiledModule compiled) : code_(std::move(compiled.code)) {
    auto table = std::make_shared<ExportTable>();
    for (const wb::ImportSignature& import : compiled.imports) {
      imports_.push_back({import.module, import.name, to_extern_type(import.type)});
    }
    for (const wb::ExportSignature& export_ : compiled.exports) {
      table->index_by_name.emplace(export_.name, table->exports.size());
      table->exports.push_back({export_.name, to_extern_type(export_.type)});
    }
    exports_ = std::move(table);
  }

  const std::vector<ImportDesc>& imports() const override { return imports_; }
  const std::vector<ExportDesc>& exports() const override { return exports_->exports; }
  const wb::CompiledCode& code() const { return *code_; }
  const std::shared_ptr<const ExportTable>& export_table() const { return exports_; }

 private:
  std::shared_ptr<const wb::CompiledCode> code_;
  std::vector<ImportDesc> imports_;
  std::shared_ptr<const ExportTable> exports_;
};

class WabtInstance final : public Instance {
 public:
  WabtInstance(std::shared_ptr<const ExportTable> table, std::vector<Extern> externs)
      : table_(std::move(table)), externs_(std::move(externs)) {}

  std::optional<Extern> get_export(std::string_view name) const override {
    auto found = table_->index_by_name.find(name);
    if (found == table_->index_by_name.end()) return std::nullopt;
    return externs_[found->second];
  }
  const std::vector<ExportDesc>& exports() const override { return table_->exports; }

 private:
  std::shared_ptr<const ExportTable> table_;
  std::vector<Extern> externs_;  // in export order
};

class WabtStore;

// A registered host function; its address is the backend's context pointer.
struct HostBinding {
  WabtStore* store;
  HostFunc func;
  size_t param_count;
  size_t result_count;
};

class HostCaller final : public Caller {
 public:
  HostCaller(Store& store, wb::CallerView& view) : store_(store), view_(view) {}
  Store& store() override { return store_; }
  std::optional<Extern> caller_export(std::string_view name) override {
    if (auto handle = view_.caller_export(name)) return to_extern(*handle);
    return std::nullopt;
  }

 private:
  Store& store_;
  wb::CallerView& view_;
};

class Prepared final : public PreparedCall {
 public:
  explicit Prepared(std::unique_ptr<wb::PreparedFunc> func) : func_(std::move(func)) {}
  void call(std::span<const uint64_t> args, std::span<uint64_t> results) override {
    func_->call(args.data(), args.size(), results.data(), results.size());
  }

 private:
  std::unique_ptr<wb::PreparedFunc> func_;
};

class WabtStore final : public Store {
 public:
  WabtStore(const EngineConfig& config, std::shared_ptr<const std::atomic<uint64_t>> epoch)
      : backend_(wb::InterpStore::create(config.metering, std::move(epoch))) {}

  std::shared_ptr<Instance> instantiate(const Module& module, std::span<const Extern> imports) override {
    const auto* wabt_module = dynamic_cast<const WabtModule*>(&module);
    if (!wabt_module) throw Error(ErrorKind::Usage, "module was not compiled by the wabt engine");
    std::vector<wb::Handle> handles;
    handles.reserve(imports.size());
    for (Extern e : imports) handles.push_back(to_handle(e));
    std::vector<wb::Handle> exported =
        backend_->instantiate(wabt_module->code(), handles.data(), handles.size());
    std::vector<Extern> externs;
    externs.reserve(exported.size());
    for (wb::Handle handle : exported) externs.push_back(to_extern(handle));
    return std::make_shared<WabtInstance>(wabt_module->export_table(), std::move(externs));
  }

  Extern host_func(FuncType type, HostFunc func) override {
    HostBinding& binding =
        bindings_.emplace_back(HostBinding{this, std::move(func), type.params.size(), type.results.size()});
    try {
      return to_extern(
          backend_->host_func({to_codes(type.params), to_codes(type.results)}, &run_host, &binding));
    } catch (...) {
      bindings_.pop_back();
      throw;
    }
  }

  FuncType func_type(Extern func) const override {
    if (func.kind != ExternKind::Func) throw Error(ErrorKind::Usage, "func_type: not a function");
    wb::ExternSignature signature = backend_->extern_signature(to_handle(func));
    return {to_types(signature.func.params), to_types(signature.func.results)};
  }

  ExternType extern_type(Extern e) const override {
    return to_extern_type(backend_->extern_signature(to_handle(e)));
  }

  void call(Extern func, std::span<const uint64_t> args, std::span<uint64_t> results) override {
    backend_->call(to_handle(func), args.data(), args.size(), results.data(), results.size());
  }

  std::unique_ptr<PreparedCall> prepare_call(Extern func) override {
    return std::make_unique<Prepared>(backend_->prepare(to_handle(func)));
  }

  std::span<uint8_t> memory_bytes(Extern memory) override {
    wb::MemoryView view = backend_->memory(to_handle(memory));
    return {view.data, static_cast<size_t>(view.size)};
  }

  std::optional<uint64_t> grow_memory(Extern memory, uint64_t pages) override {
    return backend_->grow_memory(to_handle(memory), pages);
  }

  uint64_t global_get(Extern global) const override { return backend_->global_get(to_handle(global)); }
  void global_set(Extern global, uint64_t bits) override { backend_->global_set(to_handle(global), bits); }

  std::optional<Extern> table_func(Extern table, uint64_t index) override {
    if (auto handle = backend_->table_func(to_handle(table), index)) return to_extern(*handle);
    return std::nullopt;
  }

  std::unique_ptr<ExecutionStack> new_execution_stack() override {
    return std::make_unique<BackendStack>(*backend_, backend_->new_stack());
  }
  ExecutionStack* switch_execution_stack(ExecutionStack* stack) override {
    auto* next = static_cast<BackendStack*>(stack);
    backend_->switch_stack(next ? next->stack : nullptr);
    return std::exchange(current_stack_, next);
  }

  void set_memory_limits(const MemoryLimits& limits) override {
    backend_->set_caps({limits.memory_bytes, limits.total_memory_bytes, limits.table_elements});
  }
  void set_fuel(std::optional<uint64_t> units) override { backend_->set_fuel(units); }
  std::optional<uint64_t> fuel() const override { return backend_->fuel(); }
  void set_epoch_deadline(uint64_t epoch) override { backend_->set_epoch_deadline(epoch); }
  bool deadline_passed() const override { return backend_->deadline_passed(); }

 private:
  static void run_host(void* context, wb::CallerView& view, const uint64_t* params, uint64_t* results) {
    auto& binding = *static_cast<HostBinding*>(context);
    HostCaller caller(*binding.store, view);
    binding.func(caller, {params, binding.param_count}, {results, binding.result_count});
  }

  struct BackendStack final : ExecutionStack {
    BackendStack(wb::InterpStore& backend, void* stack) : backend(backend), stack(stack) {}
    ~BackendStack() override { backend.delete_stack(stack); }
    wb::InterpStore& backend;
    void* stack;
  };

  // The backend's host functions point into bindings_: declared first so the
  // backend is destroyed before them. A deque keeps their addresses stable.
  std::deque<HostBinding> bindings_;
  std::unique_ptr<wb::InterpStore> backend_;
  BackendStack* current_stack_ = nullptr;
};

class WabtEngine final : public Engine {
 public:
  explicit WabtEngine(EngineConfig config) : config_(std::move(config)) {}

  std::shared_ptr<Module> compile(std::span<const uint8_t> bytes) override {
    return std::make_shared<WabtModule>(wb::compile(bytes.data(), bytes.size(), config_.metering));
  }
  std::unique_ptr<Store> new_store() override { return std::make_unique<WabtStore>(config_, epoch_); }
  const EngineConfig& config() const override { return config_; }

 private:
  EngineConfig config_;
};

}  // namespace

std::unique_ptr<Engine> make_interpreter_engine(EngineConfig config) {
  return std::make_unique<WabtEngine>(std::move(config));
}

}  // namespace cmhost::engine
