// Fuzz target: arbitrary bytes decoded, validated and planned, as
// `cmhost inspect` and Component::from_bytes take them. Bad input must be a
// cmhost::Error (Decode or Validate); anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "binary/binary.hpp"
#include "cmhost/error.hpp"
#include "validate/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  try {
    const auto decoded = cmhost::binary::decode_component(bytes);
    const cmhost::validate::Plan plan = cmhost::validate::validate_component(decoded, bytes);
    (void)cmhost::validate::to_string(plan);
  } catch (const cmhost::Error&) {
  }
  return 0;
}
