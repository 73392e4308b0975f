// Threads and their scheduling (CanonicalABI.md "Stack Switching",
// "Threads" and the Store's tick).
//
// A thread runs either on a fiber of its own, or inline: on the stack of
// whoever started it. Tasks of synchronous function types run inline: the
// reference runs such a task to completion before its caller continues,
// resuming only other threads of the callee's instance while it waits, so
// nothing needs its stack to outlive the call, and a synchronous call costs
// no fiber. When an inline thread blocks, it runs that loop itself, on its
// own stack. Every other thread (async tasks, thread.new-indirect) gets a
// fiber, so it can block in the middle of core wasm and resume later.
//
// Scheduling is deterministic: among ready threads the one waiting longest
// runs first (the reference picks at random; any choice is conforming).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string_view>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost/function_ref.hpp"
#include "fiber.hpp"

namespace cmhost::runtime {

class ComponentInstance;
class Task;
class Scheduler;
class PostBox;

// The host's side of the event loop (the host room implements it): host
// copies waiting for a guest's, and async host calls completing, maybe from
// other OS threads.
class HostDriver {
 public:
  virtual ~HostDriver() = default;
  // Runs the host work that can go on now; true when any did.
  virtual bool run_ready() = 0;
  // Waits until work arrives from outside the loop (another thread
  // completing a host call); false at once when none is outstanding.
  virtual bool wait_for_outside() = 0;
  // Runs the host work that waited for nothing else to be ready; true
  // when any did.
  virtual bool run_idle() { return false; }
  // What the host waits for, for a deadlock's message (empty: nothing).
  virtual std::string pending() const = 0;
  // Where async host calls post their completions, and one more of them
  // outstanding (the loop waits for it rather than calling a stall a deadlock).
  virtual const std::shared_ptr<PostBox>& post_box() const = 0;
  virtual void call_started() = 0;
  // Runs the host's callbacks that guests' calls deferred (a host copy
  // that met a guest's inside its built-in), before the loop hands control
  // back to the embedder.
  virtual void settle() {}
  // The same before a host function a guest calls runs; failures wait for
  // the loop.
  virtual void settle_in_guest_call() {}
};

class Thread {
 public:
  using ReadyFunc = std::function<bool()>;

  Task* task = nullptr;                // null: core code outside any task (start functions)
  ComponentInstance* inst = nullptr;  // the instance it runs in
  uint32_t index = 0;                  // in inst's thread table, 0 when not registered
  uint64_t storage[2] = {0, 0};        // context.get / context.set
  // Blocked on an async host function through a synchronous lower: only
  // then may its inline loop sleep until another thread completes a call.
  bool waits_on_host = false;

  bool is_fiber() const { return fiber_ != nullptr; }
  bool running() const { return running_; }
  bool waiting() const { return !running_ && static_cast<bool>(ready_func_); }
  bool suspended() const { return !running_ && !ready_func_ && !finished_; }
  bool ready() const { return waiting() && ready_func_(); }
  bool cancellable() const { return cancellable_; }
  // Back to a new inline thread's state (a pooled task's implicit thread).
  void reset_inline() {
    index = 0;
    storage[0] = storage[1] = 0;
    if (ready_func_) ready_func_ = nullptr;
    running_ = cancellable_ = finished_ = in_own_loop_ = resumed_inline_ = block_result_ = waits_on_host = false;
    switch_to_ = nullptr;
  }

 private:
  friend class Scheduler;
  ReadyFunc ready_func_;  // set while waiting
  bool running_ = false;
  bool cancellable_ = false;
  bool finished_ = false;
  bool in_own_loop_ = false;  // inline and blocked: its loop runs on the stack below
  bool resumed_inline_ = false;
  bool block_result_ = false;       // cancelled
  Thread* switch_to_ = nullptr;     // handed to the resumer when blocking
  // Fiber threads:
  std::unique_ptr<Fiber> fiber_;
  std::unique_ptr<engine::Store::ExecutionStack> engine_stack_;
  std::function<void()> body_;
  std::exception_ptr failure_;  // what ended the body, rethrown by the resumer
  bool unwinding_ = false;      // the store is going away: blocking throws
};

class Scheduler {
 public:
  explicit Scheduler(engine::Store& core);
  // Unwinds every fiber still suspended (their frames hold resources).
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Thread* current() const { return current_; }
  // The thread a built-in acts for: the running one, or, when core code
  // runs outside any task (a start function), a thread of no task.
  Thread& current_or_root() { return current_ ? *current_ : root_; }
  // Makes `thread` current (an inline thread starting) and returns the
  // previous one, for restore_current.
  Thread* enter_inline(Thread& thread) {
    thread.running_ = true;
    return std::exchange(current_, &thread);
  }
  void leave_inline(Thread& thread, Thread* previous) {
    thread.running_ = false;
    thread.finished_ = true;
    current_ = previous;
  }

  // A suspended thread on a new fiber; `body` runs when it is first resumed.
  Thread& new_fiber_thread(Task* task, ComponentInstance* inst, std::function<void()> body);

  // The reference's Thread.resume: runs `thread` (and any thread it
  // switches to) until it blocks or ends. A trap in it is rethrown here.
  void resume(Thread& thread, bool cancelled = false);
  // Blocks the running `thread`: it is waiting (wait_until) or suspended;
  // `switch_to` runs next. Returns whether it was resumed as cancelled.
  bool block(Thread& thread, bool cancellable, Thread* switch_to = nullptr);
  void start_waiting(Thread& thread, Thread::ReadyFunc ready);
  void stop_waiting(Thread& thread);

  // Thread.wait_until / yield_ / suspend and the *-then-* variants. When
  // `ready` already holds, wait_until returns at once (the reference may
  // either return or block; returning is what the suite expects), unless
  // `queue` asks it to wait its turn behind the threads already waiting.
  bool wait_until(Thread& thread, Thread::ReadyFunc ready, bool cancellable, bool queue = false);
  bool yield(Thread& thread, bool cancellable) { return wait_until(thread, [] { return true; }, cancellable, true); }
  bool suspend(Thread& thread, bool cancellable);
  bool suspend_then_resume(Thread& thread, bool cancellable, Thread& other);
  bool yield_then_resume(Thread& thread, bool cancellable, Thread& other);
  bool suspend_then_promote(Thread& thread, bool cancellable, Thread& other);
  bool yield_then_promote(Thread& thread, bool cancellable, Thread& other);
  // Marks a suspended thread ready (thread.resume-later).
  void resume_later(Thread& thread);

  // The embedder's event loop (Store.tick until `done`): runs the host's
  // ready work, then the ready thread that waited longest, entering its
  // instance; with neither, waits for work from outside the loop. Traps
  // when nothing can make progress and `done` is still false, naming
  // `waiting_for` and what is pending.
  void run_until(FunctionRef<bool()> done, std::string_view waiting_for = "the call's result");
  // Runs until no thread is ready and no host work can go on now.
  void run_until_idle();
  // One step of the loop: false when nothing could run.
  bool step();
  // Blocked threads, for a deadlock's message.
  std::string describe_blocked() const;
  void set_host_driver(HostDriver* driver) { driver_ = driver; }
  // Host work that failed while a synchronous task's own loop ran it: kept
  // for the embedder's loop, so it does not unwind an unrelated guest.
  void defer_host_failure(std::exception_ptr failure) {
    if (!deferred_failure_) deferred_failure_ = std::move(failure);
  }
  HostDriver* host_driver() const { return driver_; }

  // Task objects, reused so a synchronous call allocates none. The last one
  // a synchronous call gave back is kept aside: the next call takes it
  // without touching the pool. Tasks come back reset (Task::reset).
  std::shared_ptr<Task> new_task() {
    if (last_task_) return std::move(last_task_);
    return new_pooled_task();
  }
  void recycle_reset(std::shared_ptr<Task> task) {
    if (!last_task_)
      last_task_ = std::move(task);
    else
      pool_task(std::move(task));
  }
  void recycle(std::shared_ptr<Task> task);

  // Unwinds every fiber still suspended; the scheduler is unusable after.
  void shutdown();

 private:
  static void run_fiber(void* thread);
  std::shared_ptr<Task> new_pooled_task();
  void pool_task(std::shared_ptr<Task> task);
  // Runs one thread until it blocks or ends; returns the thread it switched to.
  Thread* run(Thread& thread);
  bool block_inline(Thread& thread, Thread* switch_to);
  Thread* next_ready(const ComponentInstance* only_in) const;
  void finish(Thread& thread);

  engine::Store& core_;
  StackPool stacks_;
  std::vector<std::unique_ptr<engine::Store::ExecutionStack>> spare_engine_stacks_;
  std::vector<std::shared_ptr<Task>> spare_tasks_;
  std::shared_ptr<Task> last_task_;
  Thread* current_ = nullptr;
  HostDriver* driver_ = nullptr;
  std::exception_ptr deferred_failure_;
  Thread root_;
  std::vector<Thread*> waiting_;                   // in the order they started waiting
  std::vector<std::unique_ptr<Thread>> fibers_;    // live fiber threads
};

// Thrown into a fiber whose store is being destroyed, to unwind its frames.
struct FiberUnwind {};

}  // namespace cmhost::runtime
