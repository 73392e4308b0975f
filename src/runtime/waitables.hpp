// Waitables, waitable sets and subtasks (CanonicalABI.md "Waitable State",
// "Subtask State").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "call_handles.hpp"
#include "cmhost/error.hpp"
#include "handles.hpp"
#include "scheduler.hpp"

namespace cmhost::runtime {

enum class EventCode : uint32_t {
  None = 0, Subtask = 1, StreamRead = 2, StreamWrite = 3, FutureRead = 4, FutureWrite = 5, TaskCancelled = 6,
};

struct Event {
  EventCode code = EventCode::None;
  uint32_t index = 0;
  uint32_t payload = 0;
};

class WaitableSet;

class Waitable : public HandleObject {
 public:
  bool has_pending_event() const { return pending_; }
  // The reference's get_pending_event: taking an event may change state
  // (a subtask's lends end, a copy's end becomes idle again).
  Event take_pending_event() {
    pending_ = false;
    return deliver();
  }
  bool in_waitable_set() const { return wset_ != nullptr; }
  bool has_sync_waiter() const { return has_sync_waiter_; }
  void join(WaitableSet* set);
  // Blocks `thread` (not cancellable) until an event is pending.
  void wait_for_pending_event(Scheduler& scheduler, Thread& thread);
  // Leaves its set; the table entry is gone.
  void drop_waitable() { join(nullptr); }
  void detach() override { join(nullptr); }

 protected:
  virtual Event deliver() = 0;
  void set_pending_event() { pending_ = true; }

 private:
  friend class WaitableSet;
  bool pending_ = false;
  bool has_sync_waiter_ = false;
  WaitableSet* wset_ = nullptr;
};

class WaitableSet final : public HandleObject {
 public:
  bool has_pending_event() const;
  // The pending event of the member that joined first (the reference picks
  // at random).
  Event get_pending_event();
  Event wait_for_event_and(Scheduler& scheduler, Thread& thread, Thread::ReadyFunc ready, bool cancellable);
  Event poll(Thread& thread, bool cancellable);
  // waitable-set.drop: traps while members or waiters remain.
  void check_droppable() const;

 private:
  friend class Waitable;
  std::vector<Waitable*> elems_;
  uint32_t num_waiting_ = 0;
};

class Subtask final : public Waitable {
 public:
  enum class State : uint32_t {
    Starting = 0, Started = 1, Returned = 2, CancelledBeforeStarted = 3, CancelledBeforeReturned = 4,
  };

  State state = State::Starting;
  std::shared_ptr<Task> callee;  // to request cancellation; null for host functions
  bool cancellation_requested = false;
  // An async host function's wish to hear of a cancellation request
  // (Completion::on_cancel), called once, on the store's thread.
  std::function<void()> on_cancel;
  std::vector<uint64_t> flat_results;  // a synchronous lower's core results
  uint32_t index = 0;                  // in the caller's table, once it has one
  // An async host function that failed (or dropped its completion): the
  // trap its synchronous caller raises when it wakes.
  std::optional<Error> host_failure;
  // The caller's side of the handles passed: borrows lent until delivery.
  std::unique_ptr<CallHandles> lenders;

  ~Subtask() override {
    if (lenders) lenders->forget();
  }
  bool resolved() const { return state >= State::Returned; }
  bool resolve_delivered() const { return resolve_delivered_; }
  // The reference's maybe_on_progress: an async lower's subtask reports
  // every step once it has a handle.
  void reports_progress() { reports_progress_ = true; }
  void on_start();
  void resolve(State resolved_state, std::vector<uint64_t> results);
  void deliver_resolve();
  void check_droppable() const;

 protected:
  Event deliver() override;

 private:
  void on_progress() {
    if (reports_progress_) set_pending_event();
  }
  bool reports_progress_ = false;
  bool resolve_delivered_ = false;
};

// A core wasm i32 result packing a subtask's state and index.
inline uint32_t pack_subtask(Subtask::State state, uint32_t index) {
  return static_cast<uint32_t>(state) | (index << 4);
}

}  // namespace cmhost::runtime
