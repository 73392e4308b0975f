// Unicode helpers shared by the string lift/lower paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "support/unicode.hpp"

namespace cmhost::abi {

using support::append_utf8;
using support::is_unicode_scalar;
using support::is_valid_utf8;
using support::next_code_point;

// Decodes UTF-16LE code units into UTF-8; false on an unpaired surrogate.
bool utf16le_to_utf8(const uint8_t* p, size_t code_units, std::string& out);

// Latin-1 bytes to UTF-8 (always succeeds).
void latin1_to_utf8(const uint8_t* p, size_t n, std::string& out);

// Writes code point c as UTF-16LE at p; returns the number of code units (1 or 2).
inline size_t put_utf16le(uint8_t* p, uint32_t c) {
  if (c < 0x10000) {
    p[0] = static_cast<uint8_t>(c);
    p[1] = static_cast<uint8_t>(c >> 8);
    return 1;
  }
  c -= 0x10000;
  const uint32_t hi = 0xD800 | (c >> 10), lo = 0xDC00 | (c & 0x3FF);
  p[0] = static_cast<uint8_t>(hi);
  p[1] = static_cast<uint8_t>(hi >> 8);
  p[2] = static_cast<uint8_t>(lo);
  p[3] = static_cast<uint8_t>(lo >> 8);
  return 2;
}

}  // namespace cmhost::abi
