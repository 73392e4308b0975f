// Tasks (CanonicalABI.md "Tasks") and the callee side of `canon lift`.
//
// Every call of a lifted function is a task, synchronous ones included:
// context.get/set, borrow scopes and the reentrance rules hang off it. A
// task of a synchronous type runs inline on its caller's stack, with a task
// object from the scheduler's pool, so the synchronous call allocates
// nothing; an async-typed task runs its implicit thread on a fiber. Tasks
// are shared: threads, subtasks (to cancel them) and the embedder hold them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "call_context.hpp"
#include "runtime/runtime.hpp"
#include "lifted_call.hpp"
#include "scheduler.hpp"

namespace cmhost::runtime {

class Task : public std::enable_shared_from_this<Task> {
 public:
  enum class State : uint8_t { Initial, Started, PendingCancel, CancelDelivered, Resolved };

  explicit Task(Scheduler& scheduler) : scheduler_(scheduler) {}
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // What the task runs and for whom.
  ComponentInstance* inst = nullptr;
  const Func* func = nullptr;
  LiftedCallSteps* caller = nullptr;               // on_start / on_resolve
  std::shared_ptr<LiftedCallSteps> caller_owner;  // async calls: keeps `caller` alive until resolved
  State state = State::Initial;
  uint64_t id = 0;  // scopes the borrows lent to the task
  Thread* implicit_thread = nullptr;
  std::vector<Thread*> threads;
  Thread inline_thread;  // the implicit thread of a synchronous-typed task

  // An async task's side of the canonical ABI, for task.return.
  std::unique_ptr<GuestContext> callee_abi;  // the callee's side, while its core code runs
  // A synchronous call's core arguments and results: kept with the pooled
  // task, so a call allocates none once the pool is warm.
  std::vector<uint64_t> flat_args, core_results;

  bool async_type() const;
  bool needs_exclusive() const;  // async type, lifted synchronously or with a callback
  bool resolved() const { return state == State::Resolved; }

  // Task.enter_implicit_thread (false: cancelled while backpressure held it).
  bool enter_implicit_thread(Thread& thread);
  void register_thread(Thread& thread) {
    threads.push_back(&thread);
    thread.index = inst->state().threads->add(&thread);
  }
  void exit_implicit_thread();
  void unregister_thread(Thread& thread) {
    if (threads.back() == &thread)
      threads.pop_back();
    else
      threads.erase(std::find(threads.begin(), threads.end(), &thread));
    if (thread.index) inst->state().threads->remove(thread.index);
    thread.index = 0;
    if (threads.empty()) {
      if (state != State::Resolved) exited_unresolved();
      if (caller_owner) caller_owner.reset();
    }
  }
  // Forgets `thread` after a trap ended it, without the checks.
  void drop_thread(Thread& thread);
  void request_cancellation(ComponentInstance* caller);
  bool deliver_pending_cancel(bool cancellable);
  // start / return_ / cancel: on_start, on_resolve with a result or none.
  void start(abi::AbiContext& cx, std::vector<uint64_t>& flat_args) {
    state = State::Started;
    caller->lower_args(cx, flat_args);
  }
  void return_(abi::AbiContext& cx, std::span<const uint64_t> flat_results) {
    if (state == State::Resolved) returned_twice();
    if (callee_abi) check_callee_borrows();
    caller->lift_results(cx, flat_results);
    state = State::Resolved;
    caller = nullptr;
    if (caller_owner) caller_owner.reset();
  }
  void cancel();

  // Starts an async-typed lifted function: runs its implicit thread until it
  // first blocks or ends, entering the callee's instance meanwhile. Throws
  // Trap if the instance may not be entered from `caller`.
  static std::shared_ptr<Task> start_async(Store& store, const Func& func, std::shared_ptr<LiftedCallSteps> steps,
                                           ComponentInstance* caller);

  // The reference's may_enter_from / enter_from / leave_to over the
  // instances a call from `caller` (null: the host) enters: `inst` and its
  // ancestors, less the caller and its ancestors.
  static bool may_enter_from(const ComponentInstance& inst, const ComponentInstance* caller) {
    for (const ComponentInstance* i = &inst; i; i = i->state().parent)
      if (!i->state().may_enter && !in_chain(i, caller)) return false;
    return true;
  }
  static void set_may_enter(ComponentInstance& inst, const ComponentInstance* caller, bool value) {
    for (ComponentInstance* i = &inst; i; i = i->state().parent)
      if (!in_chain(i, caller)) i->state().may_enter = value;
  }
  // Traps when `inst` trapped earlier or may not be entered from `caller`.
  static void check_may_enter(const ComponentInstance& inst, const ComponentInstance* caller) {
    if (inst.state().poisoned || !may_enter_from(inst, caller)) cannot_enter(inst);
  }

  // Back to the state of a new task, for reuse. A synchronous call only
  // touches a few fields; anything async is cleared by reset_fully.
  void reset() {
    if (caller_owner || callee_abi || !threads.empty() || state == State::PendingCancel) return reset_fully();
    inst = nullptr;
    func = nullptr;
    caller = nullptr;
    state = State::Initial;
    implicit_thread = nullptr;
    inline_thread.reset_inline();
  }
  void reset_fully();

 private:
  static bool in_chain(const ComponentInstance* inst, const ComponentInstance* chain) {
    for (; chain; chain = chain->state().parent)
      if (chain == inst) return true;
    return false;
  }
  [[noreturn]] static void cannot_enter(const ComponentInstance& inst);
  [[noreturn]] static void exited_unresolved();
  [[noreturn]] static void returned_twice();
  void check_callee_borrows();
  void run_implicit_thread(Store& store);
  void run_callback_loop(Store& store, Thread& thread, uint64_t packed);

  Scheduler& scheduler_;
};

// Marks the instances a call enters as entered for its synchronous part.
class Entering {
 public:
  Entering(ComponentInstance& inst, const ComponentInstance* caller) : inst_(inst), caller_(caller) {
    Task::set_may_enter(inst_, caller_, false);
  }
  ~Entering() { Task::set_may_enter(inst_, caller_, true); }
  Entering(const Entering&) = delete;
  Entering& operator=(const Entering&) = delete;

 private:
  ComponentInstance& inst_;
  const ComponentInstance* caller_;
};

}  // namespace cmhost::runtime
