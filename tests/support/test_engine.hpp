// The backend the tests run on. ctest runs the test binaries twice, once
// with CMHOST_TEST_ENGINE=aot: then every engine the tests make is the
// ahead-of-time one, caching its artifacts in the build tree; and a subset
// a third time with CMHOST_TEST_ENGINE=aot-baseline, its baseline tier.
#pragma once

#include <cstdlib>
#include <string_view>

#include "cmhost/engine/backend.hpp"

namespace cmhost::testing_support {

inline std::string_view test_engine_name() {
  const char* name = std::getenv("CMHOST_TEST_ENGINE");
  return name ? name : "";
}

inline bool testing_aot() { return test_engine_name() == "aot" || test_engine_name() == "aot-baseline"; }

inline engine::EngineConfig test_engine_config(engine::EngineConfig config = {}) {
  if (testing_aot()) {
    config.backend = engine::Backend::AheadOfTime;
    config.cache_dir = CMHOST_TEST_AOT_CACHE;
    if (test_engine_name() == "aot-baseline") config.aot_tier = engine::EngineConfig::AotTier::Baseline;
  }
  return config;
}

}  // namespace cmhost::testing_support
