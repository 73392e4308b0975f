#include "cmhost/abi/host_memory.hpp"
#include "cmhost/error.hpp"
#include "runtime/runtime.hpp"
#include "call_context.hpp"
#include "lifted_call.hpp"
#include "task.hpp"

namespace cmhost::runtime {

FuncRef Func::host(std::shared_ptr<const validate::FuncType> type, HostCallback callback) {
  auto f = std::shared_ptr<Func>(new Func());
  f->type_ = std::move(type);
  f->host_ = std::move(callback);
  return f;
}

FuncRef Func::host_async(std::shared_ptr<const validate::FuncType> type, std::string name,
                         AsyncHostCallback callback) {
  auto f = std::shared_ptr<Func>(new Func());
  f->type_ = std::move(type);
  f->host_ = AsyncHostFunc{std::move(callback), std::move(name)};
  return f;
}

std::vector<abi::TypeRef> results_of(const validate::FuncType& type) {
  if (type.result) return {type.result};
  return {};
}

FuncRef Func::lift(std::shared_ptr<const validate::FuncType> type, LiftedFunc lifted) {
  auto f = std::shared_ptr<Func>(new Func());
  f->type_ = std::move(type);
  f->lifted_ = std::move(lifted);
  return f;
}

FuncRef Func::host_flat(std::shared_ptr<const validate::FuncType> type, FlatHostCallback callback) {
  auto abi = std::make_shared<const abi::FunctionAbi>(type->params, results_of(*type), abi::CanonOptions{});
  auto f = std::shared_ptr<Func>(new Func());
  f->type_ = std::move(type);
  f->host_ = FlatHostFunc{std::move(callback), std::move(abi)};
  return f;
}

namespace {

// A flat host function called with Vals: lowered into memory of its own, as
// a guest's would hold them, and its result lifted from there.
std::vector<abi::Val> call_flat_with_vals(const FlatHostCallback& callback, const abi::FunctionAbi& abi,
                                          HostCall& call, std::span<const abi::Val> args) {
  abi::HostMemory scratch(8, 8);
  scratch.set_grow_on_demand(true);
  scratch.set_log_allocations(false);
  abi::AbiContext cx(&scratch, abi.options());
  std::vector<uint64_t> flat;
  abi.lower_args(cx, args, flat);  // spilled as a guest's lower spills them
  if (abi.results().empty()) {
    callback(call, cx, abi, flat, {});
    return std::vector<abi::Val>{};
  }
  uint64_t result = 0;
  const bool through_memory = abi.results_spilled();
  if (through_memory) {
    const abi::Layout& layout = abi.results()[0]->layout(abi::AddrWidth::I32);
    result = cx.realloc(0, 0, layout.align, layout.size);
    flat.push_back(result);
  }
  callback(call, cx, abi, flat, through_memory ? std::span<uint64_t>() : std::span<uint64_t>(&result, 1));
  cx.refresh();
  return abi.lift_results(cx, std::span<const uint64_t>(&result, 1));
}

void check_result_count(const validate::FuncType& type, const std::vector<abi::Val>& results) {
  const size_t want = type.result ? 1 : 0;
  if (results.size() != want)
    throw_invalid_value("host function returned " + std::to_string(results.size()) +
                        " results, its type has " + std::to_string(want));
}

}  // namespace

namespace {

// The host's side of a call: arguments from Vals, results into Vals.
class ValSteps final : public LiftedCallSteps {
 public:
  ValSteps(const abi::FunctionAbi& abi, std::span<const abi::Val> args) : abi_(abi), args_(args) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    abi_.lower_args(callee, args_, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    results = abi_.lift_results(callee, flat);
  }
  std::vector<abi::Val> results;

 private:
  const abi::FunctionAbi& abi_;
  std::span<const abi::Val> args_;
};

// Arguments from Vals; the result handed over where the callee left it.
class ReadingSteps final : public LiftedCallSteps {
 public:
  ReadingSteps(const abi::FunctionAbi& abi, std::span<const abi::Val> args, const Func::ResultReader& read)
      : abi_(abi), args_(args), read_(read) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    abi_.lower_args(callee, args_, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    read_(abi::typed::CallResult{callee, flat, abi_.results_spilled()});
  }

 private:
  const abi::FunctionAbi& abi_;
  std::span<const abi::Val> args_;
  const Func::ResultReader& read_;
};

// Arguments written by the caller's lowerer (a typed call); the result
// handed over where the callee left it.
class LoweringSteps final : public LiftedCallSteps {
 public:
  LoweringSteps(const abi::FunctionAbi& abi, const Func::ArgLowerer& lower, const Func::ResultReader& read)
      : abi_(abi), lower_(lower), read_(read) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override { lower_(callee, flat); }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    read_(abi::typed::CallResult{callee, flat, abi_.results_spilled()});
  }

 private:
  const abi::FunctionAbi& abi_;
  const Func::ArgLowerer& lower_;
  const Func::ResultReader& read_;
};

// The host's side of a call of an async function: the task may start after
// the call that created it returned (backpressure), so it keeps the values.
class AsyncValSteps final : public LiftedCallSteps {
 public:
  AsyncValSteps(Store& store, std::shared_ptr<const abi::FunctionAbi> abi, std::span<const abi::Val> args,
                std::shared_ptr<AsyncCallResult> result)
      : store_(store), abi_(std::move(abi)), args_(args.begin(), args.end()), result_(std::move(result)) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    lowered_ = true;
    abi_->lower_args(callee, args_, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    result_->results = abi_->lift_results(callee, flat);
    result_->resolved = true;
  }
  void cancelled() override {
    result_->resolved = true;
    result_->cancelled = true;
    // Cancelled before it started: the arguments never went to the callee,
    // so the host objects they own are the host's to drop, as the caller's
    // handles stay the caller's in a call between components.
    if (!lowered_)
      for (const abi::Val& arg : args_) drop_owned(arg);
  }

 private:
  void drop_owned(const abi::Val& value) {
    if (value.kind() == abi::ValKind::Own) return store_.drop_resource(value.as_handle());
    for (const abi::Val& item : value.items()) drop_owned(item);
  }

  Store& store_;
  std::shared_ptr<const abi::FunctionAbi> abi_;
  std::vector<abi::Val> args_;
  std::shared_ptr<AsyncCallResult> result_;
  bool lowered_ = false;
};

// Makes a synchronous task's inline thread current for the call and gives
// its task back to the pool afterwards.
class InlineTask {
 public:
  InlineTask(Scheduler& scheduler, std::shared_ptr<Task> task)
      : scheduler_(scheduler), task_(std::move(task)), previous_(scheduler.enter_inline(task_->inline_thread)) {}
  ~InlineTask() {
    Thread& thread = task_->inline_thread;
    if (thread.index) task_->drop_thread(thread);  // a trap ended it
    scheduler_.leave_inline(thread, previous_);
    // Still referenced (a thread it spawned lives on): freed later.
    if (task_.use_count() == 1) {
      task_->reset();
      scheduler_.recycle_reset(std::move(task_));
    }
  }
  InlineTask(const InlineTask&) = delete;
  InlineTask& operator=(const InlineTask&) = delete;

 private:
  Scheduler& scheduler_;
  std::shared_ptr<Task> task_;
  Thread* previous_;
};

}  // namespace

void Func::call_reading(Store& store, std::span<const abi::Val> args, const ResultReader& read) const {
  if (is_host()) throw Error(ErrorKind::Usage, "host functions return Vals: call them with call()");
  ReadingSteps steps(*lifted_.abi, args, read);
  call_lifted(store, steps);
}

void Func::call_lowering(Store& store, const ArgLowerer& lower, const ResultReader& read) const {
  if (is_host() || type_->async) throw Error(ErrorKind::Usage, "flat calls are for lifted functions of synchronous types");
  // The arity is the caller's to get right (TypedFunc checks it once); the
  // engine refuses a core call of the wrong arity anyway.
  if (lifted_.abi->params_spilled(abi::AbiSide::Lift))
    throw Error(ErrorKind::Usage, "the function's parameters are passed in memory, not as flat values");
  LoweringSteps steps(*lifted_.abi, lower, read);
  call_lifted(store, steps);
}

std::vector<abi::Val> Func::call_host(HostCall& call, std::span<const abi::Val> args) const {
  if (!is_host()) throw Error(ErrorKind::Usage, "call_host calls host functions");
  if (args.size() != type_->params.size())
    throw_invalid_value("expected " + std::to_string(type_->params.size()) + " arguments, got " +
                        std::to_string(args.size()));
  std::vector<abi::Val> results;
  if (const auto* vals = std::get_if<HostCallback>(&host_)) {
    results = (*vals)(call, args);
  } else if (const auto* flat = std::get_if<FlatHostFunc>(&host_)) {
    results = call_flat_with_vals(flat->callback, *flat->abi, call, args);
  } else {
    throw Error(ErrorKind::Usage, "`" + std::get<AsyncHostFunc>(host_).name +
                                      "` is an async host function: guests call it, through the event loop");
  }
  check_result_count(*type_, results);
  return results;
}

std::vector<abi::Val> Func::call(Store& store, std::span<const abi::Val> args) const {
  if (is_host()) {
    HostCall call{store};
    return call_host(call, args);
  }
  if (!type_->async) {
    ValSteps steps(*lifted_.abi, args);
    call_lifted(store, steps);
    return std::move(steps.results);
  }
  const std::shared_ptr<const AsyncCallResult> result = call_async(store, args);
  store.scheduler().run_until([&result] { return result->resolved; });
  return std::move(const_cast<AsyncCallResult&>(*result).results);
}

std::shared_ptr<const AsyncCallResult> Func::call_async(Store& store, std::span<const abi::Val> args) const {
  auto result = std::make_shared<AsyncCallResult>();
  if (is_host() || !type_->async) {
    result->results = call(store, args);
    result->resolved = true;
    return result;
  }
  auto steps = std::make_shared<AsyncValSteps>(store, lifted_.abi, args, result);
  result->task = Task::start_async(store, *this, std::move(steps), nullptr);
  return result;
}

void cancel_async_call(Store& store, AsyncCallResult& call) {
  if (call.resolved || call.cancel_requested) return;
  const std::shared_ptr<Task> task = call.task.lock();
  if (!task || task->resolved() || !task->inst || task->inst->state().poisoned) {
    call.cancel_requested = true;
    return;
  }
  // Refused before it counts: a refused cancel can be asked again from the loop.
  if (store.scheduler().current())
    throw Error(ErrorKind::Usage, "a call is cancelled from the embedder's loop, not inside a guest's call");
  call.cancel_requested = true;
  task->request_cancellation(nullptr);
}

void Func::call_lifted(Store& store, LiftedCallSteps& steps, ComponentInstance* caller) const {
  if (type_->async) throw Error(ErrorKind::Usage, "call_lifted runs functions of synchronous types");
  ComponentInstance& inst = *lifted_.instance;
  Task::check_may_enter(inst, caller);
  if (!caller) store.check_deadline_before_entering(inst);
  Store::CallDepth depth(store);
  Entering entering(inst, caller);
  Scheduler& scheduler = store.scheduler();
  std::shared_ptr<Task> task_ref = scheduler.new_task();
  Task& task = *task_ref;
  task.inst = &inst;
  task.func = this;
  task.caller = &steps;
  task.id = store.next_call_id();
  Thread& thread = task.inline_thread;
  thread.task = &task;
  thread.inst = &inst;
  InlineTask running(scheduler, std::move(task_ref));
  try {
    task.implicit_thread = &thread;
    task.register_thread(thread);
    GuestContext callee(store, inst, lifted_.memory, lifted_.realloc, lifted_.abi->options(), task.id, lifted_.moves_handles);
    abi::AbiContext& cx = callee.cx();
    std::vector<uint64_t>& flat = task.flat_args;
    flat.clear();
    task.start(cx, flat);
    CoreCall::run(store, inst, *this, flat, task.core_results, [&](std::span<const uint64_t> results) {
      if (lifted_.moves_handles) callee.handles().check_borrows_dropped();
      cx.refresh();  // the callee may have grown memory
      task.return_(cx, results);
    });
    // A synchronous type never holds the instance exclusively.
    task.implicit_thread = nullptr;
    task.unregister_thread(thread);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Trap) inst.state().poisoned = true;
    throw;
  } catch (...) {
    inst.state().poisoned = true;  // a host's own exception cut the guest's code short
    throw;
  }
}

}  // namespace cmhost::runtime
