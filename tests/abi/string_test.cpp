// Strings in the three encodings, both directions, with the exact realloc
// sequences of definitions.py (store_string_copy, store_utf8_to_utf16,
// store_string_to_latin1_or_utf16, load_string_from_range) for a UTF-8
// source, and the README's test allocator (bump pointer, in-place shrink).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

using Bytes = std::vector<uint8_t>;
using Flat = std::vector<uint64_t>;
using Allocs = std::vector<HostMemory::Allocation>;

constexpr uint64_t kTag32 = uint64_t{1} << 31;
constexpr uint64_t kTag64 = uint64_t{1} << 63;

CanonOptions options(StringEncoding e, AddrWidth w = AddrWidth::I32) {
  CanonOptions o;
  o.encoding = e;
  o.addr = w;
  return o;
}

struct StringRig {
  explicit StringRig(CanonOptions o, uint64_t heap_base = 1, size_t size = 256)
      : opts(o), mem(size, heap_base), abi(Type::string(), o.addr) {}

  Flat lower(const std::string& s) {
    AbiContext cx(&mem, opts);
    Flat out;
    abi.lower_flat(cx, Val::string(s), out);
    return out;
  }
  void store(const std::string& s, uint64_t ptr) {
    AbiContext cx(&mem, opts);
    abi.store(cx, Val::string(s), ptr);
  }
  std::string lift(uint64_t ptr, uint64_t tagged_units) {
    AbiContext cx(&mem, opts);
    return std::string(abi.lift_flat(cx, Flat{ptr, tagged_units}).as_string());
  }
  Bytes bytes(size_t at, size_t n) const {
    return Bytes(mem.data().begin() + at, mem.data().begin() + at + n);
  }
  void poke(size_t at, const Bytes& b) { std::copy(b.begin(), b.end(), mem.bytes().begin() + at); }
  const Allocs& allocs() const { return mem.allocations(); }

  CanonOptions opts;
  HostMemory mem;
  ValueAbi abi;
};

const std::string kHello = "h\xC3\xA9llo";       // h é l l o: 6 UTF-8 bytes, 5 code points
const std::string kEuro = "\xE2\x82\xAC";         // U+20AC, 3 UTF-8 bytes
const std::string kGrin = "\xF0\x9F\x98\x80";     // U+1F600, 4 UTF-8 bytes, 2 UTF-16 units
const std::string kCafe = "caf\xC3\xA9";          // c a f é: 5 UTF-8 bytes, 4 Latin-1 bytes

// ---- utf8 -----------------------------------------------------------------------

TEST(StringUtf8, LowerIsOneAllocationAndACopy) {
  StringRig rig(options(StringEncoding::Utf8));
  EXPECT_EQ(rig.lower(kHello), (Flat{1, 6}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 1, 6, 1}}));
  EXPECT_EQ(rig.bytes(1, 6), (Bytes{'h', 0xC3, 0xA9, 'l', 'l', 'o'}));
}

TEST(StringUtf8, EmptyStringStillCallsRealloc) {
  StringRig rig(options(StringEncoding::Utf8), 5);
  EXPECT_EQ(rig.lower(""), (Flat{5, 0}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 1, 0, 5}}));
}

TEST(StringUtf8, Lift) {
  StringRig rig(options(StringEncoding::Utf8));
  rig.poke(10, {'h', 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80});
  EXPECT_EQ(rig.lift(10, 7), "h\xC3\xA9" + kGrin);
  EXPECT_EQ(rig.lift(10, 1), "h");
  EXPECT_EQ(rig.lift(0, 0), "");
}

TEST(StringUtf8, StoreIn32And64BitMemories) {
  StringRig r32(options(StringEncoding::Utf8), 32);
  r32.store("abc", 8);
  EXPECT_EQ(r32.bytes(8, 8), (Bytes{32, 0, 0, 0, 3, 0, 0, 0}));
  StringRig r64(options(StringEncoding::Utf8, AddrWidth::I64), 32);
  r64.store("abc", 8);
  EXPECT_EQ(r64.bytes(8, 16), (Bytes{32, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(r64.bytes(32, 3), (Bytes{'a', 'b', 'c'}));
  EXPECT_EQ(r64.lower("xy"), (Flat{35, 2}));
}

// ---- utf16 ----------------------------------------------------------------------

TEST(StringUtf16, WorstCaseThenShrink) {
  // realloc(0, 0, 2, 2*6) from heap base 1 -> 2; five units (10 bytes) are
  // fewer than 12, so a shrinking realloc(2, 12, 2, 10) follows, in place.
  StringRig rig(options(StringEncoding::Utf16));
  EXPECT_EQ(rig.lower(kHello), (Flat{2, 5}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 12, 2}, {2, 12, 2, 10, 2}}));
  EXPECT_EQ(rig.bytes(2, 10), (Bytes{'h', 0, 0xE9, 0, 'l', 0, 'l', 0, 'o', 0}));
}

TEST(StringUtf16, AsciiNeedsNoShrink) {
  StringRig rig(options(StringEncoding::Utf16));
  EXPECT_EQ(rig.lower("abc"), (Flat{2, 3}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 6, 2}}));
  EXPECT_EQ(rig.bytes(2, 6), (Bytes{'a', 0, 'b', 0, 'c', 0}));
}

TEST(StringUtf16, ThreeByteCharacter) {
  StringRig rig(options(StringEncoding::Utf16), 3);
  EXPECT_EQ(rig.lower(kEuro), (Flat{4, 1}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 6, 4}, {4, 6, 2, 2, 4}}));
  EXPECT_EQ(rig.bytes(4, 2), (Bytes{0xAC, 0x20}));
}

TEST(StringUtf16, SurrogatePairs) {
  // "a😀": 5 UTF-8 bytes, 3 UTF-16 units (a, D83D, DE00).
  StringRig rig(options(StringEncoding::Utf16));
  EXPECT_EQ(rig.lower("a" + kGrin), (Flat{2, 3}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 10, 2}, {2, 10, 2, 6, 2}}));
  EXPECT_EQ(rig.bytes(2, 6), (Bytes{'a', 0, 0x3D, 0xD8, 0x00, 0xDE}));
  EXPECT_EQ(rig.lift(2, 3), "a" + kGrin);
}

TEST(StringUtf16, EmptyStringStillCallsRealloc) {
  StringRig rig(options(StringEncoding::Utf16));
  EXPECT_EQ(rig.lower(""), (Flat{2, 0}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 0, 2}}));
}

TEST(StringUtf16, LiftCountsCodeUnits) {
  StringRig rig(options(StringEncoding::Utf16));
  rig.poke(16, {'h', 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE});
  EXPECT_EQ(rig.lift(16, 5), "h\xC3\xA9" + kEuro + kGrin);
  EXPECT_EQ(rig.lift(16, 2), "h\xC3\xA9");
}

TEST(StringUtf16, Memory64) {
  StringRig rig(options(StringEncoding::Utf16, AddrWidth::I64), 7);
  EXPECT_EQ(rig.lower(kHello), (Flat{8, 5}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 12, 8}, {8, 12, 2, 10, 8}}));
  EXPECT_EQ(rig.lift(8, 5), kHello);
}

// ---- latin1+utf16 -----------------------------------------------------------------

TEST(StringLatin1Utf16, AsciiStaysLatin1WithoutShrink) {
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower("abc"), (Flat{2, 3}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 3, 2}}));
  EXPECT_EQ(rig.bytes(2, 3), (Bytes{'a', 'b', 'c'}));
}

TEST(StringLatin1Utf16, NonAsciiLatin1ShrinksToItsByteCount) {
  // é is 2 UTF-8 bytes but 1 Latin-1 byte: 4 < 5, so realloc(2, 5, 2, 4).
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower(kCafe), (Flat{2, 4}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 5, 2}, {2, 5, 2, 4, 2}}));
  EXPECT_EQ(rig.bytes(2, 4), (Bytes{'c', 'a', 'f', 0xE9}));
}

TEST(StringLatin1Utf16, SwitchesToUtf16MidString) {
  // "ab€c" (6 UTF-8 bytes): a, b written as Latin-1 at 2; € grows the buffer
  // with realloc(2, 6, 2, 12), which is a fresh allocation at 8 plus a copy;
  // a, b are widened, "€c" encoded; 4 units (8 bytes) < 12 shrinks in place.
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower("ab" + kEuro + "c"), (Flat{8, 4 | kTag32}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 6, 2}, {2, 6, 2, 12, 8}, {8, 12, 2, 8, 8}}));
  EXPECT_EQ(rig.bytes(8, 8), (Bytes{'a', 0, 'b', 0, 0xAC, 0x20, 'c', 0}));
  // The abandoned buffer keeps the Latin-1 bytes written into it.
  EXPECT_EQ(rig.bytes(2, 2), (Bytes{'a', 'b'}));
}

TEST(StringLatin1Utf16, WidensNonAsciiLatin1BeforeTheSwitch) {
  // "é€" (5 UTF-8 bytes): é is Latin-1 0xE9, widened to E9 00.
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower("\xC3\xA9" + kEuro), (Flat{8, 2 | kTag32}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 5, 2}, {2, 5, 2, 10, 8}, {8, 10, 2, 4, 8}}));
  EXPECT_EQ(rig.bytes(8, 4), (Bytes{0xE9, 0, 0xAC, 0x20}));
}

TEST(StringLatin1Utf16, SwitchAtTheFirstCharacter) {
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower(kEuro), (Flat{6, 1 | kTag32}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 3, 2}, {2, 3, 2, 6, 6}, {6, 6, 2, 2, 6}}));
  EXPECT_EQ(rig.bytes(6, 2), (Bytes{0xAC, 0x20}));
}

TEST(StringLatin1Utf16, SupplementaryCharacterBecomesSurrogatePair) {
  // "x😀": 5 UTF-8 bytes; x, D83D, DE00 = 3 units.
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower("x" + kGrin), (Flat{8, 3 | kTag32}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 5, 2}, {2, 5, 2, 10, 8}, {8, 10, 2, 6, 8}}));
  EXPECT_EQ(rig.bytes(8, 6), (Bytes{'x', 0, 0x3D, 0xD8, 0x00, 0xDE}));
  EXPECT_EQ(rig.lift(8, 3 | kTag32), "x" + kGrin);
}

TEST(StringLatin1Utf16, EmptyStringStillCallsRealloc) {
  StringRig rig(options(StringEncoding::Latin1Utf16));
  EXPECT_EQ(rig.lower(""), (Flat{2, 0}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 0, 2}}));
}

TEST(StringLatin1Utf16, Memory64TagIsBit63) {
  StringRig rig(options(StringEncoding::Latin1Utf16, AddrWidth::I64));
  EXPECT_EQ(rig.lower("ab" + kEuro + "c"), (Flat{8, 4 | kTag64}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 6, 2}, {2, 6, 2, 12, 8}, {8, 12, 2, 8, 8}}));
  // Stored: 8-byte pointer, 8-byte tagged length.
  rig.store(kEuro, 32);
  const Allocs& a = rig.allocs();
  ASSERT_EQ(a.size(), 6u);
  const uint64_t ptr = a[5][4];
  EXPECT_EQ(rig.bytes(32, 16), (Bytes{static_cast<uint8_t>(ptr), 0, 0, 0, 0, 0, 0, 0,  //
                                      1, 0, 0, 0, 0, 0, 0, 0x80}));
  EXPECT_EQ(rig.lift(ptr, 1 | kTag64), kEuro);
}

TEST(StringLatin1Utf16, StoreWritesTaggedLength) {
  StringRig rig(options(StringEncoding::Latin1Utf16), 8);
  rig.store("ab" + kEuro + "c", 0);
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 6, 8}, {8, 6, 2, 12, 14}, {14, 12, 2, 8, 14}}));
  EXPECT_EQ(rig.bytes(0, 8), (Bytes{14, 0, 0, 0, 4, 0, 0, 0x80}));
}

TEST(StringLatin1Utf16, LiftLatin1AndTaggedUtf16) {
  StringRig rig(options(StringEncoding::Latin1Utf16));
  rig.poke(2, {'c', 'a', 'f', 0xE9});
  EXPECT_EQ(rig.lift(2, 4), kCafe);
  rig.poke(10, {'h', 0, 0xAC, 0x20});
  EXPECT_EQ(rig.lift(10, 2 | kTag32), "h" + kEuro);
  // Untagged, the same bytes are four Latin-1 characters (NUL included).
  EXPECT_EQ(rig.lift(10, 4), std::string("h\0\xC2\xAC ", 5));
}

TEST(StringLatin1Utf16, TagBitDependsOnMemoryWidth) {
  // In an i64 memory bit 31 is just part of a (too long) Latin-1 length.
  StringRig rig(options(StringEncoding::Latin1Utf16, AddrWidth::I64));
  rig.poke(10, {'h', 0});
  try {
    rig.lift(10, 1 | kTag32);
    ADD_FAILURE() << "expected a trap";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
  }
  EXPECT_EQ(rig.lift(10, 1 | kTag64), "h");
}

TEST(StringLatin1Utf16, SwitchWhileMemoryMoves) {
  StringRig rig(options(StringEncoding::Latin1Utf16), 1, 32);
  rig.mem.set_growth_per_allocation(1 << 16);
  // "été€" (8 UTF-8 bytes): Latin-1 buffer at 2, grown to 16 bytes at 10.
  EXPECT_EQ(rig.lower("\xC3\xA9t\xC3\xA9" + kEuro), (Flat{10, 4 | kTag32}));
  EXPECT_EQ(rig.allocs(), (Allocs{{0, 0, 2, 8, 2}, {2, 8, 2, 16, 10}, {10, 16, 2, 8, 10}}));
  EXPECT_EQ(rig.bytes(10, 8), (Bytes{0xE9, 0, 't', 0, 0xE9, 0, 0xAC, 0x20}));
  EXPECT_EQ(rig.mem.data().size(), 32u + 2 * (1 << 16));
}

// ---- round trips -------------------------------------------------------------------

TEST(StringRoundTrip, EveryEncodingAndWidth) {
  const std::vector<std::string> texts = {"",    "a",   kHello, kEuro, kGrin, kCafe,
                                          "\xC3\xBF\xC4\x80", "x" + kGrin + kEuro + "\xC3\xA9",
                                          std::string("nul\0inside", 10)};
  for (StringEncoding e : {StringEncoding::Utf8, StringEncoding::Utf16, StringEncoding::Latin1Utf16}) {
    for (AddrWidth w : {AddrWidth::I32, AddrWidth::I64}) {
      for (const std::string& s : texts) {
        SCOPED_TRACE(std::string(to_string(e)) + " " + s);
        StringRig rig(options(e, w), 16, 512);  // [0, 16) holds the stored pair
        const Flat flat = rig.lower(s);
        EXPECT_EQ(rig.lift(flat[0], flat[1]), s);
        rig.store(s, 0);
        AbiContext cx(&rig.mem, rig.opts);
        EXPECT_EQ(rig.abi.load(cx, 0), Val::string(s));
      }
    }
  }
}

}  // namespace
}  // namespace cmhost::abi
