#include "event_loop.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "cmhost/error.hpp"
#include "stream_ends.hpp"

namespace cmhost::host {

HostLoop::~HostLoop() {
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
  return run_resolutions() || ran;
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
  if (reactor_.has_idle_waits()) return run_idle();
  if (!reactor_.empty()) {
    // One sleep for descriptors, timers and posts (an epoch's wake-up too).
    reactor_.sleep(box_->wake_fd(), -1);
    box_->drain_wake();
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
