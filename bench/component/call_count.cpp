// The synchronous call paths of call_bench.cpp, a fixed number of times, for
// counting instructions with callgrind (bench/callgrind/instructions): a
// host->guest `id(u32) -> u32` call, and a component calling another's `id`
// through a lowered import. Two runs with different counts give the cost
// per call without the setup.
//
//   cmhost_call_count host N     N host->guest calls
//   cmhost_call_count typed N    N host->guest typed calls (Instance::typed_func)
//   cmhost_call_count generated N   the same through the class `cmhost bindgen` generates
//   cmhost_call_count fused N    one host call of `run(N)`: N component->component calls
//
// A third argument `aot` runs them on the ahead-of-time backend (its cache in
// the build tree).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "../common/components.hpp"
#include "callee.hpp"
#include "cmhost/cmhost.hpp"

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::string(argv[3]) == "aot")) {
    std::fprintf(stderr, "usage: cmhost_call_count host|typed|generated|fused N [aot]\n");
    return 2;
  }
  const std::string mode = argv[1];
  const auto n = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  using cmhost::bench::component_path;
  cmhost::engine::EngineConfig config;
  if (argc == 4) {
    config.backend = cmhost::engine::Backend::AheadOfTime;
    config.cache_dir = CMHOST_BENCH_AOT_CACHE;
  }
  cmhost::Engine engine(config);
  cmhost::Component callee = cmhost::Component::from_file(engine, component_path("call-callee"));
  cmhost::Store store(engine);
  cmhost::Instance callee_instance = cmhost::Linker().instantiate(store, callee);
  uint64_t check = 0;
  if (mode == "host") {
    const cmhost::Func id = callee_instance.func("id");
    for (uint32_t i = 0; i < n; ++i) {
      const cmhost::Val x = cmhost::Val::u32(i);
      check += id.call(store, {&x, 1})[0].as_u32();
    }
  } else if (mode == "typed") {
    const auto id = callee_instance.typed_func<uint32_t(uint32_t)>("id");
    for (uint32_t i = 0; i < n; ++i) check += id.call(store, i);
  } else if (mode == "generated") {
    const callee::World world(callee_instance);
    for (uint32_t i = 0; i < n; ++i) check += world.id(store, i);
  } else if (mode == "fused") {
    cmhost::Component caller = cmhost::Component::from_file(engine, component_path("call-caller"));
    cmhost::Linker linker;
    linker.define_instance("cmhost:bench/callee", callee_instance);
    cmhost::Instance caller_instance = linker.instantiate(store, caller);
    const cmhost::Val arg = cmhost::Val::u32(n);
    check = caller_instance.func("run").call(store, {&arg, 1})[0].as_u32();
  } else {
    std::fprintf(stderr, "cmhost_call_count: unknown mode %s\n", mode.c_str());
    return 2;
  }
  return check == uint64_t{n} * (n - (n > 0)) / 2 || n == 0 ? 0 : 1;
}
