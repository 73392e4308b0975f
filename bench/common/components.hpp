// Where the benchmarks' components are built: CMHOST_BENCH_COMPONENTS is the
// directory, defined for each benchmark by bench/CMakeLists.txt.
#pragma once

#include <string>

#include "cmhost/engine/backend.hpp"

namespace cmhost::bench {

inline std::string component_path(const char* name) {
  return std::string(CMHOST_BENCH_COMPONENTS) + "/" + name + ".wasm";
}

#ifdef CMHOST_BENCH_AOT_CACHE
// The core engine a benchmark names ("interp" or "aot"); ahead-of-time
// artifacts go to the benchmarks' cache in the build tree.
inline engine::EngineConfig engine_named(const std::string& name) {
  engine::EngineConfig config;
  if (name == "aot") {
    config.backend = engine::Backend::AheadOfTime;
    config.cache_dir = CMHOST_BENCH_AOT_CACHE;
  }
  return config;
}
#endif

}  // namespace cmhost::bench
