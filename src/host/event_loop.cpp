#include "event_loop.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "cmhost/error.hpp"
#include "stream_ends.hpp"

namespace cmhost::host {

HostLoop::~HostLoop() {
  detach();
  box_->close();  // completions arriving later have nowhere to go
  // Copies in flight let go of their callbacks, which may hold ends and so
  // destroy them (an end destroyed meanwhile leaves the list itself).
  while (!ends_.empty()) {
    HostEnd* end = ends_.back();
    ends_.pop_back();
    end->store_gone();
  }
  *alive_ = false;
  deferred_.clear();  // their callbacks may hold ends, which see the store gone
}

void HostLoop::keep_continuation(uint64_t ticket, std::function<void(std::exception_ptr)> done) {
  continuations_.emplace(ticket, std::move(done));
}

void HostLoop::run_continuation(uint64_t ticket, std::exception_ptr failure) {
  auto it = continuations_.find(ticket);
  if (it == continuations_.end()) return;
  const std::function<void(std::exception_ptr)> done = std::move(it->second);
  continuations_.erase(it);
  done(std::move(failure));
}

void HostLoop::remove(HostEnd& end) {
  auto it = std::find(ends_.begin(), ends_.end(), &end);
  if (it != ends_.end()) ends_.erase(it);
}

bool HostLoop::run_deferred() {
  bool ran = false;
  while (!deferred_.empty()) {
    std::vector<std::function<void()>> now;
    now.swap(deferred_);
    size_t i = 0;
    try {
      for (; i < now.size(); ++i) std::exchange(now[i], nullptr)();
    } catch (...) {
      // What did not run yet runs next, before anything deferred since.
      now.erase(now.begin(), now.begin() + static_cast<ptrdiff_t>(i) + 1);
      deferred_.insert(deferred_.begin(), std::make_move_iterator(now.begin()), std::make_move_iterator(now.end()));
      throw;
    }
    ran = true;
  }
  return ran;
}

void HostLoop::settle_in_guest_call() {
  try {
    run_deferred();
  } catch (...) {
    // The host's failure, not the calling guest's: the loop reports it.
    deferred_failure_ = std::current_exception();
  }
}

void HostLoop::fail_later(std::exception_ptr failure) {
  if (!deferred_failure_) deferred_failure_ = std::move(failure);
}

bool HostLoop::run_ready() {
  if (deferred_failure_) std::rethrow_exception(std::exchange(deferred_failure_, nullptr));
  bool ran = run_deferred();
  ran = reactor_.fire_ready() || ran;
  box_->take(running_);
  if (!running_.empty()) {
    ran = true;
    size_t i = 0;
    try {
      for (; i < running_.size(); ++i) {
        if (running_[i].ends_call) --outstanding_calls_;
        const std::function<void()> work = std::move(running_[i].work);
        work();
      }
    } catch (...) {
      // What did not run yet runs on the next step.
      running_.erase(running_.begin(), running_.begin() + static_cast<ptrdiff_t>(i) + 1);
      box_->put_back(running_);
      throw;
    }
    running_.clear();
  }
  // Copies may finish (and leave the list) or start others as they run.
  for (size_t i = 0; i < ends_.size();) {
    HostEnd* end = ends_[i];
    trying_ = end;
    try {
      if (end->try_progress()) ran = true;
    } catch (...) {
      if (trying_) trying_->abandon();  // a trap lifting or lowering: the copy is over
      trying_ = nullptr;
      throw;
    }
    trying_ = nullptr;
    if (i < ends_.size() && ends_[i] == end) ++i;
  }
  ran = run_resolutions() || ran;
  return run_driven() || ran;
}

void HostLoop::drive(HostLoop& other, runtime::Scheduler& scheduler, std::function<void(const Error&)> on_trap) {
  if (&other == this) throw Error(ErrorKind::Usage, "a store cannot drive its own loop");
  if (other.driver_) throw Error(ErrorKind::Usage, "the store's loop is driven by another already");
  for (const HostLoop* up = this; up; up = up->driver_)
    if (up == &other) throw Error(ErrorKind::Usage, "the store drives this one: loops cannot drive each other");
  if (!on_trap) throw Error(ErrorKind::Usage, "a driven store needs what its traps go to");
  // Its posts make its set readable, and its set wakes this loop.
  other.reactor_.set_wake_fd(other.box_->wake_fd());
  reactor_.wake_on(other.reactor_.fd());
  driven_.push_back({&other, &scheduler, std::move(on_trap)});
  other.driver_ = this;
}

void HostLoop::detach() {
  if (driver_) driver_->stop_driving(*this);
  for (const Driven& driven : driven_) {
    driven.loop->driver_ = nullptr;
    reactor_.stop_waking_on(driven.loop->reactor_.fd());
  }
  driven_.clear();
}

void HostLoop::stop_driving(HostLoop& other) {
  auto it = std::find_if(driven_.begin(), driven_.end(), [&](const Driven& d) { return d.loop == &other; });
  if (it == driven_.end()) return;
  reactor_.stop_waking_on(other.reactor_.fd());
  other.driver_ = nullptr;
  driven_.erase(it);
}

bool HostLoop::each_driven(FunctionRef<bool(const Driven&)> work) {
  bool ran = false;
  for (size_t i = 0; i < driven_.size(); ++i) {
    // Copied: a trap's callback may stop driving it (or others).
    const Driven driven = driven_[i];
    try {
      ran = work(driven) || ran;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Trap) throw;
      ran = true;
      driven.on_trap(e);
    }
  }
  return ran;
}

bool HostLoop::run_driven() {
  // A loop that stays busy gets this many steps a turn: this one's own
  // work, and the other loops', go on meanwhile.
  constexpr int kStepsPerTurn = 64;
  return each_driven([](const Driven& driven) {
    bool ran = false;
    for (int steps = 0; steps < kStepsPerTurn && driven.scheduler->step(); ++steps) ran = true;
    return ran;
  });
}

void HostLoop::drain_driven_wakes() {
  for (const Driven& driven : driven_) {
    driven.loop->box_->drain_wake();
    driven.loop->drain_driven_wakes();
  }
}

bool HostLoop::driven_wait() const {
  return std::any_of(driven_.begin(), driven_.end(), [](const Driven& d) {
    return !d.loop->reactor_.empty() || d.loop->outstanding_calls_ > 0 || d.loop->driven_wait();
  });
}

bool HostLoop::has_idle_waits() const {
  return reactor_.has_idle_waits() ||
         std::any_of(driven_.begin(), driven_.end(), [](const Driven& d) { return d.loop->has_idle_waits(); });
}

std::optional<uint64_t> HostLoop::driven_deadline_ns() const {
  std::optional<uint64_t> earliest;
  for (const Driven& driven : driven_) {
    std::optional<uint64_t> theirs = driven.loop->reactor_.next_deadline_ns();
    if (const auto below = driven.loop->driven_deadline_ns(); below && (!theirs || *below < *theirs)) theirs = below;
    if (theirs && (!earliest || *theirs < *earliest)) earliest = theirs;
  }
  return earliest;
}

bool HostLoop::run_idle() {
  const bool ran = reactor_.fire_idle();
  return each_driven([](const Driven& driven) { return driven.loop->run_idle(); }) || ran;
}

bool HostLoop::run_resolutions() {
  std::vector<Resolution> due;
  for (size_t i = 0; i < resolutions_.size();) {
    if (!resolutions_[i].result->resolved) {
      ++i;
      continue;
    }
    due.push_back(std::move(resolutions_[i]));
    resolutions_.erase(resolutions_.begin() + static_cast<ptrdiff_t>(i));
  }
  // After the scan: a callback may start calls and watch them. One that
  // throws leaves the rest for the next step.
  for (size_t i = 0; i < due.size(); ++i) {
    try {
      due[i].done();
    } catch (...) {
      resolutions_.insert(resolutions_.end(), std::make_move_iterator(due.begin() + static_cast<ptrdiff_t>(i) + 1),
                          std::make_move_iterator(due.end()));
      throw;
    }
  }
  return !due.empty();
}

void HostLoop::watch_deadline(engine::Engine& engine, const engine::Store& core) {
  core_ = &core;
  epoch_token_ = engine.on_epoch([box = std::weak_ptr<runtime::PostBox>(box_)] {
    if (auto live = box.lock()) live->post([] {}, false);  // wakes the loop to look at its deadline
  });
}

bool HostLoop::wait_for_outside() {
  const auto check_deadline = [this] {
    if (core_ && core_->deadline_passed())
      throw Error(ErrorKind::Trap, "interrupted: the engine's epoch reached the store's deadline while the event loop waited" +
                                       (pending().empty() ? std::string() : " for " + pending()));
  };
  check_deadline();
  // What waited for the loop to be idle runs before it sleeps.
  if (has_idle_waits()) return run_idle();
  if (!reactor_.empty() || driven_wait()) {
    // One sleep for descriptors, timers and posts (an epoch's wake-up too),
    // the driven loops' sets and their timers.
    reactor_.sleep(box_->wake_fd(), driven_deadline_ns());
    box_->drain_wake();
    drain_driven_wakes();  // what they posted is taken by their next steps
    check_deadline();
    return true;
  }
  if (outstanding_calls_ == 0 && box_->empty()) return false;
  box_->wait();
  check_deadline();
  return true;
}

std::string HostLoop::pending() const {
  std::string out = reactor_.describe();
  for (const HostEnd* end : ends_) {
    if (!out.empty()) out += ", ";
    out += end->reads() ? (end->is_stream() ? "a stream read" : "a future read")
                        : (end->is_stream() ? "a stream write" : "a future write");
  }
  return out;
}

}  // namespace cmhost::host
