// The clocks and the random generator every WASI version reads, with the
// WasiConfig overrides that let a test fix them.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
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

// The random numbers of wasi:random and its insecure variants. The secure
// ones come from the kernel (getrandom(2)), the insecure ones and the
// insecure seed from a generator seeded once from it. With
// WasiConfig::random_seed (tests), both are that seed's generator, so runs
// repeat. One source may serve stores on several threads (a linker's
// functions are shared): the generator is behind a mutex.
class RandomSource {
 public:
  explicit RandomSource(std::optional<uint64_t> seed);
  // `len` bytes; a guest asking for more than 64 MiB at once traps.
  std::vector<uint8_t> secure_bytes(uint64_t len);
  uint64_t secure_u64();
  std::vector<uint8_t> insecure_bytes(uint64_t len);
  uint64_t insecure_u64();
  // wasi:random/insecure-seed: one value, drawn from the insecure generator
  // when the source is made and the same on every call (it seeds a guest's
  // hash tables once; wasmtime gives one per context too).
  std::pair<uint64_t, uint64_t> insecure_seed() const { return seed_; }

 private:
  bool seeded_;
  std::mutex mutex_;
  std::mt19937_64 generator_;
  std::pair<uint64_t, uint64_t> seed_;
};

}  // namespace cmhost::wasi::core
