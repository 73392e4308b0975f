// wasi:random@0.3.0 on the generated bindings and the core's random
// source: the secure interface from the kernel, the insecure ones from a
// generator (both from WasiConfig::random_seed's generator when a test
// fixes it). 0.3 asks for at most `max-len` bytes, so a larger request
// gets the 64 MiB one call may allocate rather than a trap.
#include "random.hpp"

#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "wasi/core/clocks.hpp"
#include "wasi/p3/bindings.hpp"

namespace cmhost::wasi::p3 {

namespace {

namespace random = bindings::p3::wasi::random;

constexpr uint64_t kMaxBytes = uint64_t{1} << 26;

class Random final : public random::random::Host, public random::insecure::Host, public random::insecure_seed::Host {
 public:
  explicit Random(const WasiConfig& config) : source_(config.random_seed) {}
  std::vector<uint8_t> get_random_bytes(Caller&, uint64_t max_len) override {
    return source_.secure_bytes(std::min(max_len, kMaxBytes));
  }
  uint64_t get_random_u64(Caller&) override { return source_.secure_u64(); }
  std::vector<uint8_t> get_insecure_random_bytes(Caller&, uint64_t max_len) override {
    return source_.insecure_bytes(std::min(max_len, kMaxBytes));
  }
  uint64_t get_insecure_random_u64(Caller&) override { return source_.insecure_u64(); }
  std::tuple<uint64_t, uint64_t> get_insecure_seed(Caller&) override { return source_.insecure_seed(); }

 private:
  core::RandomSource source_;
};

}  // namespace

void add_random(Linker& linker, const WasiConfig& config) {
  auto host = std::make_shared<Random>(config);
  random::random::add_to_linker(linker, host);
  random::insecure::add_to_linker(linker, host);
  random::insecure_seed::add_to_linker(linker, host);
}

}  // namespace cmhost::wasi::p3
