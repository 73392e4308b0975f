// The clocks and the random generator (clocks.hpp).
#include "clocks.hpp"

#include <sys/random.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

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

namespace {

void check_length(uint64_t len) {
  if (len > (uint64_t{1} << 26)) throw_trap("wasi:random: more than 64 MiB of random bytes asked for");
}

// The kernel's random bytes; it never fails for a valid buffer on Linux 3.17
// and later but when interrupted, which is retried.
void kernel_random(void* data, size_t n) {
  auto* at = static_cast<uint8_t*>(data);
  while (n > 0) {
    const ssize_t got = ::getrandom(at, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_trap(std::string("wasi:random: the kernel gave no random bytes: ") + std::strerror(errno));
    }
    at += got;
    n -= static_cast<size_t>(got);
  }
}

uint64_t kernel_seed() {
  uint64_t seed;
  kernel_random(&seed, sizeof seed);
  return seed;
}

}  // namespace

RandomSource::RandomSource(std::optional<uint64_t> seed)
    : seeded_(seed.has_value()), generator_(seed ? *seed : kernel_seed()) {
  seed_.first = generator_();
  seed_.second = generator_();
}

std::vector<uint8_t> RandomSource::secure_bytes(uint64_t len) {
  if (seeded_) return insecure_bytes(len);
  check_length(len);
  std::vector<uint8_t> out(len);
  kernel_random(out.data(), out.size());
  return out;
}

uint64_t RandomSource::secure_u64() {
  if (seeded_) return insecure_u64();
  uint64_t value;
  kernel_random(&value, sizeof value);
  return value;
}

std::vector<uint8_t> RandomSource::insecure_bytes(uint64_t len) {
  check_length(len);
  std::vector<uint8_t> out(len);
  const std::lock_guard<std::mutex> lock(mutex_);
  for (uint8_t& b : out) b = static_cast<uint8_t>(generator_());
  return out;
}

uint64_t RandomSource::insecure_u64() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return generator_();
}

}  // namespace cmhost::wasi::core
