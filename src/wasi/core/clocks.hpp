// The clocks and the random generator every WASI version reads, with the
// WasiConfig overrides that let a test fix them.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

namespace cmhost::wasi::core {

// The monotonic clock in nanoseconds since an arbitrary start; its
// resolution is reported as 1 ns.
uint64_t monotonic_now();
inline constexpr uint64_t kMonotonicResolutionNs = 1;

// The monotonic time `duration` nanoseconds from now, saturating: a wait
// too long to end is one that never does (UINT64_MAX).
uint64_t deadline_after(uint64_t duration);

// The wall clock in nanoseconds since the Unix epoch: the system's, or a
// fixed time (WasiConfig::wall_clock_ns); its resolution is reported as 1 ns.
class WallClock {
 public:
  explicit WallClock(std::optional<uint64_t> fixed_ns) : fixed_ns_(fixed_ns) {}
  uint64_t now() const;
  static constexpr uint64_t kResolutionNs = 1;

 private:
  std::optional<uint64_t> fixed_ns_;
};

// The random numbers of wasi:random, its insecure variants and its seed,
// from one generator: seeded by WasiConfig::random_seed, or from the host's
// random device.
class RandomSource {
 public:
  explicit RandomSource(std::optional<uint64_t> seed) : generator_(seed.value_or(std::random_device{}())) {}
  uint64_t next() { return generator_(); }
  // `len` bytes; a guest asking for more than 64 MiB at once traps.
  std::vector<uint8_t> bytes(uint64_t len);

 private:
  std::mt19937_64 generator_;
};

}  // namespace cmhost::wasi::core
