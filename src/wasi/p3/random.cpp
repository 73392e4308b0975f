// wasi:random@0.3.0 over the core's random source: the secure interface
// from the kernel, the insecure ones from a generator (both from
// WasiConfig::random_seed's generator when a test fixes it). 0.3 asks for
// at most `max-len` bytes, so a larger request gets the 64 MiB one call may
// allocate rather than a trap.
#include "random.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "wasi/core/clocks.hpp"

namespace cmhost::wasi::p3 {

namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 26;

std::string name(const char* interface, const char* function) {
  return std::string("wasi:random/") + interface + "@0.3.0#" + function;
}

}  // namespace

void add_random(Linker& linker, const WasiConfig& config) {
  auto source = std::make_shared<core::RandomSource>(config.random_seed);
  linker.func_wrap(name("random", "get-random-bytes"),
                   [source](uint64_t max_len) { return source->secure_bytes(std::min(max_len, kMaxBytes)); });
  linker.func_wrap(name("random", "get-random-u64"), [source] { return source->secure_u64(); });
  linker.func_wrap(name("insecure", "get-insecure-random-bytes"),
                   [source](uint64_t max_len) { return source->insecure_bytes(std::min(max_len, kMaxBytes)); });
  linker.func_wrap(name("insecure", "get-insecure-random-u64"), [source] { return source->insecure_u64(); });
  linker.func_wrap(name("insecure-seed", "get-insecure-seed"), [source] {
    const uint64_t first = source->insecure_u64();
    return std::tuple<uint64_t, uint64_t>{first, source->insecure_u64()};
  });
}

}  // namespace cmhost::wasi::p3
