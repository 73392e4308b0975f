// The host's side of a store's event loop: host copies on streams and
// futures waiting for a guest's, async host calls completing, from the loop
// or from other OS threads, and waits on descriptors and timers (reactor.hpp),
// all slept on in one epoll_wait(2). The scheduler drives it (runtime::
// HostDriver); cmhost::Store owns one.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost/error.hpp"
#include "cmhost/function_ref.hpp"
#include "reactor.hpp"
#include "runtime/host_calls.hpp"
#include "runtime/runtime.hpp"
#include "runtime/scheduler.hpp"

namespace cmhost::host {

class HostEnd;

class HostLoop final : public runtime::HostDriver {
 public:
  HostLoop() = default;
  ~HostLoop() override;
  HostLoop(const HostLoop&) = delete;
  HostLoop& operator=(const HostLoop&) = delete;
  // False once the loop (and its store) is gone: host ends outliving the
  // store check it before touching either.
  std::shared_ptr<const bool> alive() const { return alive_; }

  // Host ends with a copy in flight, tried on every step of the loop.
  void add(HostEnd& end) { ends_.push_back(&end); }
  void remove(HostEnd& end);
  // An end going away: out of the list, and no longer the one being tried.
  void forget(HostEnd& end) {
    remove(end);
    if (trying_ == &end) trying_ = nullptr;
  }

  // Waits end with a trap once `core`'s epoch deadline passes; the engine's
  // epoch wakes them to look.
  void watch_deadline(engine::Engine& engine, const engine::Store& core);

  // The descriptor and timer waits the loop runs.
  Reactor& reactor() { return reactor_; }
  // Runs `work` on the loop's next step, on the store's thread: host
  // callbacks that must not run inside a guest's built-in.
  void defer(std::function<void()> work) { deferred_.push_back(std::move(work)); }

  // `done` runs from the loop once `result` resolved (an async call the
  // host started, PendingCall::on_done).
  void when_resolved(std::shared_ptr<const runtime::AsyncCallResult> result, std::function<void()> done) {
    resolutions_.push_back({std::move(result), std::move(done)});
  }

  // Continuations of blocking work (Store::run_blocking), kept here so that
  // they live and die on the loop's thread: the pool posts only the ticket.
  uint64_t new_ticket() { return next_ticket_++; }
  void keep_continuation(uint64_t ticket, std::function<void(std::exception_ptr)> done);
  void run_continuation(uint64_t ticket, std::exception_ptr failure);

  // Another store's loop run within this one (cmhost::Store::drive): its
  // guests and host work go on in this loop's turns, and what it waits for
  // (descriptors, timers, posts) wakes this loop. A trap in its guests goes
  // to `on_trap`, not out of this loop. Until stop_driving or its end.
  void drive(HostLoop& other, runtime::Scheduler& scheduler, std::function<void(const Error&)> on_trap);
  void stop_driving(HostLoop& other);
  // Neither drives nor is driven any more (its store is going).
  void detach();

  bool run_ready() override;
  bool wait_for_outside() override;
  bool run_idle() override;
  std::string pending() const override;
  const std::shared_ptr<runtime::PostBox>& post_box() const override { return box_; }
  void call_started() override { ++outstanding_calls_; }
  void settle() override { run_deferred(); }
  // The same at the start of a host function a guest calls: what they
  // throw is the host's failure, reported by the loop, not the guest's.
  void settle_in_guest_call() override;
  // A host failure met inside a guest's built-in (a host step's usage
  // error), reported by the loop's next step rather than trapping the guest.
  void fail_later(std::exception_ptr failure);

 private:
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::shared_ptr<runtime::PostBox> box_ = std::make_shared<runtime::PostBox>();
  std::vector<HostEnd*> ends_;
  HostEnd* trying_ = nullptr;  // the end run_ready is advancing (null once it is destroyed)
  uint64_t outstanding_calls_ = 0;
  // Runs what was deferred (and what that defers): true when any ran.
  bool run_deferred();
  std::vector<runtime::PostBox::Posted> running_;
  std::vector<std::function<void()>> deferred_;
  std::exception_ptr deferred_failure_;
  const engine::Store* core_ = nullptr;
  std::shared_ptr<void> epoch_token_;
  Reactor reactor_;
  uint64_t next_ticket_ = 1;
  std::map<uint64_t, std::function<void(std::exception_ptr)>> continuations_;
  struct Resolution {
    std::shared_ptr<const runtime::AsyncCallResult> result;
    std::function<void()> done;
  };
  std::vector<Resolution> resolutions_;
  bool run_resolutions();

  struct Driven {
    HostLoop* loop;
    runtime::Scheduler* scheduler;
    std::function<void(const Error&)> on_trap;
  };
  std::vector<Driven> driven_;
  HostLoop* driver_ = nullptr;  // the loop that drives this one
  // `work` on each driven loop, a trap in it to that loop's on_trap: true
  // when any work ran.
  bool each_driven(FunctionRef<bool(const Driven&)> work);
  // A few steps of each driven loop: true when any ran.
  bool run_driven();
  // After a sleep: the driven loops' post boxes no longer wake this one.
  void drain_driven_wakes();
  // Whether a driven loop waits for anything (a wait, a host call).
  bool driven_wait() const;
  // Idle waits here or in a driven loop.
  bool has_idle_waits() const;
  // When the driven loops' (and theirs') earliest timer is due, if any.
  std::optional<uint64_t> driven_deadline_ns() const;
};

}  // namespace cmhost::host
