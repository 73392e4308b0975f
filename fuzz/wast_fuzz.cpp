// Fuzz target: `.wast` script text (the official suite's format) parsed as
// `cmhost wast` parses it, and value text as its assertions spell values.
// Bad input must be a cmhost::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cmhost/error.hpp"
#include "wast/script.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)cmhost::tools::wast::parse_script(text);
  } catch (const cmhost::Error&) {
  }
  try {
    (void)cmhost::tools::wast::parse_value_text(text);
  } catch (const cmhost::Error&) {
  }
  return 0;
}
