// Fuzz target: a random type lifted from guest memory filled with the
// input's bytes, at an address the input picks, in each string encoding and
// address width. The compiled lift (ValueAbi::load) is checked against a
// plain walk written here from the spec's `load` (CanonicalABI.md,
// definitions.py): both trap, or both give the same value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmhost/error.hpp"
#include "generators.hpp"

namespace {

using namespace cmhost::abi;
using cmhost::fuzzing::gen_type;

constexpr uint64_t kMaxByteLength = (uint64_t{1} << 28) - 1;  // strings and lists
constexpr uint64_t kMaxWork = 200'000;  // loads and string bytes / 8: past it the input is skipped

struct Trapped {};       // the reference walk trapped
struct TooMuchWork {};   // the input describes more than the fuzzer should walk

uint64_t align_to(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// The spec's despecialized sizes and alignments, computed here on their own.
struct Shape {
  uint64_t size;
  uint64_t align;
};

uint32_t discriminant_bytes(size_t cases) { return cases <= 256 ? 1 : cases <= 65536 ? 2 : 4; }

Shape shape(const Type& t, uint32_t ptr_bytes) {
  switch (t.kind()) {
    case TypeKind::Bool:
    case TypeKind::S8:
    case TypeKind::U8: return {1, 1};
    case TypeKind::S16:
    case TypeKind::U16: return {2, 2};
    case TypeKind::S32:
    case TypeKind::U32:
    case TypeKind::F32:
    case TypeKind::Char: return {4, 4};
    case TypeKind::S64:
    case TypeKind::U64:
    case TypeKind::F64: return {8, 8};
    case TypeKind::String:
    case TypeKind::List:
    case TypeKind::Map: return {2 * uint64_t{ptr_bytes}, ptr_bytes};
    case TypeKind::FixedList: {
      const Shape e = shape(*t.element(), ptr_bytes);
      return {e.size * t.fixed_length(), e.align};
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      uint64_t size = 0, align = 1;
      for (const auto& f : t.fields()) {
        const Shape s = shape(*f.type, ptr_bytes);
        size = align_to(size, s.align) + s.size;
        align = std::max(align, s.align);
      }
      return {align_to(size, align), align};
    }
    case TypeKind::Flags: {
      const size_t n = t.labels().size();
      const uint64_t bytes = n <= 8 ? 1 : n <= 16 ? 2 : 4;
      return {bytes, bytes};
    }
    default: {  // variant, enum, option, result
      const uint64_t d = discriminant_bytes(t.cases().size());
      uint64_t case_size = 0, case_align = 1;
      for (const auto& c : t.cases())
        if (c.type) {
          const Shape s = shape(*c.type, ptr_bytes);
          case_size = std::max(case_size, s.size);
          case_align = std::max(case_align, s.align);
        }
      const uint64_t align = std::max(d, case_align);
      return {align_to(align_to(d, case_align) + case_size, align), align};
    }
  }
}

class Reference {
 public:
  Reference(const std::vector<uint8_t>& memory, CanonOptions options)
      : m_(memory), options_(options), ptr_bytes_(options.addr == AddrWidth::I32 ? 4 : 8) {}

  Val lift(const Type& t, uint64_t ptr) {
    const Shape s = shape(t, ptr_bytes_);
    if (ptr % s.align != 0 || ptr > m_.size() || s.size > m_.size() - ptr) throw Trapped{};
    return load(t, ptr);
  }

 private:
  uint64_t read(uint64_t ptr, uint32_t bytes) const {
    uint64_t v = 0;
    std::memcpy(&v, m_.data() + ptr, bytes);  // little-endian host
    return v;
  }
  static uint64_t sign(uint64_t v, uint32_t bytes) {
    const int shift = 64 - 8 * static_cast<int>(bytes);
    return static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
  }
  void work(uint64_t units) {
    work_ += units;
    if (work_ > kMaxWork) throw TooMuchWork{};
  }

  Val load(const Type& t, uint64_t ptr) {
    work(1);
    switch (t.kind()) {
      case TypeKind::Bool: return Val::bool_(read(ptr, 1) != 0);
      case TypeKind::U8: return Val::u8(static_cast<uint8_t>(read(ptr, 1)));
      case TypeKind::S8: return Val::from_bits(ValKind::S8, sign(read(ptr, 1), 1));
      case TypeKind::U16: return Val::u16(static_cast<uint16_t>(read(ptr, 2)));
      case TypeKind::S16: return Val::from_bits(ValKind::S16, sign(read(ptr, 2), 2));
      case TypeKind::U32: return Val::u32(static_cast<uint32_t>(read(ptr, 4)));
      case TypeKind::S32: return Val::from_bits(ValKind::S32, sign(read(ptr, 4), 4));
      case TypeKind::U64: return Val::u64(read(ptr, 8));
      case TypeKind::S64: return Val::s64(static_cast<int64_t>(read(ptr, 8)));
      case TypeKind::F32: return Val::from_bits(ValKind::F32, read(ptr, 4));
      case TypeKind::F64: return Val::from_bits(ValKind::F64, read(ptr, 8));
      case TypeKind::Char: {
        const uint64_t c = read(ptr, 4);
        if (c >= 0x110000 || (c >= 0xD800 && c <= 0xDFFF)) throw Trapped{};
        return Val::char_(static_cast<char32_t>(c));
      }
      case TypeKind::String: return Val::string(text(read(ptr, ptr_bytes_), read(ptr + ptr_bytes_, ptr_bytes_)));
      case TypeKind::List:
      case TypeKind::Map: {
        const Type& e = *t.element();
        std::vector<Val> items = range(e, read(ptr, ptr_bytes_), read(ptr + ptr_bytes_, ptr_bytes_));
        return t.kind() == TypeKind::Map ? Val::map(std::move(items)) : Val::list(std::move(items));
      }
      case TypeKind::FixedList: {
        const uint64_t step = shape(*t.element(), ptr_bytes_).size;
        std::vector<Val> items;
        for (uint32_t i = 0; i < t.fixed_length(); ++i) items.push_back(load(*t.element(), ptr + i * step));
        return Val::list(std::move(items));
      }
      case TypeKind::Record:
      case TypeKind::Tuple: {
        std::vector<Val> items;
        for (const auto& f : t.fields()) {
          const Shape s = shape(*f.type, ptr_bytes_);
          ptr = align_to(ptr, s.align);
          items.push_back(load(*f.type, ptr));
          ptr += s.size;
        }
        return t.kind() == TypeKind::Record ? Val::record(std::move(items)) : Val::tuple(std::move(items));
      }
      case TypeKind::Flags: {
        const size_t n = t.labels().size();
        const uint64_t bytes = n <= 8 ? 1 : n <= 16 ? 2 : 4;
        const uint64_t mask = n >= 32 ? 0xffffffffu : (uint64_t{1} << n) - 1;
        return Val::flags(static_cast<uint32_t>(read(ptr, static_cast<uint32_t>(bytes)) & mask));
      }
      default: {  // variant, enum, option, result
        const auto cases = t.cases();
        const uint32_t d = discriminant_bytes(cases.size());
        const uint64_t index = read(ptr, d);
        if (index >= cases.size()) throw Trapped{};
        uint64_t case_align = 1;
        for (const auto& c : cases)
          if (c.type) case_align = std::max(case_align, shape(*c.type, ptr_bytes_).align);
        const auto i = static_cast<uint32_t>(index);
        std::optional<Val> payload;
        if (cases[i].type) payload = load(*cases[i].type, align_to(ptr + d, case_align));
        switch (t.kind()) {
          case TypeKind::Enum: return Val::enum_(i);
          case TypeKind::Option: return i == 0 ? Val::none() : Val::some(std::move(*payload));
          case TypeKind::Result: return i == 0 ? Val::ok(std::move(payload)) : Val::err(std::move(payload));
          default: return Val::variant(i, std::move(payload));
        }
      }
    }
  }

  std::vector<Val> range(const Type& e, uint64_t begin, uint64_t length) {
    const Shape s = shape(e, ptr_bytes_);
    if (length > kMaxByteLength / s.size) throw Trapped{};  // length * size > MAX_LIST_BYTE_LENGTH
    if (begin % s.align != 0 || begin > m_.size() || length * s.size > m_.size() - begin) throw Trapped{};
    std::vector<Val> items;
    for (uint64_t i = 0; i < length; ++i) items.push_back(load(e, begin + i * s.size));
    return items;
  }

  // The spec's load_string_from_range, decoded to UTF-8.
  std::string text(uint64_t begin, uint64_t tagged) {
    const uint64_t tag = uint64_t{1} << (8 * ptr_bytes_ - 1);
    enum { Utf8, Utf16, Latin1 } form;
    uint64_t units = tagged;
    switch (options_.encoding) {
      case StringEncoding::Utf8: form = Utf8; break;
      case StringEncoding::Utf16: form = Utf16; break;
      default:
        if (tagged & tag) {
          form = Utf16;
          units = tagged ^ tag;
        } else {
          form = Latin1;
        }
    }
    if (form == Utf16 && units > kMaxByteLength / 2) throw Trapped{};
    const uint64_t bytes = form == Utf16 ? 2 * units : units;
    const uint64_t align = options_.encoding == StringEncoding::Utf8 ? 1 : 2;
    if (bytes > kMaxByteLength || begin % align != 0 || begin > m_.size() || bytes > m_.size() - begin)
      throw Trapped{};
    work(bytes / 8);
    const uint8_t* s = m_.data() + begin;
    std::string out;
    if (form == Latin1) {
      for (uint64_t i = 0; i < bytes; ++i) cmhost::fuzzing::append_utf8(out, s[i]);
    } else if (form == Utf16) {
      for (uint64_t i = 0; i < units; ++i) {
        const uint32_t u = s[2 * i] | s[2 * i + 1] << 8;
        if (u >= 0xDC00 && u <= 0xDFFF) throw Trapped{};  // a lone low surrogate
        if (u >= 0xD800 && u <= 0xDBFF) {
          if (i + 1 == units) throw Trapped{};
          const uint32_t low = s[2 * i + 2] | s[2 * i + 3] << 8;
          if (low < 0xDC00 || low > 0xDFFF) throw Trapped{};
          cmhost::fuzzing::append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00));
          ++i;
        } else {
          cmhost::fuzzing::append_utf8(out, u);
        }
      }
    } else {
      for (uint64_t i = 0; i < bytes;) i += utf8_sequence(s + i, bytes - i);
      out.assign(reinterpret_cast<const char*>(s), bytes);
    }
    return out;
  }
  // The length of the well-formed UTF-8 sequence at s (Unicode's table 3-7);
  // traps on anything else.
  static uint64_t utf8_sequence(const uint8_t* s, uint64_t left) {
    const uint8_t b = s[0];
    if (b < 0x80) return 1;
    uint64_t n;
    uint8_t low = 0x80, high = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      n = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      throw Trapped{};
    }
    if (left < n) throw Trapped{};
    if (s[1] < low || s[1] > high) throw Trapped{};
    for (uint64_t k = 2; k < n; ++k)
      if (s[k] < 0x80 || s[k] > 0xBF) throw Trapped{};
    return n;
  }
  const std::vector<uint8_t>& m_;
  const CanonOptions options_;
  const uint32_t ptr_bytes_;
  uint64_t work_ = 0;
};

void check(const TypeRef& type, const std::vector<uint8_t>& bytes, uint64_t ptr, CanonOptions options) {
  std::optional<Val> expected;
  try {
    expected = Reference(bytes, options).lift(*type, ptr);
  } catch (const Trapped&) {
  } catch (const TooMuchWork&) {
    return;
  }
  HostMemory memory(bytes);
  AbiContext cx(&memory, options);
  const ValueAbi abi(type, options.addr);
  std::optional<Val> actual;
  try {
    actual = abi.load(cx, ptr);
  } catch (const cmhost::Error& e) {
    if (e.kind() != cmhost::ErrorKind::Trap) std::abort();  // only traps are the guest's doing
  }
  if (expected.has_value() != actual.has_value()) std::abort();  // one trapped, the other did not
  if (expected && !(*expected == *actual)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const TypeRef type = gen_type(in, 0);
  const auto ptr = in.ConsumeIntegralInRange<uint64_t>(0, 300);
  std::vector<uint8_t> bytes = in.ConsumeRemainingBytes<uint8_t>();
  bytes.resize(4096);  // small addresses, lengths and offsets land inside
  for (StringEncoding encoding : {StringEncoding::Utf8, StringEncoding::Utf16, StringEncoding::Latin1Utf16})
    for (AddrWidth width : {AddrWidth::I32, AddrWidth::I64}) check(type, bytes, ptr, {width, encoding, false});
  return 0;
}
