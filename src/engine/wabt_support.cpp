#include "wabt_support.hpp"

#include <cstdio>

namespace cmhost::engine::wabt_backend {

wabt::Features enabled_features() {
  wabt::Features features;
  features.enable_multi_memory();
  features.enable_memory64();
  features.enable_tail_call();
  features.enable_exceptions();
  features.enable_threads();
  return features;
}

std::string describe(const wabt::Errors& errors) {
  std::string text;
  for (const wabt::Error& error : errors) {
    if (error.error_level != wabt::ErrorLevel::Error) continue;
    if (!text.empty()) text += "; ";
    char offset[32];
    std::snprintf(offset, sizeof offset, "at offset 0x%zx: ", error.loc.offset);
    text += offset;
    text += error.message;
  }
  return text.empty() ? "rejected by wabt without a diagnostic" : text;
}

}  // namespace cmhost::engine::wabt_backend
