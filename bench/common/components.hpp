// Where the benchmarks' components are built: CMHOST_BENCH_COMPONENTS is the
// directory, defined for each benchmark by bench/CMakeLists.txt.
#pragma once

#include <string>

namespace cmhost::bench {

inline std::string component_path(const char* name) {
  return std::string(CMHOST_BENCH_COMPONENTS) + "/" + name + ".wasm";
}

}  // namespace cmhost::bench
