#include "waitables.hpp"

#include <algorithm>

#include "cmhost/error.hpp"
#include "task.hpp"

namespace cmhost::runtime {

void Waitable::join(WaitableSet* set) {
  if (wset_) std::erase(wset_->elems_, this);
  wset_ = set;
  if (set) set->elems_.push_back(this);
}

void Waitable::wait_for_pending_event(Scheduler& scheduler, Thread& thread) {
  has_sync_waiter_ = true;
  try {
    scheduler.wait_until(thread, [this] { return has_pending_event(); }, false);
  } catch (...) {
    has_sync_waiter_ = false;
    throw;
  }
  has_sync_waiter_ = false;
}

bool WaitableSet::has_pending_event() const {
  return std::any_of(elems_.begin(), elems_.end(), [](const Waitable* w) { return w->has_pending_event(); });
}

Event WaitableSet::get_pending_event() {
  for (Waitable* w : elems_)
    if (w->has_pending_event()) return w->take_pending_event();
  return {};
}

Event WaitableSet::wait_for_event_and(Scheduler& scheduler, Thread& thread, Thread::ReadyFunc ready,
                                      bool cancellable) {
  ++num_waiting_;
  bool cancelled = false;
  try {
    cancelled = scheduler.wait_until(
        thread, [this, ready = std::move(ready)] { return ready() && has_pending_event(); }, cancellable);
  } catch (...) {
    --num_waiting_;
    throw;
  }
  const Event event = cancelled ? Event{EventCode::TaskCancelled, 0, 0} : get_pending_event();
  --num_waiting_;
  return event;
}

Event WaitableSet::poll(Thread& thread, bool cancellable) {
  if (thread.task && thread.task->deliver_pending_cancel(cancellable)) return {EventCode::TaskCancelled, 0, 0};
  if (!has_pending_event()) return {};
  return get_pending_event();
}

void WaitableSet::check_droppable() const {
  if (!elems_.empty()) throw_trap("cannot drop waitable set with members (waitables joined to it)");
  if (num_waiting_ > 0) throw_trap("cannot drop waitable set with waiters");
}

void Subtask::on_start() {
  on_progress();
  state = State::Started;
}

void Subtask::resolve(State resolved_state, std::vector<uint64_t> results) {
  on_progress();
  state = resolved_state;
  flat_results = std::move(results);
}

void Subtask::deliver_resolve() {
  if (lenders) lenders->release();
  resolve_delivered_ = true;
}

void Subtask::check_droppable() const {
  if (!resolve_delivered_) throw_trap("cannot drop a subtask which has not yet resolved");
}

Event Subtask::deliver() {
  if (resolved() && !resolve_delivered_) deliver_resolve();
  return {EventCode::Subtask, index, static_cast<uint32_t>(state)};
}

}  // namespace cmhost::runtime
