#include "task.hpp"

#include <algorithm>

#include "cmhost/error.hpp"
#include "call_context.hpp"
#include "handles.hpp"
#include "waitables.hpp"

namespace cmhost::runtime {

namespace {

// Callback codes of an async lift with a callback.
enum CallbackCode : uint32_t { kExit = 0, kYield = 1, kWait = 2, kMaxCode = 2 };

}  // namespace

// ---- entering instances ----

void Task::cannot_enter(const ComponentInstance& inst) {
  if (inst.state().poisoned) throw_trap("cannot enter component instance `" + inst.name() + "`: it trapped earlier");
  throw_trap("cannot enter component instance `" + inst.name() + "` while it is running");
}

// ---- the task's state ----

bool Task::async_type() const { return func->type().async; }

bool Task::needs_exclusive() const { return !func->lifted().async_lift || func->lifted().callback.has_value(); }

void Task::reset_fully() {
  inst = nullptr;
  func = nullptr;
  caller = nullptr;
  if (caller_owner) caller_owner.reset();
  state = State::Initial;
  id = 0;
  implicit_thread = nullptr;
  threads.clear();
  inline_thread.reset_inline();
  if (callee_abi) callee_abi.reset();
}

bool Task::enter_implicit_thread(Thread& thread) {
  implicit_thread = &thread;
  if (async_type()) {
    auto has_backpressure = [this] {
      return inst->state().backpressure > 0 || (needs_exclusive() && inst->state().exclusive_thread != nullptr);
    };
    if (has_backpressure() || inst->state().num_waiting_to_enter > 0) {
      ++inst->state().num_waiting_to_enter;
      // Queued: tasks enter in the order they arrived.
      const bool cancelled =
          scheduler_.wait_until(thread, [has_backpressure] { return !has_backpressure(); }, true, true);
      --inst->state().num_waiting_to_enter;
      if (cancelled) {
        cancel();
        return false;
      }
    }
    if (needs_exclusive()) inst->state().exclusive_thread = &thread;
  }
  register_thread(thread);
  return true;
}


void Task::exit_implicit_thread() {
  Thread& thread = *implicit_thread;
  if (async_type() && needs_exclusive() && inst->state().exclusive_thread == &thread) inst->state().exclusive_thread = nullptr;
  implicit_thread = nullptr;
  unregister_thread(thread);
}

void Task::exited_unresolved() {
  throw_trap("task exited without returning a result (task.return was not called)");
}

void Task::drop_thread(Thread& thread) {
  auto it = std::find(threads.begin(), threads.end(), &thread);
  if (it != threads.end()) threads.erase(it);
  if (thread.index) inst->state().threads->remove(thread.index);
  thread.index = 0;
  if (inst->state().exclusive_thread == &thread) inst->state().exclusive_thread = nullptr;
  if (implicit_thread == &thread) implicit_thread = nullptr;
  if (threads.empty()) {
    caller_owner.reset();
    caller = nullptr;
  }
}

void Task::request_cancellation(ComponentInstance* caller_inst) {
  if (state == State::Initial) {
    state = State::CancelDelivered;
    scheduler_.resume(*implicit_thread, true);
    return;
  }
  std::vector<Thread*> candidates;
  for (Thread* t : threads)
    if (t->cancellable() && !t->running()) candidates.push_back(t);
  if (needs_exclusive() && inst->state().exclusive_thread && inst->state().exclusive_thread != implicit_thread)
    std::erase(candidates, implicit_thread);
  if (!candidates.empty() && may_enter_from(*inst, caller_inst)) {
    state = State::CancelDelivered;
    Entering entering(*inst, caller_inst);
    scheduler_.resume(*candidates.front(), true);
  } else {
    state = State::PendingCancel;
  }
}

bool Task::deliver_pending_cancel(bool cancellable) {
  if (cancellable && state == State::PendingCancel) {
    state = State::CancelDelivered;
    return true;
  }
  return false;
}

void Task::returned_twice() { throw_trap("task.return called more than once (the task already returned)"); }

void Task::check_callee_borrows() { callee_abi->handles().check_borrows_dropped(); }

void Task::cancel() {
  if (state != State::CancelDelivered) throw_trap("task.cancel called when no cancellation was delivered");
  if (auto* abi = callee_abi.get()) abi->handles().check_borrows_dropped();
  caller->cancelled();
  state = State::Resolved;
  caller = nullptr;
  caller_owner.reset();
}

// ---- async lifts ----

std::shared_ptr<Task> Task::start_async(Store& store, const Func& func, std::shared_ptr<LiftedCallSteps> steps,
                                        ComponentInstance* caller_inst) {
  ComponentInstance& inst = *func.lifted().instance;
  check_may_enter(inst, caller_inst);
  if (!caller_inst) store.check_deadline_before_entering(inst);
  Entering entering(inst, caller_inst);
  Scheduler& scheduler = store.scheduler();
  std::shared_ptr<Task> task = scheduler.new_task();
  task->inst = &inst;
  task->func = &func;
  task->caller = steps.get();
  task->caller_owner = std::move(steps);
  task->id = store.next_call_id();
  Store* store_ptr = &store;
  Thread& thread = scheduler.new_fiber_thread(task.get(), &inst, [task, store_ptr] {
    try {
      task->run_implicit_thread(*store_ptr);
    } catch (...) {
      // A trap (or the store unwinding) ends the thread: forget it, and
      // poison the instance it trapped in.
      if (Thread* self = store_ptr->scheduler().current()) task->drop_thread(*self);
      task->callee_abi.reset();
      try {
        throw;
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Trap) task->inst->state().poisoned = true;
        throw;
      }
    }
    task->callee_abi.reset();
  });
  scheduler.resume(thread);
  return task;
}

void Task::run_implicit_thread(Store& store) {
  Thread& thread = *store.scheduler().current();
  if (!enter_implicit_thread(thread)) return;
  callee_abi = std::make_unique<GuestContext>(store, *inst, func->lifted().memory, func->lifted().realloc, func->lifted().abi->options(), id);
  abi::AbiContext& cx = callee_abi->cx();
  std::vector<uint64_t> flat_args;
  start(cx, flat_args);

  if (!func->lifted().async_lift) {
    // An async type lifted synchronously: the core function returns the
    // result, then post-return runs.
    std::vector<uint64_t> flat_results;
    CoreCall::run(store, *inst, *func, flat_args, flat_results, [&](std::span<const uint64_t> results) {
      cx.refresh();
      return_(cx, results);
    });
    exit_implicit_thread();
    return;
  }
  if (!func->lifted().callback) {
    store.core().call(func->lifted().core_func, flat_args, {});
    exit_implicit_thread();
    return;
  }
  uint64_t packed = 0;
  store.core().call(func->lifted().core_func, flat_args, std::span<uint64_t>(&packed, 1));
  run_callback_loop(store, thread, packed);
  exit_implicit_thread();
}

void Task::run_callback_loop(Store& store, Thread& thread, uint64_t packed) {
  Scheduler& scheduler = store.scheduler();
  ComponentInstance* instance = inst;
  auto not_exclusive = [instance] { return instance->state().exclusive_thread == nullptr; };
  const size_t callback_params = func->lifted().callback_params;
  for (;;) {
    const uint32_t code = packed & 0xf;
    const uint32_t set_index = static_cast<uint32_t>(packed >> 4);
    if (code > kMaxCode) throw_trap("unsupported callback code " + std::to_string(code));
    if (code == kExit) return;
    inst->state().exclusive_thread = nullptr;
    Event event{EventCode::None, 0, 0};
    if (code == kYield) {
      if (scheduler.wait_until(thread, not_exclusive, true, true)) event = {EventCode::TaskCancelled, 0, 0};
    } else {
      auto& set = inst->state().handles->get<WaitableSet>(set_index, HandleKind::WaitableSet);
      event = set.wait_for_event_and(scheduler, thread, not_exclusive, true);
    }
    inst->state().exclusive_thread = &thread;
    const uint64_t args[3] = {static_cast<uint64_t>(event.code), event.index, event.payload};
    store.core().call(*func->lifted().callback, std::span<const uint64_t>(args, callback_params),
                      std::span<uint64_t>(&packed, 1));
  }
}

}  // namespace cmhost::runtime
