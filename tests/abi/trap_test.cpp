// Every trap of load / lift_flat / store / lower_flat (definitions.py:
// trap_if in convert_i32_to_char, load_string_from_range, load_list_from_range,
// load_variant, lift_flat_variant, store_string_*, store_list_into_range),
// and valid edge cases that must not trap.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

using Bytes = std::vector<uint8_t>;
using Flat = std::vector<uint64_t>;

constexpr uint64_t kTag32 = uint64_t{1} << 31;

CanonOptions options(StringEncoding e = StringEncoding::Utf8, AddrWidth w = AddrWidth::I32) {
  CanonOptions o;
  o.encoding = e;
  o.addr = w;
  return o;
}

// A 64-byte memory holding whatever the test pokes into it.
struct TrapRig {
  explicit TrapRig(CanonOptions o = options(), size_t size = 64) : opts(o), mem(size, 1) {}

  Val load(const TypeRef& t, uint64_t ptr) {
    AbiContext cx(&mem, opts);
    return ValueAbi(t, opts.addr).load(cx, ptr);
  }
  Val lift(const TypeRef& t, const Flat& flat) {
    AbiContext cx(&mem, opts);
    return ValueAbi(t, opts.addr).lift_flat(cx, flat);
  }
  void store(const TypeRef& t, const Val& v, uint64_t ptr) {
    AbiContext cx(&mem, opts);
    ValueAbi(t, opts.addr).store(cx, v, ptr);
  }
  void poke(size_t at, const Bytes& b) { std::copy(b.begin(), b.end(), mem.bytes().begin() + at); }
  // Writes a (ptr, length) pair as the memory's address type.
  void poke_pair(size_t at, uint64_t ptr, uint64_t len) {
    const size_t n = ptr_size(opts.addr);
    for (size_t i = 0; i < n; ++i) {
      mem.bytes()[at + i] = static_cast<uint8_t>(ptr >> (8 * i));
      mem.bytes()[at + n + i] = static_cast<uint8_t>(len >> (8 * i));
    }
  }

  CanonOptions opts;
  HostMemory mem;
};

// Asserts that f traps with a message containing every needle.
template <typename F>
void expect_trap(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected a trap";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << n << "\"";
  }
}

// A string (ptr, len) pair at 0 and the check that loading and lifting it traps.
void expect_string_trap(TrapRig& rig, uint64_t ptr, uint64_t len,
                        std::initializer_list<std::string> needles) {
  rig.poke_pair(0, ptr, len);
  expect_trap([&] { rig.load(Type::string(), 0); }, needles);
  expect_trap([&] { rig.lift(Type::string(), {ptr, len}); }, needles);
}

void expect_list_trap(TrapRig& rig, const TypeRef& list, uint64_t ptr, uint64_t len,
                      std::initializer_list<std::string> needles) {
  rig.poke_pair(0, ptr, len);
  expect_trap([&] { rig.load(list, 0); }, needles);
  expect_trap([&] { rig.lift(list, {ptr, len}); }, needles);
}

// ---- discriminants ---------------------------------------------------------------

TEST(Trap, InvalidDiscriminantOneByte) {
  TrapRig rig;
  rig.poke(0, {2});
  expect_trap([&] { rig.load(Type::option(Type::u8()), 0); }, {"invalid discriminant 2", "option<u8>"});
  expect_trap([&] { rig.lift(Type::option(Type::u8()), {2, 0}); },
              {"invalid discriminant 2", "option<u8>"});
  auto e = Type::enum_({"a", "b", "c"});
  rig.poke(0, {3});
  expect_trap([&] { rig.load(e, 0); }, {"invalid discriminant 3", "enum { a, b, c }"});
  rig.poke(0, {2});
  EXPECT_EQ(rig.load(e, 0), Val::enum_(2));
  auto r = Type::result(Type::u8(), nullptr);
  expect_trap([&] { rig.lift(r, {0xFFFFFFFF, 0}); }, {"invalid discriminant", "result<u8>"});
}

TEST(Trap, InvalidDiscriminantTwoBytes) {
  std::vector<std::string> labels;
  for (int i = 0; i < 300; ++i) labels.push_back("l" + std::to_string(i));
  auto e = Type::enum_(labels);
  TrapRig rig;
  rig.poke(0, {0x2C, 0x01});  // 300
  expect_trap([&] { rig.load(e, 0); }, {"invalid discriminant 300", "enum { l0, l1"});
  rig.poke(0, {0x2B, 0x01});  // 299 is the last case
  EXPECT_EQ(rig.load(e, 0), Val::enum_(299));
  expect_trap([&] { rig.lift(e, {300}); }, {"invalid discriminant 300"});
}

// ---- chars -------------------------------------------------------------------------

TEST(Trap, CharSurrogate) {
  TrapRig rig;
  for (uint32_t c : {0xD800u, 0xDBFFu, 0xDC00u, 0xDFFFu}) {
    SCOPED_TRACE(c);
    rig.poke(0, {static_cast<uint8_t>(c), static_cast<uint8_t>(c >> 8), 0, 0});
    expect_trap([&] { rig.load(Type::char_(), 0); }, {"surrogate", "char"});
    expect_trap([&] { rig.lift(Type::char_(), {c}); }, {"surrogate", "char"});
  }
}

TEST(Trap, CharAboveMax) {
  TrapRig rig;
  rig.poke(0, {0x00, 0x00, 0x11, 0x00});
  expect_trap([&] { rig.load(Type::char_(), 0); }, {"above 0x10FFFF", "char"});
  for (uint64_t c : {0x110000ull, 0xFFFFFFFFull}) {
    expect_trap([&] { rig.lift(Type::char_(), {c}); }, {"above 0x10FFFF", "char"});
  }
  // Inside a compound type the message names the char.
  expect_trap([&] { rig.lift(Type::tuple({Type::u8(), Type::char_()}), {1, 0x110000}); },
              {"above 0x10FFFF", "char"});
}

TEST(NoTrap, CharBoundaries) {
  TrapRig rig;
  for (uint32_t c : {0u, 0xD7FFu, 0xE000u, 0x10FFFFu}) {
    EXPECT_EQ(rig.lift(Type::char_(), {c}), Val::char_(c));
  }
}

// ---- string bounds ---------------------------------------------------------------

TEST(Trap, StringOutOfBoundsByLength) {
  TrapRig rig;
  expect_string_trap(rig, 32, 33, {"out of bounds", "string"});
}

TEST(Trap, StringOutOfBoundsByPointer) {
  TrapRig rig;
  expect_string_trap(rig, 65, 0, {"out of bounds", "string"});
  expect_string_trap(rig, 0xFFFFFFFF, 0, {"out of bounds", "string"});
}

TEST(Trap, StringPointerPlusLengthWraps2To32) {
  // 0xFFFFFFF0 + 0x20 is 0x10 in 32-bit arithmetic, inside memory.
  TrapRig rig;
  expect_string_trap(rig, 0xFFFFFFF0, 0x20, {"out of bounds", "string"});
  TrapRig utf16(options(StringEncoding::Utf16));
  expect_string_trap(utf16, 0xFFFFFFF0, 0x10, {"out of bounds", "string"});
}

TEST(Trap, StringPointerPlusLengthWraps2To64) {
  TrapRig rig(options(StringEncoding::Utf8, AddrWidth::I64));
  expect_string_trap(rig, 0xFFFFFFFFFFFFFFF0ull, 0x20, {"out of bounds", "string"});
  // A pointer with bits above bit 31 set.
  expect_string_trap(rig, 0x100000000ull, 1, {"out of bounds", "string"});
}

TEST(Trap, StringMisalignedUtf16) {
  TrapRig rig(options(StringEncoding::Utf16));
  expect_string_trap(rig, 3, 1, {"not aligned to 2", "string"});
  // latin1+utf16 needs alignment 2 for both forms.
  TrapRig l1(options(StringEncoding::Latin1Utf16));
  expect_string_trap(l1, 3, 1, {"not aligned to 2", "string"});
  expect_string_trap(l1, 3, 1 | kTag32, {"not aligned to 2", "string"});
}

// ---- string contents --------------------------------------------------------------

TEST(Trap, InvalidUtf8EachMalformation) {
  const std::vector<std::pair<const char*, Bytes>> cases = {
      {"stray continuation byte", {'a', 0x80}},
      {"0xFE", {0xFE}},
      {"0xFF", {0xFF}},
      {"five-byte lead", {0xF8, 0x88, 0x80, 0x80, 0x80}},
      {"overlong 2-byte", {0xC0, 0xAF}},
      {"overlong 2-byte C1", {0xC1, 0xBF}},
      {"overlong 3-byte", {0xE0, 0x80, 0xAF}},
      {"overlong 4-byte", {0xF0, 0x80, 0x80, 0xAF}},
      {"encoded surrogate", {0xED, 0xA0, 0x80}},
      {"encoded low surrogate", {0xED, 0xBF, 0xBF}},
      {"above U+10FFFF", {0xF4, 0x90, 0x80, 0x80}},
      {"lead above F4", {0xF5, 0x80, 0x80, 0x80}},
      {"truncated at the end", {'a', 0xE2, 0x82}},
      {"truncated before ASCII", {0xE2, 0x82, 'a'}},
      {"missing continuation", {0xC3, 'a'}},
      {"invalid after a long ASCII run", {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 0x80}},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    TrapRig rig;
    rig.poke(16, bytes);
    expect_string_trap(rig, 16, bytes.size(), {"not valid UTF-8", "string"});
  }
}

TEST(Trap, UnpairedUtf16Surrogates) {
  const std::vector<std::pair<const char*, Bytes>> cases = {
      {"lone high at the end", {'a', 0, 0x3D, 0xD8}},
      {"high then non-surrogate", {0x3D, 0xD8, 'a', 0}},
      {"high then high", {0x3D, 0xD8, 0x3D, 0xD8}},
      {"lone low", {0x00, 0xDE}},
      {"reversed pair", {0x00, 0xDE, 0x3D, 0xD8}},
  };
  for (const auto& [what, bytes] : cases) {
    SCOPED_TRACE(what);
    TrapRig rig(options(StringEncoding::Utf16));
    rig.poke(16, bytes);
    expect_string_trap(rig, 16, bytes.size() / 2, {"unpaired surrogate", "string"});
    TrapRig l1(options(StringEncoding::Latin1Utf16));
    l1.poke(16, bytes);
    expect_string_trap(l1, 16, (bytes.size() / 2) | kTag32, {"unpaired surrogate", "string"});
  }
}

TEST(Trap, StringLongerThan2To28Minus1) {
  const uint64_t limit = (uint64_t{1} << 28) - 1;
  TrapRig utf8;
  expect_string_trap(utf8, 0, limit + 1, {"longer than 2^28-1", "string"});
  // At the limit the length is fine and the bounds check fires instead.
  utf8.poke_pair(0, 0, limit);
  expect_trap([&] { utf8.load(Type::string(), 0); }, {"out of bounds"});

  TrapRig utf16(options(StringEncoding::Utf16));
  expect_string_trap(utf16, 0, uint64_t{1} << 27, {"longer than 2^28-1", "string"});
  // 2^31 units are 2^32 bytes: the byte length overflows 32 bits.
  expect_string_trap(utf16, 0, uint64_t{1} << 31, {"longer than 2^28-1", "string"});
  utf16.poke_pair(0, 0, (uint64_t{1} << 27) - 1);
  expect_trap([&] { utf16.load(Type::string(), 0); }, {"out of bounds"});

  TrapRig l1(options(StringEncoding::Latin1Utf16));
  expect_string_trap(l1, 0, limit + 1, {"longer than 2^28-1", "string"});
  expect_string_trap(l1, 0, (uint64_t{1} << 27) | kTag32, {"longer than 2^28-1", "string"});

  // i64: the tag is bit 63 only; bit 32 is part of the length.
  TrapRig l64(options(StringEncoding::Latin1Utf16, AddrWidth::I64));
  expect_string_trap(l64, 0, (uint64_t{1} << 63) | (uint64_t{1} << 32), {"longer than 2^28-1"});
  expect_string_trap(l64, 0, uint64_t{1} << 32, {"longer than 2^28-1"});

  // i64: 2^63 UTF-16 units would be 2^64 bytes.
  TrapRig u64(options(StringEncoding::Utf16, AddrWidth::I64));
  expect_string_trap(u64, 0, uint64_t{1} << 63, {"longer than 2^28-1", "string"});
}

// ---- lists ----------------------------------------------------------------------------

TEST(Trap, ListMisaligned) {
  TrapRig rig;
  expect_list_trap(rig, Type::list(Type::u32()), 2, 1, {"not aligned to 4", "list<u32>"});
  expect_list_trap(rig, Type::list(Type::u16()), 1, 0, {"not aligned to 2", "list<u16>"});
  expect_list_trap(rig, Type::list(Type::string()), 6, 1, {"not aligned to 4", "list<string>"});
}

TEST(Trap, ListOutOfBounds) {
  TrapRig rig;
  expect_list_trap(rig, Type::list(Type::u32()), 60, 2, {"out of bounds", "list<u32>"});
  expect_list_trap(rig, Type::list(Type::u8()), 65, 0, {"out of bounds", "list<u8>"});
  expect_list_trap(rig, Type::list(Type::u8()), 0xFFFFFFF0, 0x20, {"out of bounds", "list<u8>"});
  TrapRig r64(options(StringEncoding::Utf8, AddrWidth::I64));
  expect_list_trap(r64, Type::list(Type::u8()), 0xFFFFFFFFFFFFFFF0ull, 0x20,
                   {"out of bounds", "list<u8>"});
}

TEST(Trap, ListByteLengthAbove2To28Minus1) {
  TrapRig rig;
  // 2^26 u32s are 2^28 bytes.
  expect_list_trap(rig, Type::list(Type::u32()), 0, uint64_t{1} << 26,
                   {"longer than 2^28-1", "list<u32>"});
  // One element fewer is within the limit: the bounds check fires instead.
  rig.poke_pair(0, 0, (uint64_t{1} << 26) - 1);
  expect_trap([&] { rig.load(Type::list(Type::u32()), 0); }, {"out of bounds"});
}

TEST(Trap, ListByteLengthProductOverflow) {
  // 2^29 u64s are 2^32 bytes: 0 in 32-bit arithmetic.
  TrapRig rig;
  expect_list_trap(rig, Type::list(Type::u64()), 0, uint64_t{1} << 29,
                   {"longer than 2^28-1", "list<u64>"});
  // 2^61 u64s are 2^64 bytes: 0 in 64-bit arithmetic.
  TrapRig r64(options(StringEncoding::Utf8, AddrWidth::I64));
  expect_list_trap(r64, Type::list(Type::u64()), 0, uint64_t{1} << 61,
                   {"longer than 2^28-1", "list<u64>"});
  // 24-byte elements: 0xAAAAAAAAAAAAAAAB * 24 wraps to 8.
  auto rec = Type::tuple({Type::u64(), Type::u64(), Type::u64()});
  expect_list_trap(r64, Type::list(rec), 0, 0xAAAAAAAAAAAAAAABull,
                   {"longer than 2^28-1", "list<tuple<u64, u64, u64>>"});
}

// ---- realloc results ----------------------------------------------------------------

// A guest memory whose realloc returns the given pointers in turn.
class ScriptedRealloc : public GuestMemory {
 public:
  ScriptedRealloc(size_t size, std::vector<uint64_t> results)
      : bytes_(size, 0), results_(std::move(results)) {}
  std::span<uint8_t> bytes() override { return bytes_; }
  uint64_t realloc(uint64_t, uint64_t, uint32_t, uint64_t) override {
    if (calls_ >= results_.size()) throw Error(ErrorKind::Trap, "unexpected realloc");
    return results_[calls_++];
  }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<uint64_t> results_;
  size_t calls_ = 0;
};

void expect_lower_trap(ScriptedRealloc& mem, CanonOptions opts, const TypeRef& t, const Val& v,
                       std::initializer_list<std::string> needles) {
  AbiContext cx(&mem, opts);
  ValueAbi abi(t, opts.addr);
  Flat out;
  expect_trap([&] { abi.lower_flat(cx, v, out); }, needles);
}

TEST(Trap, ReallocReturnsMisalignedPointer) {
  {
    ScriptedRealloc mem(64, {2});
    expect_lower_trap(mem, options(), Type::list(Type::u32()), Val::list({Val::u32(1)}),
                      {"not aligned to 4", "list<u32>"});
  }
  {
    ScriptedRealloc mem(64, {3});
    expect_lower_trap(mem, options(StringEncoding::Utf16), Type::string(), Val::string("ab"),
                      {"not aligned to 2", "string"});
  }
  {
    // The shrinking realloc of a UTF-16 string is checked too.
    ScriptedRealloc mem(64, {2, 5});
    expect_lower_trap(mem, options(StringEncoding::Utf16), Type::string(),
                      Val::string("h\xC3\xA9"), {"not aligned to 2", "string"});
  }
  {
    // So is the growing realloc of latin1+utf16.
    ScriptedRealloc mem(64, {2, 9});
    expect_lower_trap(mem, options(StringEncoding::Latin1Utf16), Type::string(),
                      Val::string("a\xE2\x82\xAC"), {"not aligned to 2", "string"});
  }
}

TEST(Trap, ReallocReturnsOutOfBoundsPointer) {
  {
    ScriptedRealloc mem(64, {60});
    expect_lower_trap(mem, options(), Type::list(Type::u32()),
                      Val::list({Val::u32(1), Val::u32(2)}), {"out of bounds", "list<u32>"});
  }
  {
    ScriptedRealloc mem(64, {63});
    expect_lower_trap(mem, options(), Type::string(), Val::string("ab"),
                      {"out of bounds", "string"});
  }
  {
    ScriptedRealloc mem(64, {0xFFFFFFFE});
    expect_lower_trap(mem, options(StringEncoding::Latin1Utf16), Type::string(),
                      Val::string("abcd"), {"out of bounds", "string"});
  }
  {
    // An empty string may sit at the end of memory, but not past it.
    ScriptedRealloc ok(64, {64});
    AbiContext cx(&ok, options());
    Flat out;
    ValueAbi(Type::string(), AddrWidth::I32).lower_flat(cx, Val::string(""), out);
    EXPECT_EQ(out, (Flat{64, 0}));
    ScriptedRealloc past(64, {65});
    expect_lower_trap(past, options(), Type::string(), Val::string(""), {"out of bounds", "string"});
  }
}

// ---- top-level addresses ----------------------------------------------------------

TEST(Trap, TopLevelLoadMisaligned) {
  TrapRig rig;
  expect_trap([&] { rig.load(Type::u32(), 2); }, {"not aligned to 4", "u32"});
  expect_trap([&] { rig.load(Type::record({{"a", Type::u8()}, {"b", Type::u64()}}), 4); },
              {"not aligned to 8", "record { a: u8, b: u64 }"});
  expect_trap([&] { rig.store(Type::u16(), Val::u16(1), 1); }, {"not aligned to 2", "u16"});
}

TEST(Trap, TopLevelLoadOutOfBounds) {
  TrapRig rig;
  expect_trap([&] { rig.load(Type::u64(), 64); }, {"out of bounds", "u64"});
  expect_trap([&] { rig.load(Type::u64(), 0xFFFFFFFFFFFFFFF8ull); }, {"out of bounds", "u64"});
  expect_trap([&] { rig.load(Type::string(), 60); }, {"out of bounds", "string"});
  expect_trap([&] { rig.store(Type::u32(), Val::u32(1), 64); }, {"out of bounds", "u32"});
  EXPECT_EQ(rig.load(Type::u64(), 56), Val::u64(0));
}

// ---- valid edge cases ----------------------------------------------------------------

TEST(NoTrap, EmptyListAndStringAtTheEndOfMemory) {
  TrapRig rig;
  rig.poke_pair(0, 64, 0);
  EXPECT_EQ(rig.load(Type::list(Type::u32()), 0).list_size(), 0u);
  EXPECT_EQ(rig.load(Type::list(Type::string()), 0).list_size(), 0u);
  EXPECT_EQ(rig.load(Type::string(), 0), Val::string(""));
  EXPECT_EQ(rig.lift(Type::list(Type::u8()), {64, 0}).list_size(), 0u);
  // The last byte of memory is a valid one-element list.
  EXPECT_EQ(rig.lift(Type::list(Type::u8()), {63, 1}).list_size(), 1u);
  TrapRig r64(options(StringEncoding::Utf16, AddrWidth::I64));
  EXPECT_EQ(r64.lift(Type::string(), {64, 0}), Val::string(""));
}

TEST(NoTrap, FlagsWithHighJunkBits) {
  TrapRig rig;
  rig.poke(0, {0xFF});
  EXPECT_EQ(rig.load(Type::flags({"a", "b", "c"}), 0), Val::flags(7));
  rig.poke(2, {0xFF, 0xFF});
  std::vector<std::string> nine;
  for (int i = 0; i < 9; ++i) nine.push_back("f" + std::to_string(i));
  EXPECT_EQ(rig.load(Type::flags(nine), 2), Val::flags(0x1FF));
  EXPECT_EQ(rig.lift(Type::flags({"a"}), {0xFFFFFFFE}), Val::flags(0));
}

TEST(NoTrap, BoolByteSeven) {
  TrapRig rig;
  rig.poke(5, {7});
  EXPECT_EQ(rig.load(Type::bool_(), 5), Val::bool_(true));
  EXPECT_EQ(rig.lift(Type::bool_(), {7}), Val::bool_(true));
}

TEST(NoTrap, UnusedVariantPayloadBytesAreNotRead) {
  // option<char> none with an invalid char in the payload slot.
  TrapRig rig;
  rig.poke(0, {0, 0, 0, 0, 0x00, 0xD8, 0, 0});
  EXPECT_EQ(rig.load(Type::option(Type::char_()), 0), Val::none());
  EXPECT_EQ(rig.lift(Type::option(Type::char_()), {0, 0xD800}), Val::none());
}

}  // namespace
}  // namespace cmhost::abi
