// UTF-8 helpers: validating, decoding and encoding code points. Every stage
// that reads or writes text uses these (names in binaries, strings crossing
// the boundary, WAVE, the tools).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cmhost::support {

inline bool is_unicode_scalar(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c < 0x110000); }

// True when [p, p+n) is well-formed UTF-8 (no overlongs, surrogates or values
// above U+10FFFF). Runs of ASCII are skipped eight bytes at a time.
bool is_valid_utf8(const uint8_t* p, size_t n);

// Decodes one code point from valid UTF-8 at s[i], advancing i.
inline uint32_t next_code_point(const unsigned char* s, size_t& i) {
  const uint32_t b0 = s[i];
  if (b0 < 0x80) {
    i += 1;
    return b0;
  }
  if (b0 < 0xE0) {
    const uint32_t c = ((b0 & 0x1F) << 6) | (s[i + 1] & 0x3F);
    i += 2;
    return c;
  }
  if (b0 < 0xF0) {
    const uint32_t c = ((b0 & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    i += 3;
    return c;
  }
  const uint32_t c = ((b0 & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) |
                     (s[i + 3] & 0x3F);
  i += 4;
  return c;
}

inline void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace cmhost::support
