#include "unicode.hpp"

#include <cstring>

namespace cmhost::support {

bool is_valid_utf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    // ASCII fast path: eight bytes at a time while no high bit is set.
    while (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if (word & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const uint8_t b0 = p[i];
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t min;
    uint32_t c;
    if ((b0 & 0xE0) == 0xC0) {
      len = 2, min = 0x80, c = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3, min = 0x800, c = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4, min = 0x10000, c = b0 & 0x07;
    } else {
      return false;  // continuation byte or 0xF8..0xFF as a lead
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      c = (c << 6) | (p[i + k] & 0x3F);
    }
    if (c < min || !is_unicode_scalar(c)) return false;
    i += len;
  }
  return true;
}

}  // namespace cmhost::support
