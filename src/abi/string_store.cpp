#include "string_store.hpp"

#include <cstring>

#include "program.hpp"
#include "text.hpp"

namespace cmhost::abi::detail {
namespace {

uint64_t utf16_tag(const AbiContext& cx) {
  return cx.options().addr == AddrWidth::I32 ? uint64_t{1} << 31 : uint64_t{1} << 63;
}

bool is_valid_utf16le(const uint8_t* p, uint64_t units) {
  for (uint64_t i = 0; i < units; ++i) {
    const uint32_t u = p[2 * i] | (uint32_t{p[2 * i + 1]} << 8);
    if (u < 0xD800 || u >= 0xE000) continue;
    if (u >= 0xDC00 || i + 1 >= units) return false;
    const uint32_t lo = p[2 * i + 2] | (uint32_t{p[2 * i + 3]} << 8);
    if (lo < 0xDC00 || lo >= 0xE000) return false;
    ++i;
  }
  return true;
}

// Walks the code points of a well-formed source from code unit `at`.
class CodePoints {
 public:
  CodePoints(const StringSource& s, uint64_t at) : s_(s), i_(at) {}
  bool done() const { return i_ >= s_.code_units; }
  uint32_t next() {
    switch (s_.form) {
      case TextForm::Utf8: {
        size_t i = i_;
        const uint32_t c = next_code_point(s_.data, i);
        i_ = i;
        return c;
      }
      case TextForm::Latin1: return s_.data[i_++];
      case TextForm::Utf16: {
        const uint32_t u = unit(i_++);
        if (u < 0xD800 || u >= 0xDC00) return u;
        return 0x10000 + ((u - 0xD800) << 10) + (unit(i_++) - 0xDC00);
      }
    }
    return 0;
  }

 private:
  uint32_t unit(uint64_t i) const { return s_.data[2 * i] | (uint32_t{s_.data[2 * i + 1]} << 8); }
  const StringSource& s_;
  uint64_t i_;
};

size_t put_utf8(uint8_t* p, uint32_t c) {
  if (c < 0x80) {
    p[0] = static_cast<uint8_t>(c);
    return 1;
  }
  if (c < 0x800) {
    p[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
    p[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c < 0x10000) {
    p[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
    p[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
    p[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
    return 3;
  }
  p[0] = static_cast<uint8_t>(0xF0 | (c >> 18));
  p[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3F));
  p[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3F));
  p[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
  return 4;
}

class StringStorer {
 public:
  StringStorer(AbiContext& cx, const StringSource& src, const Type& type)
      : cx_(cx), src_(src), type_(type) {}

  StoredString run() {
    const uint64_t n = src_.code_units;
    switch (cx_.options().encoding) {
      case StringEncoding::Utf8:
        switch (src_.form) {
          case TextForm::Utf8: return copy(1, 1);
          case TextForm::Utf16: return to_utf8(3 * n);
          case TextForm::Latin1: return to_utf8(2 * n);
        }
        break;
      case StringEncoding::Utf16:
        if (src_.form == TextForm::Utf8) return utf8_to_utf16();
        return copy(2, 2);
      case StringEncoding::Latin1Utf16:
        if (!src_.dynamic_latin1_utf16) return to_latin1_or_utf16();
        if (src_.form == TextForm::Latin1) return copy(1, 2);
        return probably_utf16_to_latin1_or_utf16();
    }
    return {0, 0};
  }

 private:
  uint64_t allocate(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size) {
    const uint64_t ptr = cx_.realloc(old_ptr, old_size, align, new_size);
    check_range(cx_, ptr, new_size, align, "string", type_);
    return ptr;
  }
  uint8_t* at(uint64_t ptr) { return cx_.base() + ptr; }

  // store_string_copy: same code points, each in a unit of `unit_size` bytes.
  StoredString copy(uint32_t unit_size, uint32_t align) {
    const uint64_t n = src_.code_units;
    const uint64_t ptr = allocate(0, 0, align, unit_size * n);
    uint8_t* dst = at(ptr);
    if (src_.form == TextForm::Latin1 && unit_size == 2) {
      for (uint64_t i = 0; i < n; ++i) {
        dst[2 * i] = src_.data[i];
        dst[2 * i + 1] = 0;
      }
    } else if (n) {
      std::memcpy(dst, src_.data, unit_size * n);
    }
    return {ptr, n};
  }

  // store_string_to_utf8: optimistic ASCII, then the worst case, then shrink.
  StoredString to_utf8(uint64_t worst) {
    const uint64_t n = src_.code_units;
    uint64_t ptr = allocate(0, 0, 1, n);
    CodePoints cps(src_, 0);
    for (uint64_t i = 0; !cps.done(); ++i) {
      const uint32_t c = cps.next();
      if (c < 0x80) {
        *at(ptr + i) = static_cast<uint8_t>(c);
        continue;
      }
      ptr = allocate(ptr, n, 1, worst);
      uint64_t len = i + put_utf8(at(ptr + i), c);
      while (!cps.done()) len += put_utf8(at(ptr + len), cps.next());
      if (worst > len) ptr = allocate(ptr, worst, 1, len);
      return {ptr, len};
    }
    return {ptr, n};
  }

  // store_utf8_to_utf16: the worst case, then shrink.
  StoredString utf8_to_utf16() {
    const uint64_t worst = 2 * src_.code_units;
    uint64_t ptr = allocate(0, 0, 2, worst);
    uint64_t units = 0;
    for (CodePoints cps(src_, 0); !cps.done();) units += put_utf16le(at(ptr + 2 * units), cps.next());
    if (2 * units < worst) ptr = allocate(ptr, worst, 2, 2 * units);
    return {ptr, units};
  }

  // store_string_to_latin1_or_utf16: optimistic Latin-1; at the first code
  // point above it, widen to UTF-16 in the worst-case size, then shrink.
  StoredString to_latin1_or_utf16() {
    const uint64_t n = src_.code_units;
    uint64_t ptr = allocate(0, 0, 2, n);
    uint64_t latin1 = 0;
    for (CodePoints cps(src_, 0); !cps.done();) {
      const uint32_t c = cps.next();
      if (c < 0x100) {
        *at(ptr + latin1++) = static_cast<uint8_t>(c);
        continue;
      }
      const uint64_t worst = 2 * n;
      ptr = allocate(ptr, n, 2, worst);
      uint8_t* dst = at(ptr);
      for (uint64_t j = latin1; j-- > 0;) {
        dst[2 * j] = dst[j];
        dst[2 * j + 1] = 0;
      }
      uint64_t units = latin1 + put_utf16le(dst + 2 * latin1, c);
      while (!cps.done()) units += put_utf16le(dst + 2 * units, cps.next());
      if (worst > 2 * units) ptr = allocate(ptr, worst, 2, 2 * units);
      return {ptr, units | utf16_tag(cx_)};
    }
    if (latin1 < n) ptr = allocate(ptr, n, 2, latin1);
    return {ptr, latin1};
  }

  // store_probably_utf16_to_latin1_or_utf16: copy the UTF-16, then narrow
  // in place when every unit fits Latin-1.
  StoredString probably_utf16_to_latin1_or_utf16() {
    const uint64_t n = src_.code_units;
    uint64_t ptr = allocate(0, 0, 2, 2 * n);
    uint8_t* dst = at(ptr);
    if (n) std::memcpy(dst, src_.data, 2 * n);
    for (uint64_t i = 0; i < n; ++i)
      if (dst[2 * i + 1] != 0) return {ptr, n | utf16_tag(cx_)};
    for (uint64_t i = 0; i < n; ++i) dst[i] = dst[2 * i];
    ptr = allocate(ptr, 2 * n, 1, n);
    return {ptr, n};
  }

  AbiContext& cx_;
  const StringSource& src_;
  const Type& type_;
};

}  // namespace

StringSource read_string(const AbiContext& cx, uint64_t ptr, uint64_t tagged, const Type& type) {
  cx.require_memory("strings");
  StringSource s{nullptr, tagged, TextForm::Utf8, false};
  switch (cx.options().encoding) {
    case StringEncoding::Utf8: break;
    case StringEncoding::Utf16: s.form = TextForm::Utf16; break;
    case StringEncoding::Latin1Utf16:
      s.dynamic_latin1_utf16 = true;
      if (tagged & utf16_tag(cx)) {
        s.form = TextForm::Utf16;
        s.code_units = tagged ^ utf16_tag(cx);
      } else {
        s.form = TextForm::Latin1;
      }
      break;
  }
  const uint32_t align = cx.options().encoding == StringEncoding::Utf8 ? 1 : 2;
  const uint64_t max_units = s.form == TextForm::Utf16 ? kMaxStringByteLength / 2 : kMaxStringByteLength;
  if (s.code_units > max_units)
    trap_in(type, "string of " + std::to_string(s.code_units) + " code units is longer than 2^28-1 bytes");
  const uint64_t byte_length = s.form == TextForm::Utf16 ? 2 * s.code_units : s.code_units;
  check_range(cx, ptr, byte_length, align, "string", type);
  s.data = cx.base() + ptr;
  if (s.form == TextForm::Utf8 && !is_valid_utf8(s.data, byte_length))
    trap_in(type, "string is not valid UTF-8");
  if (s.form == TextForm::Utf16 && !is_valid_utf16le(s.data, s.code_units))
    trap_in(type, "string is not valid UTF-16 (unpaired surrogate)");
  return s;
}

StoredString store_string(AbiContext& cx, const StringSource& src, const Type& type) {
  cx.require_memory("strings");
  return StringStorer(cx, src, type).run();
}

}  // namespace cmhost::abi::detail
