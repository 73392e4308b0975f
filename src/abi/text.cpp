#include "text.hpp"

namespace cmhost::abi {

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
