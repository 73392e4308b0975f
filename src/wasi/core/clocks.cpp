// The clocks and the random generator (clocks.hpp).
#include "clocks.hpp"

#include <chrono>

#include "cmhost/error.hpp"

namespace cmhost::wasi::core {

uint64_t monotonic_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

uint64_t deadline_after(uint64_t duration) {
  const uint64_t now = monotonic_now();
  return duration > UINT64_MAX - now ? UINT64_MAX : now + duration;
}

uint64_t WallClock::now() const {
  return fixed_ns_.value_or(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count()));
}

std::vector<uint8_t> RandomSource::bytes(uint64_t len) {
  if (len > (uint64_t{1} << 26)) throw_trap("wasi:random: more than 64 MiB of random bytes asked for");
  std::vector<uint8_t> out(len);
  for (uint8_t& b : out) b = static_cast<uint8_t>(generator_());
  return out;
}

}  // namespace cmhost::wasi::core
