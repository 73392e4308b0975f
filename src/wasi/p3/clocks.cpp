// wasi:clocks@0.3.0 on the generated bindings and the core's clocks
// (timezone is unstable in 0.3.0, and not offered). wait-until and
// wait-for are async host functions completed by a timer of the store's
// event loop (Store::when_time): no thread per wait, a wait that is
// already over completes during the call, so the guest never sees a
// started subtask for it, and a cancelled one ends at once.
#include "clocks.hpp"

#include <chrono>
#include <cstdint>
#include <memory>

#include "wasi/core/clocks.hpp"
#include "wasi/p3/bindings.hpp"

namespace cmhost::wasi::p3 {

namespace {

namespace clocks = bindings::p3::wasi::clocks;

class Monotonic final : public clocks::monotonic_clock::Host {
 public:
  uint64_t now(Caller&) override { return core::monotonic_now(); }
  uint64_t get_resolution(Caller&) override { return core::kMonotonicResolutionNs; }
  void wait_until(Caller& caller, uint64_t when, TypedCompletion<void> completion) override {
    wait(caller, when, std::move(completion));
  }
  void wait_for(Caller& caller, uint64_t how_long, TypedCompletion<void> completion) override {
    wait(caller, core::deadline_after(how_long), std::move(completion));
  }

 private:
  // An async wait until `deadline` on the monotonic clock (core::monotonic_now's).
  static void wait(Caller& caller, uint64_t deadline, TypedCompletion<void> completion) {
    if (deadline <= core::monotonic_now()) return completion.complete();
    // steady_clock is core::monotonic_now's clock; a mark past what it can
    // hold (a wait-for of u64::MAX saturates there) never comes.
    using Clock = std::chrono::steady_clock;
    const auto when = deadline > static_cast<uint64_t>(INT64_MAX)
                          ? Clock::time_point::max()
                          : Clock::time_point(std::chrono::nanoseconds(static_cast<int64_t>(deadline)));
    Store& store = caller.store();
    const Store::WaitId timer = store.when_time(when, [completion]() mutable { completion.complete(); });
    // A cancelled wait lets go of its timer and ends at once.
    completion.on_cancel([&store, timer, completion]() mutable {
      if (store.cancel_wait(timer)) completion.cancel();
    });
  }
};

class System final : public clocks::system_clock::Host {
 public:
  explicit System(const WasiConfig& config) : wall_(config.wall_clock_ns) {}
  clocks::system_clock::Instant now(Caller&) override {
    const uint64_t ns = wall_.now();
    return {static_cast<int64_t>(ns / 1'000'000'000), static_cast<uint32_t>(ns % 1'000'000'000)};
  }
  uint64_t get_resolution(Caller&) override { return core::WallClock::kResolutionNs; }

 private:
  core::WallClock wall_;
};

}  // namespace

void add_clocks(Linker& linker, const WasiConfig& config) {
  clocks::monotonic_clock::add_to_linker(linker, std::make_shared<Monotonic>());
  clocks::system_clock::add_to_linker(linker, std::make_shared<System>(config));
}

}  // namespace cmhost::wasi::p3
