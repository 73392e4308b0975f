// wasi:clocks@0.3.0 on the embedder API and the core's clocks (timezone is
// unstable in 0.3.0, and not offered). wait-until
// and wait-for are async host functions completed by a timer of the
// store's event loop (Store::when_time): no thread per wait, and a wait
// that is already over completes during the call, so the guest never sees
// a started subtask for it.
#include "clocks.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "wasi/core/clocks.hpp"

namespace cmhost::wasi::p3 {

namespace {

using abi::Type;

std::string name(const char* interface, const char* function) {
  return std::string("wasi:clocks/") + interface + "@0.3.0#" + function;
}

// wasi:clocks/system-clock `instant`.
struct Instant {
  int64_t seconds = 0;
  uint32_t nanoseconds = 0;
};

Instant instant_of(uint64_t ns) {
  return {static_cast<int64_t>(ns / 1'000'000'000), static_cast<uint32_t>(ns % 1'000'000'000)};
}

// An async wait until `deadline` on the monotonic clock (core::monotonic_now's).
void wait_until(Caller& caller, uint64_t deadline, Completion completion) {
  if (deadline <= core::monotonic_now()) return completion.complete({});
  // steady_clock is core::monotonic_now's clock; a mark past what it can
  // hold (a wait-for of u64::MAX saturates there) never comes.
  using Clock = std::chrono::steady_clock;
  const auto when = deadline > static_cast<uint64_t>(INT64_MAX)
                        ? Clock::time_point::max()
                        : Clock::time_point(std::chrono::nanoseconds(static_cast<int64_t>(deadline)));
  caller.store().when_time(when, [completion]() mutable { completion.complete({}); });
}

FuncType wait_type(const char* param) {
  FuncType type;
  type.async = true;
  type.param_names = {param};
  type.params = {Type::u64()};
  return type;
}

}  // namespace

}  // namespace cmhost::wasi::p3

namespace cmhost::abi::typed {
template <>
struct Record<wasi::p3::Instant> {
  using T = wasi::p3::Instant;
  static constexpr auto fields = std::make_tuple(field("seconds", &T::seconds), field("nanoseconds", &T::nanoseconds));
};
}  // namespace cmhost::abi::typed

namespace cmhost::wasi::p3 {

void add_clocks(Linker& linker, const WasiConfig& config) {
  linker.func_wrap(name("monotonic-clock", "now"), [] { return core::monotonic_now(); });
  linker.func_wrap(name("monotonic-clock", "get-resolution"), [] { return core::kMonotonicResolutionNs; });
  linker.define_async_func(name("monotonic-clock", "wait-until"), wait_type("when"),
                           [](Caller& caller, std::span<const Val> args, Completion completion) {
                             wait_until(caller, args[0].as_u64(), std::move(completion));
                           });
  linker.define_async_func(name("monotonic-clock", "wait-for"), wait_type("how-long"),
                           [](Caller& caller, std::span<const Val> args, Completion completion) {
                             wait_until(caller, core::deadline_after(args[0].as_u64()), std::move(completion));
                           });
  const core::WallClock wall(config.wall_clock_ns);
  linker.func_wrap(name("system-clock", "now"), [wall] { return instant_of(wall.now()); });
  linker.func_wrap(name("system-clock", "get-resolution"), [] { return core::WallClock::kResolutionNs; });
}

}  // namespace cmhost::wasi::p3
