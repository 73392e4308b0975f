// The clocks and random numbers every WASI version uses
// (src/wasi/core/clocks.cpp): fixed and saturating clocks, secure random
// bytes from the kernel, and a seed that makes both kinds repeat.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "../../src/wasi/core/clocks.hpp"
#include "../support/expect_error.hpp"

namespace {

using cmhost::wasi::core::RandomSource;
using cmhost::wasi::core::WallClock;

TEST(WasiCoreClocks, AFixedWallClockStandsStillAndDeadlinesSaturate) {
  EXPECT_EQ(WallClock(uint64_t{42}).now(), 42u);
  EXPECT_GT(WallClock(std::nullopt).now(), uint64_t{1'600'000'000} * 1'000'000'000) << "past 2020";
  const uint64_t now = cmhost::wasi::core::monotonic_now();
  EXPECT_GE(cmhost::wasi::core::deadline_after(1000), now + 1000);
  EXPECT_EQ(cmhost::wasi::core::deadline_after(UINT64_MAX), UINT64_MAX);
}

TEST(WasiCoreRandom, ASeedMakesBothKindsRepeat) {
  RandomSource a(uint64_t{7}), b(uint64_t{7});
  EXPECT_EQ(a.secure_bytes(64), b.secure_bytes(64));
  EXPECT_EQ(a.insecure_u64(), b.insecure_u64());
  EXPECT_EQ(a.secure_u64(), b.secure_u64());
}

TEST(WasiCoreRandom, SecureBytesComeFromTheKernelUnseeded) {
  RandomSource a(std::nullopt), b(std::nullopt);
  const std::vector<uint8_t> x = a.secure_bytes(32), y = b.secure_bytes(32);
  EXPECT_EQ(x.size(), 32u);
  EXPECT_NE(x, y) << "two draws of 256 bits agree only by a miracle";
  EXPECT_NE(a.secure_u64(), a.secure_u64());
  EXPECT_TRUE(a.secure_bytes(0).empty());
}

TEST(WasiCoreRandom, TheInsecureSeedIsOneValue) {
  RandomSource a(std::nullopt), b(std::nullopt);
  EXPECT_EQ(a.insecure_seed(), a.insecure_seed()) << "every call gives the same seed";
  (void)a.insecure_u64();
  EXPECT_EQ(a.insecure_seed(), a.insecure_seed());
  EXPECT_NE(a.insecure_seed(), b.insecure_seed()) << "two sources, two seeds (but by a miracle)";
}

TEST(WasiCoreRandom, MoreThan64MiBAtOnceTraps) {
  RandomSource source(std::nullopt);
  EXPECT_ERROR_SAYING(source.secure_bytes((uint64_t{1} << 26) + 1), cmhost::ErrorKind::Trap, "more than 64 MiB");
  EXPECT_ERROR_SAYING(source.insecure_bytes(UINT64_MAX), cmhost::ErrorKind::Trap, "more than 64 MiB");
  EXPECT_EQ(source.insecure_bytes(uint64_t{1} << 26).size(), uint64_t{1} << 26);
}

}  // namespace
