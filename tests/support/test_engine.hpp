// The backend the tests run on. ctest runs the test binaries twice, once
// with CMHOST_TEST_ENGINE=aot: then every engine the tests make is the
// ahead-of-time one, caching its artifacts in the build tree.
#pragma once

#include <cstdlib>
#include <string_view>

#include "cmhost/engine/backend.hpp"

namespace cmhost::testing_support {

inline bool testing_aot() {
  const char* name = std::getenv("CMHOST_TEST_ENGINE");
  return name && std::string_view(name) == "aot";
}

inline engine::EngineConfig test_engine_config(engine::EngineConfig config = {}) {
  if (testing_aot()) {
    config.backend = engine::Backend::AheadOfTime;
    config.cache_dir = CMHOST_TEST_AOT_CACHE;
  }
  return config;
}

}  // namespace cmhost::testing_support
