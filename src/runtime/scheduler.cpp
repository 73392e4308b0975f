#include "scheduler.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "cmhost/error.hpp"
#include "handles.hpp"
#include "task.hpp"

namespace cmhost::runtime {

Scheduler::Scheduler(engine::Store& core) : core_(core) {}

Scheduler::~Scheduler() { shutdown(); }

void Scheduler::shutdown() {
  // A suspended fiber is in the middle of core wasm and host frames: resume
  // it with blocking turned into an exception so every frame unwinds.
  for (;;) {
    auto it = std::find_if(fibers_.begin(), fibers_.end(), [](const std::unique_ptr<Thread>& t) {
      return t->fiber_->started() && !t->finished_ && !t->running_;
    });
    if (it == fibers_.end()) break;
    Thread& victim = **it;
    victim.unwinding_ = true;
    if (victim.waiting()) stop_waiting(victim);
    try {
      run(victim);
    } catch (...) {
      // Whatever ended it, the store is going away.
    }
  }
  waiting_.clear();
  fibers_.clear();
  spare_tasks_.clear();
  last_task_.reset();
}

std::shared_ptr<Task> Scheduler::new_pooled_task() {
  if (spare_tasks_.empty()) return std::make_shared<Task>(*this);
  std::shared_ptr<Task> task = std::move(spare_tasks_.back());
  spare_tasks_.pop_back();
  return task;
}

void Scheduler::pool_task(std::shared_ptr<Task> task) {
  constexpr size_t kKept = 64;
  if (spare_tasks_.size() < kKept) spare_tasks_.push_back(std::move(task));
}

void Scheduler::recycle(std::shared_ptr<Task> task) {
  // Still referenced (a thread it spawned lives on): it is freed later.
  if (task.use_count() != 1) return;
  task->reset();
  recycle_reset(std::move(task));
}

Thread& Scheduler::new_fiber_thread(Task* task, ComponentInstance* inst, std::function<void()> body) {
  auto thread = std::make_unique<Thread>();
  thread->task = task;
  thread->inst = inst;
  thread->body_ = std::move(body);
  thread->fiber_ = std::make_unique<Fiber>(stacks_, &Scheduler::run_fiber, thread.get());
  if (!spare_engine_stacks_.empty()) {
    thread->engine_stack_ = std::move(spare_engine_stacks_.back());
    spare_engine_stacks_.pop_back();
  } else {
    thread->engine_stack_ = core_.new_execution_stack();
  }
  // Compiled guests check their recursion against the fiber's own stack.
  thread->engine_stack_->bind_native_stack(thread->fiber_->stack_low(), thread->fiber_->stack_size());
  fibers_.push_back(std::move(thread));
  return *fibers_.back();
}

void Scheduler::run_fiber(void* argument) {
  Thread& thread = *static_cast<Thread*>(argument);
  try {
    thread.body_();
  } catch (const FiberUnwind&) {
  } catch (...) {
    thread.failure_ = std::current_exception();
  }
  // Captures (the task) go now, while this stack is still live.
  thread.body_ = nullptr;
  thread.finished_ = true;
  thread.running_ = false;
}

Thread* Scheduler::run(Thread& thread) {
  if (!thread.is_fiber()) {
    // An inline thread blocked in its own loop, further down the stack:
    // that loop sees the resumption when control gets back to it.
    thread.resumed_inline_ = true;
    return nullptr;
  }
  Thread* previous = current_;
  current_ = &thread;
  thread.running_ = true;
  thread.switch_to_ = nullptr;
  engine::Store::ExecutionStack* previous_stack = core_.switch_execution_stack(thread.engine_stack_.get());
  thread.fiber_->resume();
  core_.switch_execution_stack(previous_stack);
  current_ = previous;
  if (thread.finished_) {
    finish(thread);
    return nullptr;
  }
  return thread.switch_to_;
}

void Scheduler::finish(Thread& thread) {
  std::exception_ptr failure = std::move(thread.failure_);
  auto it = std::find_if(fibers_.begin(), fibers_.end(),
                         [&](const std::unique_ptr<Thread>& t) { return t.get() == &thread; });
  if (it != fibers_.end()) {
    std::unique_ptr<Thread> done = std::move(*it);
    fibers_.erase(it);
    constexpr size_t kKept = 16;
    if (spare_engine_stacks_.size() < kKept) spare_engine_stacks_.push_back(std::move(done->engine_stack_));
  }
  if (failure) std::rethrow_exception(failure);
}

void Scheduler::resume(Thread& thread, bool cancelled) {
  if (thread.waiting()) stop_waiting(thread);
  Thread* next = &thread;
  while (next) {
    next->block_result_ = cancelled;
    next = run(*next);
    cancelled = false;
  }
}

bool Scheduler::block(Thread& thread, bool cancellable, Thread* switch_to) {
  thread.cancellable_ = cancellable;
  if (!thread.is_fiber()) return block_inline(thread, switch_to);
  thread.switch_to_ = switch_to;
  thread.running_ = false;
  thread.fiber_->suspend();
  thread.running_ = true;
  if (thread.unwinding_) throw FiberUnwind{};
  return thread.block_result_;
}

// The loop `canon lift` runs for a task of a synchronous type while its
// thread waits: other threads of the same instance run until this one is
// resumed. With none ready the task can never finish.
bool Scheduler::block_inline(Thread& self, Thread* switch_to) {
  self.running_ = false;
  self.in_own_loop_ = true;
  self.resumed_inline_ = false;
  self.block_result_ = false;
  auto done_blocking = [&] {
    self.in_own_loop_ = false;
    self.running_ = true;
    current_ = &self;
  };
  try {
    Thread* next = switch_to;
    for (;;) {
      while (next && next != &self) next = run(*next);
      if (next == &self || self.resumed_inline_) break;
      Thread* candidate = self.task ? next_ready(self.inst) : nullptr;
      if (!candidate) {
        // Host work may wake it: a copy, or the async host call it waits
        // for completing (maybe on another thread). Host work failing here
        // is not this task's failure: the embedder's loop reports it.
        bool progressed = false;
        if (driver_) {
          try {
            progressed = driver_->run_ready();
          } catch (...) {
            defer_host_failure(std::current_exception());
            progressed = true;
          }
        }
        if (progressed || (driver_ && self.waits_on_host && driver_->wait_for_outside())) continue;
        throw_trap("cannot block a synchronous task before returning");
      }
      stop_waiting(*candidate);
      if (candidate == &self) break;
      candidate->block_result_ = false;
      next = candidate;
    }
  } catch (...) {
    if (self.waiting()) stop_waiting(self);
    done_blocking();
    throw;
  }
  done_blocking();
  return self.block_result_;
}

Thread* Scheduler::next_ready(const ComponentInstance* only_in) const {
  for (Thread* t : waiting_) {
    if (!t->ready()) continue;
    if (only_in) {
      // The reference's candidates: registered threads of the instance,
      // except the one holding it exclusively.
      if (t->inst != only_in || t->index == 0 || t == only_in->state().exclusive_thread) continue;
    } else {
      // The event loop cannot reach into a synchronous task's loop.
      // Nor resume threads of instances that trapped.
      if (t->in_own_loop_ || !t->inst || t->inst->poisoned() || !Task::may_enter_from(*t->inst, nullptr)) continue;
    }
    return t;
  }
  return nullptr;
}

void Scheduler::start_waiting(Thread& thread, Thread::ReadyFunc ready) {
  thread.ready_func_ = std::move(ready);
  waiting_.push_back(&thread);
}

void Scheduler::stop_waiting(Thread& thread) {
  thread.ready_func_ = nullptr;
  auto it = std::find(waiting_.begin(), waiting_.end(), &thread);
  if (it != waiting_.end()) waiting_.erase(it);
}

bool Scheduler::wait_until(Thread& thread, Thread::ReadyFunc ready, bool cancellable, bool queue) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  if (!queue && ready()) return false;
  start_waiting(thread, std::move(ready));
  return block(thread, cancellable);
}

bool Scheduler::suspend(Thread& thread, bool cancellable) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  return block(thread, cancellable);
}

bool Scheduler::suspend_then_resume(Thread& thread, bool cancellable, Thread& other) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  return block(thread, cancellable, &other);
}

bool Scheduler::yield_then_resume(Thread& thread, bool cancellable, Thread& other) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  start_waiting(thread, [] { return true; });
  return block(thread, cancellable, &other);
}

bool Scheduler::suspend_then_promote(Thread& thread, bool cancellable, Thread& other) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  if (other.ready()) {
    stop_waiting(other);
    return suspend_then_resume(thread, cancellable, other);
  }
  return suspend(thread, cancellable);
}

bool Scheduler::yield_then_promote(Thread& thread, bool cancellable, Thread& other) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return true;
  if (other.ready()) {
    stop_waiting(other);
    return yield_then_resume(thread, cancellable, other);
  }
  return yield(thread, cancellable);
}

void Scheduler::resume_later(Thread& thread) { start_waiting(thread, [] { return true; }); }

bool Scheduler::step() {
  if (deferred_failure_) std::rethrow_exception(std::exchange(deferred_failure_, nullptr));
  // Host work first, then one guest thread: host work that keeps making
  // progress (a copy restarted by its own callback) cannot starve guests.
  const bool host = driver_ && driver_->run_ready();
  Thread* thread = next_ready(nullptr);
  if (!thread) return host;
  Entering entering(*thread->inst, nullptr);
  resume(*thread);
  return true;
}

void Scheduler::run_until(FunctionRef<bool()> done, std::string_view waiting_for) {
  while (!done()) {
    if (step()) continue;
    if (driver_ && driver_->wait_for_outside()) continue;
    std::string message = "deadlock detected: event loop cannot make further progress while waiting for ";
    message += waiting_for;
    message += describe_blocked();
    if (driver_) {
      const std::string host = driver_->pending();
      if (!host.empty()) message += "; the host waits for " + host;
    }
    throw_trap(message);
  }
  if (driver_) driver_->settle();
}

void Scheduler::run_until_idle() {
  while (step() || (driver_ && driver_->run_idle())) {
  }
  if (driver_) driver_->settle();
}

std::string Scheduler::describe_blocked() const {
  size_t blocked = 0;
  std::string where;
  for (const Thread* t : waiting_) {
    ++blocked;
    if (blocked <= 3 && t->inst) where += (where.empty() ? "" : ", ") + ("`" + t->inst->name() + "`");
  }
  for (const auto& t : fibers_)
    if (t->suspended()) ++blocked;
  if (blocked == 0) return "; no guest thread is blocked";
  return "; " + std::to_string(blocked) + " guest thread(s) blocked" + (where.empty() ? "" : " (in " + where + ")");
}

}  // namespace cmhost::runtime
