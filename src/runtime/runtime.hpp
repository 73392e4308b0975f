// The runtime stage: executes validated plans on a core engine store.
//
// A Store owns the core engine store and every component instance made in
// it. Instantiating runs a ComponentPlan's steps in order, filling the
// instance's run-time index spaces; calls into lifted functions lower the
// arguments with the ABI stage's compiled programs, call the core function,
// lift the results and run post-return.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <variant>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cmhost/abi.hpp"
#include "cmhost/abi/typed.hpp"
#include "cmhost/engine/backend.hpp"
#include "cmhost/function_ref.hpp"
#include "validate/validate.hpp"

namespace cmhost::runtime {

class Store;
class ComponentInstance;
class CoreCall;
class GuestContext;
class Func;
class HandleTable;
class LiftedCallSteps;
class Scheduler;
class Task;
class Thread;
template <typename T>
class IndexTable;
using FuncRef = std::shared_ptr<const Func>;

// A store's caps on handle tables (handles.hpp), and what its tables hold now.
struct HandleLimits {
  uint32_t entries = (1u << 28) - 1;    // per table (the spec's own limit)
  uint32_t waitables = (1u << 28) - 1;  // non-resource entries, the store's tables together
  uint64_t live_waitables = 0;
  // Host bytes the store's tables keep for their guests across calls (an
  // estimate per entry, plus what its object holds: an error context's
  // message), the store's tables together.
  uint64_t host_bytes = UINT64_MAX;
  uint64_t live_host_bytes = 0;
};

// What a store lets its guests take (cmhost::StoreLimits says why each).
struct GuestLimits {
  uint32_t instances = UINT32_MAX;   // component and core instances made
  uint32_t call_depth = UINT32_MAX;  // calls into guests nested on one another
  uint64_t lift_bytes = UINT64_MAX;  // host bytes one lift may allocate
};

// A resource type at run time: one per resource definition per instance, or
// one per host-defined resource.
struct ResourceType {
  std::string name;
  ComponentInstance* owner = nullptr;  // null for host resources
  std::optional<engine::Extern> dtor;
  // Host resources: called when an own handle is dropped, in the store that held it.
  std::function<void(Store& store, uint32_t rep)> host_drop;
  // Its identity in types: host function types use it for host resources,
  // and an instance's type, made run-time (ComponentInstance::
  // run_time_resources), for the resources it defines.
  abi::ResourceTypeRef abi_type;
};
using ResourceTypeRef = std::shared_ptr<const ResourceType>;

struct InstanceItems;

// An item of a component-level index space, as imported or exported.
struct Item {
  binary::Sort sort = binary::Sort::Func;
  FuncRef func;
  std::shared_ptr<const InstanceItems> instance;
  std::shared_ptr<const validate::ComponentPlan> component;
  // Component items: the instance whose outer aliases the component sees.
  const ComponentInstance* component_scope = nullptr;
  ResourceTypeRef resource;  // Type items bound to a resource
  abi::TypeRef value_type;   // Type items bound to a value type
  uint32_t core_module = 0;  // CoreModule items: index into the Plan's modules
};

struct InstanceItems {
  std::vector<std::pair<std::string, Item>> exports;
  const Item* find(std::string_view name) const {
    size_t from = 0;
    return find(name, from);
  }
  // Looks from `from` on (wrapping around) and leaves it past what it found:
  // names asked for in the order they are listed are found at once.
  const Item* find(std::string_view name, size_t& from) const;
};

// What a host function sees of its call: the store, and when a guest calls
// it through a lowered import, the calling instance and its side of the
// call (memory, realloc and handles, as the lower's options give them).
struct HostCall {
  Store& store;
  ComponentInstance* caller = nullptr;   // null when the host calls
  abi::AbiContext* caller_cx = nullptr;  // null when the host calls
};

// A host function: receives lifted arguments, returns the results.
using HostCallback = std::function<std::vector<abi::Val>(HostCall& call, std::span<const abi::Val> args)>;
// A host function called with its call's core values, no Vals: the
// caller's context `cx`, the lowered call's ABI, its core arguments, and
// where its flat result goes (empty when the result goes through memory, or
// there is none). Typed host functions (Linker::func_wrap) are these.
using FlatHostCallback = std::function<void(HostCall& call, abi::AbiContext& cx, const abi::FunctionAbi& abi,
                                            std::span<const uint64_t> params, std::span<uint64_t> results)>;

// A function type's results as the ABI lists them (none, or the one).
std::vector<abi::TypeRef> results_of(const validate::FuncType& type);

class HostCompletion;
// An async host function: receives the lifted arguments and its completion
// (runtime/host_calls.hpp).
using AsyncHostCallback =
    std::function<void(HostCall& call, std::span<const abi::Val> args, std::shared_ptr<HostCompletion> completion)>;

// An async call the host started (Func::call_async): its results once its
// task resolved.
struct AsyncCallResult {
  std::vector<abi::Val> results;
  bool resolved = false;
  bool cancelled = false;
  std::weak_ptr<Task> task;  // while it runs
  bool cancel_requested = false;
};
// Asks the call's task to cancel, as a caller's subtask.cancel does (once;
// nothing once resolved, or when its instance trapped). The host's loop
// calls it, never a guest's call.
void cancel_async_call(Store& store, AsyncCallResult& call);

// What a lifted function calls and how (canon lift's options, resolved in
// its instance); the parts that call lifted functions (tasks, lowerings,
// fused calls, built-ins) read it through Func::lifted().
struct LiftedFunc {
  ComponentInstance* instance = nullptr;
  engine::Extern core_func;
  std::unique_ptr<engine::PreparedCall> prepared;  // core_func ready to call (synchronous lifts)
  std::optional<engine::Extern> memory, realloc, post_return;
  std::shared_ptr<const abi::FunctionAbi> abi;
  size_t core_result_count = 0;
  bool async_lift = false;     // lifted with the async option
  bool moves_handles = true;   // a handle type in its parameters or result
  std::optional<engine::Extern> callback;
  size_t callback_params = 0;  // the callback's core parameters, counted once
};

// Host functions made by Func::host_flat: called with core values, or with
// Vals lowered into scratch memory by `abi`.
struct FlatHostFunc {
  FlatHostCallback callback;
  std::shared_ptr<const abi::FunctionAbi> abi;
};
// Host functions made by Func::host_async, which only guests call.
struct AsyncHostFunc {
  AsyncHostCallback callback;
  std::string name;  // the import's name, for messages
};
// What a function runs: lifted core wasm (monostate here, LiftedFunc
// beside), or one of the host's three forms.
using HostFuncForm = std::variant<std::monostate, HostCallback, FlatHostFunc, AsyncHostFunc>;

// A component-level function: lifted from core wasm, or defined by the host.
class Func {
 public:
  static FuncRef host(std::shared_ptr<const validate::FuncType> type, HostCallback callback);
  // A guest's lowered call reaches `callback` with its core values; the
  // host calling it with Vals lowers them into scratch memory first.
  static FuncRef host_flat(std::shared_ptr<const validate::FuncType> type, FlatHostCallback callback);
  // A host function that may complete after it returns; guests call it.
  static FuncRef host_async(std::shared_ptr<const validate::FuncType> type, std::string name,
                            AsyncHostCallback callback);
  // A function lifted from core wasm (the instantiation of a canon lift).
  static FuncRef lift(std::shared_ptr<const validate::FuncType> type, LiftedFunc lifted);

  const validate::FuncType& type() const { return *type_; }
  bool is_host() const { return !std::holds_alternative<std::monostate>(host_); }
  // Whether a lifted function returns its result, or takes its parameters,
  // through memory.
  bool results_spilled() const { return lifted_.abi && lifted_.abi->results_spilled(); }
  bool params_spilled() const { return lifted_.abi && lifted_.abi->params_spilled(abi::AbiSide::Lift); }
  bool memory64() const { return lifted_.abi && lifted_.abi->options().addr == abi::AddrWidth::I64; }
  // Lifted functions: what they call (empty for host functions).
  const LiftedFunc& lifted() const { return lifted_; }
  // Host functions: what they run (monostate for lifted functions).
  const HostFuncForm& host_form() const { return host_; }
  std::shared_ptr<const validate::FuncType> type_ref() const { return type_; }
  // Calls the function: a trap poisons the callee's instance and throws
  // cmhost::Error (Trap); bad arguments throw InvalidValue. An async
  // function's task runs, with every other task it waits for, until it
  // returns its result; a deadlock traps.
  std::vector<abi::Val> call(Store& store, std::span<const abi::Val> args) const;
  // Starts the call and returns: an async function's task runs until it
  // first blocks, and goes on as the event loop runs; others run to the end.
  std::shared_ptr<const AsyncCallResult> call_async(Store& store, std::span<const abi::Val> args) const;
  // Calls a host function with its call's context; Usage for lifted ones.
  std::vector<abi::Val> call_host(HostCall& call, std::span<const abi::Val> args) const;
  // Calls a lifted function and hands its result to `read` where the callee
  // left it (read it with abi::typed loads and views): no Val is built.
  // Post-return runs after `read` returns. Throws Usage for host functions.
  using ResultReader = FunctionRef<void(const abi::typed::CallResult&)>;
  void call_reading(Store& store, std::span<const abi::Val> args, const ResultReader& read) const;
  // The same with the core arguments written by `lower` (typed calls), with
  // the callee's context: Usage when the function's parameters are passed
  // in memory rather than flat.
  using ArgLowerer = FunctionRef<void(abi::AbiContext& callee, std::vector<uint64_t>& flat)>;
  void call_lowering(Store& store, const ArgLowerer& lower, const ResultReader& read) const;
  // Calls a lifted function of a synchronous type with the spec's
  // enter/leave rules, borrow checks and poisoning; `steps` passes the
  // values. `caller` is the calling instance (null: the host).
  void call_lifted(Store& store, LiftedCallSteps& steps, ComponentInstance* caller = nullptr) const;

 private:
  Func() = default;

  std::shared_ptr<const validate::FuncType> type_;
  HostFuncForm host_;
  LiftedFunc lifted_;
};

// A component instance's run-time index spaces and what it was made from:
// what instantiation (the Instantiator) fills, through
// ComponentInstance::spaces().
struct InstanceSpaces {
  struct CoreInstance {
    std::shared_ptr<engine::Instance> engine_instance;        // instantiated module
    std::vector<std::pair<std::string, engine::Extern>> bag;  // inline exports
    std::optional<engine::Extern> find(std::string_view name) const {
      size_t from = 0;
      return find(name, from);
    }
    // As InstanceItems::find: a bag is searched from `from` on.
    std::optional<engine::Extern> find(std::string_view name, size_t& from) const;
  };

  std::string name;
  std::vector<engine::Extern> core_funcs, core_tables, core_memories, core_globals, core_tags;
  std::vector<CoreInstance> core_instances;
  std::vector<uint32_t> core_modules;
  std::vector<FuncRef> funcs;
  std::vector<std::shared_ptr<const InstanceItems>> instances;
  std::vector<Item> components;  // plan and scope
  const validate::ComponentPlan* plan = nullptr;  // its types resolve Type operands
  // A root instance keeps its plan (and so its type) alive: the component it
  // was made from may go first.
  std::shared_ptr<const validate::ComponentPlan> root_plan;
  const ComponentInstance* scope = nullptr;  // the enclosing instance, for outer aliases
  std::map<const abi::ResourceType*, ResourceTypeRef> resources;
  std::vector<std::shared_ptr<ComponentInstance>> children;
  std::shared_ptr<InstanceItems> exports = std::make_shared<InstanceItems>();
};

// The spec's per-instance state (CanonicalABI.md "Component Instances"),
// with the instance's handles: what calls, tasks, built-ins and streams read
// and change, through ComponentInstance::state().
struct InstanceState {
  bool may_leave = true;
  bool may_enter = true;
  bool poisoned = false;
  ComponentInstance* parent = nullptr;  // the instance that instantiated this one
  uint32_t backpressure = 0;
  uint32_t num_waiting_to_enter = 0;
  Thread* exclusive_thread = nullptr;
  std::unique_ptr<IndexTable<Thread*>> threads;

  std::unique_ptr<HandleTable> handles;
  // Borrow handles lent into this instance per call still in progress.
  std::map<uint64_t, uint32_t> borrows_by_call;
};

class ComponentInstance {
 public:
  explicit ComponentInstance(std::shared_ptr<HandleLimits> limits = nullptr);
  ~ComponentInstance();
  const std::string& name() const { return spaces_.name; }
  const InstanceItems& exports() const { return *spaces_.exports; }
  std::shared_ptr<const InstanceItems> exports_ref() const { return spaces_.exports; }
  bool poisoned() const { return state_.poisoned; }
  // The validated type of the instance's component (its exports as the
  // validator typed them), null for instances made without one.
  const validate::ComponentType* type() const { return spaces_.plan ? &spaces_.plan->type : nullptr; }
  // The run-time identity of each resource type its type names: a type
  // substituted with these says which resources this very instance has
  // (validate::substitute_resources), as the one link check needs.
  std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef> run_time_resources() const;

  InstanceSpaces& spaces() { return spaces_; }
  const InstanceSpaces& spaces() const { return spaces_; }
  InstanceState& state() { return state_; }
  const InstanceState& state() const { return state_; }

 private:
  InstanceSpaces spaces_;
  InstanceState state_;
};

// Compiled core modules of one validated component, shared by its instances.
struct CompiledComponent {
  validate::Plan plan;
  std::vector<std::shared_ptr<engine::Module>> modules;  // parallel to plan.modules
  std::function<bool()> faster_code_check;                // engine::Artifact::faster_code_check
};

class Store {
 public:
  explicit Store(engine::Engine& engine);
  ~Store();

  // Limits for what the store's guests do from now on.
  void set_limits(const GuestLimits& limits, uint32_t table_entries, uint32_t waitables, uint64_t host_bytes);
  const GuestLimits& limits() const { return limits_; }
  const std::shared_ptr<HandleLimits>& handle_limits() { return handle_limits_; }
  // Counts an instance about to be made; a trap naming the limit past it.
  void count_instance();
  // Before the host enters `inst` (from outside any guest): once the
  // store's epoch deadline has passed, a trap that leaves `inst` as it is,
  // so an interruption ends the call it stopped and not every instance the
  // embedder calls next (Store::set_epoch_deadline moves the deadline).
  void check_deadline_before_entering(const ComponentInstance& inst) {
    if (metered_) [[unlikely]]
      check_metered_deadline(inst);
  }
  // A call into a guest, nested on those running: a trap past the limit.
  class CallDepth {
   public:
    explicit CallDepth(Store& store) : store_(store) {
      if (++store_.call_depth_ > store_.limits_.call_depth) [[unlikely]]
        too_deep();
    }
    ~CallDepth() { --store_.call_depth_; }
    CallDepth(const CallDepth&) = delete;
    CallDepth& operator=(const CallDepth&) = delete;

   private:
    [[noreturn]] void too_deep();
    Store& store_;
  };
  [[gnu::noinline]] void check_metered_deadline(const ComponentInstance& inst);

  engine::Store& core() { return *core_; }
  engine::Engine& engine() { return engine_; }

  // Instantiates a component; `imports` supplies every import by name.
  // Throws cmhost::Error: Link for missing or mistyped imports, Trap when a
  // start function or core instantiation traps.
  std::shared_ptr<ComponentInstance> instantiate(const CompiledComponent& component,
                                                 const std::map<std::string, Item, std::less<>>& imports);

  // Handles held by the host: own and borrow values the host received.
  HandleTable& host_handles() { return *host_handles_; }
  // Tasks, threads and the event loop of this store's instances.
  Scheduler& scheduler() { return *scheduler_; }

  // Host resources: a new own handle for `rep`, held by the host (pass it to
  // a guest as Val::own(handle)); the rep behind a host handle; dropping a
  // host-held own handle (runs the type's destructor).
  uint32_t new_resource(const ResourceTypeRef& type, uint32_t rep);

  // The embedder's object for this store (cmhost::Store sets it to itself),
  // which host functions reach through HostCall::store.
  void* embedder() const { return embedder_; }
  void set_embedder(void* embedder) { embedder_ = embedder; }
  uint32_t resource_rep(uint32_t handle);
  // The same, checking that the handle is one of `type`'s (InvalidValue).
  uint32_t resource_rep(uint32_t handle, const ResourceTypeRef& type);
  void drop_resource(uint32_t handle);

  // A new id for a call or a task, unique within the store.
  uint64_t next_call_id() { return next_call_id_++; }

 private:
  engine::Engine& engine_;
  std::unique_ptr<engine::Store> core_;
  const bool metered_;  // only metered engines have deadlines
  GuestLimits limits_;
  // Shared with the handle tables, which may outlive the store in instances
  // an embedder still holds.
  std::shared_ptr<HandleLimits> handle_limits_ = std::make_shared<HandleLimits>();
  uint32_t instances_made_ = 0;
  uint32_t call_depth_ = 0;
  std::vector<std::shared_ptr<ComponentInstance>> instances_;
  std::unique_ptr<HandleTable> host_handles_;
  uint64_t next_call_id_ = 1;
  void* embedder_ = nullptr;
  // After the instances: destroyed first, unwinding fibers that use them.
  std::unique_ptr<Scheduler> scheduler_;
};

// Compiles the core modules of a validated plan (as one artifact on an
// ahead-of-time backend, cached: Engine::cached_artifact).
CompiledComponent compile(engine::Engine& engine, validate::Plan plan, std::span<const uint8_t> bytes);
// The plan's core modules within the component's bytes; Validate when a
// range lies outside them.
std::vector<std::span<const uint8_t>> module_bytes(const validate::Plan& plan, std::span<const uint8_t> bytes);
// The same with the core modules an ahead-of-time backend compiled (in the
// plan's module order); Usage when the artifact holds another number.
CompiledComponent compile(const engine::Artifact& artifact, validate::Plan plan);

}  // namespace cmhost::runtime
