#include "text.hpp"

namespace cmhost::abi {

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

bool utf16le_to_utf8(const uint8_t* p, size_t code_units, std::string& out) {
  out.clear();
  out.reserve(code_units);
  for (size_t i = 0; i < code_units; ++i) {
    uint32_t u = p[2 * i] | (uint32_t{p[2 * i + 1]} << 8);
    if (u < 0x80) {
      out.push_back(static_cast<char>(u));
      continue;
    }
    if (u >= 0xD800 && u < 0xDC00) {
      if (i + 1 >= code_units) return false;
      const uint32_t lo = p[2 * i + 2] | (uint32_t{p[2 * i + 3]} << 8);
      if (lo < 0xDC00 || lo >= 0xE000) return false;
      u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
      ++i;
    } else if (u >= 0xDC00 && u < 0xE000) {
      return false;
    }
    append_utf8(out, u);
  }
  return true;
}

void latin1_to_utf8(const uint8_t* p, size_t n, std::string& out) {
  out.clear();
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) append_utf8(out, p[i]);
}

}  // namespace cmhost::abi
