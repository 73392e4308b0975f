// Every value type as parameter and result of real components:
// tests/components/values.wat echoes each type back and hands the host chosen
// bits and bytes to lift (the canonical ABI's truncation rules and traps); the
// values-nested*.wat generated from it run the same calls from another
// component; values-host.wat has the host lift what a guest passes to an
// import.
#include <gtest/gtest.h>

#include "../support/test_engine.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "test_support.hpp"

namespace cmhost {
namespace {

using abi::Type;
using abi::Val;
using abi::ValKind;

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

// The fixture's return area, where `place-at` copies bytes (values.wat).
constexpr uint32_t kReturnArea = 256;

Val f32_bits(uint32_t bits) { return Val::f32(std::bit_cast<float>(bits)); }
Val f64_bits(uint64_t bits) { return Val::f64(std::bit_cast<double>(bits)); }

constexpr uint32_t kCanonicalNan32 = 0x7fc00000;
constexpr uint64_t kCanonicalNan64 = 0x7ff8000000000000;

template <typename T, typename Make>
Val list_of(std::initializer_list<T> items, Make make) {
  std::vector<Val> out;
  for (const T& item : items) out.push_back(make(item));
  return Val::list(std::move(out));
}

Val strings(std::initializer_list<const char*> items) {
  return list_of(items, [](const char* s) { return Val::string(s); });
}

// Little-endian bytes of a u32, for building memory images.
void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// The cases of `var` (values.wat), by index.
enum VarCase : uint32_t { kInt, kLong, kFloat, kDouble, kText, kByte, kNone };

Val var(VarCase c, std::optional<Val> payload = std::nullopt) { return Val::variant(c, std::move(payload)); }

// The encoding strings are in before they reach values.wat.
enum class Source { Utf8, Utf16, Latin1Utf16 };

// One instance of a values component per test: values.wat itself, or one of
// the values-nested*.wat, where an outer component forwards every call to
// it through canon lower, so values also cross from one guest's memory (its
// strings in UTF-8, UTF-16 or latin1+utf16) to another's.
class Values : public ::testing::TestWithParam<const char*> {
 protected:
  Source source() const {
    const std::string name = GetParam();
    if (name == "values-nested-utf16") return Source::Utf16;
    if (name == "values-nested-latin1") return Source::Latin1Utf16;
    return Source::Utf8;
  }

  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture(GetParam()));
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);

  Val call(const char* name, std::vector<Val> args) {
    auto results = instance.func(name).call(store, args);
    if (results.size() != 1) {
      ADD_FAILURE() << name << " returned " << results.size() << " results";
      return Val();
    }
    return std::move(results[0]);
  }

  // The value as WAVE, for failure messages.
  std::string wave(const char* name, const Val& v) {
    try {
      return to_wave(*instance.func(name).type().result, v);
    } catch (const Error& e) {
      return std::string("<not a value of the result type: ") + e.what() + ">";
    }
  }

  // Each value through the one-parameter echo `name` comes back equal.
  void round_trip(const char* name, const std::vector<Val>& vals) {
    for (const Val& v : vals) {
      const Val out = call(name, {v});
      EXPECT_EQ(out, v) << name << ": sent " << wave(name, v) << ", got " << wave(name, out);
    }
  }

  // Calls `name` in a fresh instance (a trap poisons the instance) and
  // returns the trap's message, checking it names `reason`.
  std::string expect_trap(const char* name, std::vector<Val> args, const std::string& reason) {
    Store fresh(engine);
    const Instance inst = Linker().instantiate(fresh, component);
    try {
      const auto results = inst.func(name).call(fresh, args);
      ADD_FAILURE() << name << " did not trap; it returned "
                    << (results.empty() ? "nothing" : wave(name, results[0]));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Trap) << name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos)
          << name << ": the message should name `" << reason << "`: " << e.what();
      return e.what();
    }
    return "";
  }

  void expect_invalid(const char* name, std::vector<Val> args) {
    try {
      call(name, std::move(args));
      ADD_FAILURE() << name << " accepted an invalid argument";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << name << ": " << e.what();
    }
  }

  uint32_t post_returns() { return call("post-returns", {}).as_u32(); }
  uint32_t heap_top() { return call("heap-top", {}).as_u32(); }

  // Lifts the result type of `mem-...` from `bytes` placed at the return
  // area plus `offset`.
  Val from_memory(const char* name, const std::vector<uint8_t>& bytes, uint32_t offset = 0) {
    return call(name, {Val::bytes(bytes), Val::u32(offset)});
  }
  std::string memory_trap(const char* name, const std::vector<uint8_t>& bytes, const std::string& reason,
                          uint32_t offset = 0) {
    return expect_trap(name, {Val::bytes(bytes), Val::u32(offset)}, reason);
  }
};

// ------------------------------------------------------------------ scalars

TEST_P(Values, Bool) { round_trip("echo-bool", {Val::bool_(false), Val::bool_(true)}); }

TEST_P(Values, Integers) {
  round_trip("echo-s8", {Val::s8(0), Val::s8(-1), Val::s8(INT8_MIN), Val::s8(INT8_MAX)});
  round_trip("echo-u8", {Val::u8(0), Val::u8(1), Val::u8(0x80), Val::u8(UINT8_MAX)});
  round_trip("echo-s16", {Val::s16(0), Val::s16(-1), Val::s16(INT16_MIN), Val::s16(INT16_MAX)});
  round_trip("echo-u16", {Val::u16(0), Val::u16(0x8000), Val::u16(UINT16_MAX)});
  round_trip("echo-s32", {Val::s32(0), Val::s32(-1), Val::s32(INT32_MIN), Val::s32(INT32_MAX)});
  round_trip("echo-u32", {Val::u32(0), Val::u32(0x80000000u), Val::u32(UINT32_MAX)});
  round_trip("echo-s64", {Val::s64(0), Val::s64(-1), Val::s64(INT64_MIN), Val::s64(INT64_MAX)});
  round_trip("echo-u64", {Val::u64(0), Val::u64(uint64_t{1} << 63), Val::u64(UINT64_MAX)});
}

TEST_P(Values, Floats) {
  round_trip("echo-f32", {Val::f32(0.0f), Val::f32(-0.0f), Val::f32(1.5f), Val::f32(0.1f),
                          Val::f32(std::numeric_limits<float>::max()),
                          Val::f32(std::numeric_limits<float>::lowest()),
                          Val::f32(std::numeric_limits<float>::denorm_min()),
                          Val::f32(std::numeric_limits<float>::infinity()),
                          Val::f32(-std::numeric_limits<float>::infinity()), f32_bits(kCanonicalNan32)});
  round_trip("echo-f64", {Val::f64(0.0), Val::f64(-0.0), Val::f64(0.1), Val::f64(std::numeric_limits<double>::max()),
                          Val::f64(std::numeric_limits<double>::lowest()),
                          Val::f64(std::numeric_limits<double>::denorm_min()),
                          Val::f64(std::numeric_limits<double>::infinity()),
                          Val::f64(-std::numeric_limits<double>::infinity()), f64_bits(kCanonicalNan64)});
  // -0.0 keeps its sign bit: the comparison is by bit pattern.
  EXPECT_EQ(call("echo-f64", {Val::f64(-0.0)}).scalar_bits(), uint64_t{1} << 63);
}

// The deterministic profile (cmhost's default): any NaN crossing the
// boundary, lowered or lifted, becomes the canonical NaN.
TEST_P(Values, NansAreCanonicalizedBothWays) {
  for (uint32_t nan : {0x7fa00001u, 0xffc00000u, 0x7f800001u, 0xffffffffu}) {
    EXPECT_EQ(call("echo-f32", {f32_bits(nan)}).scalar_bits(), kCanonicalNan32) << std::hex << nan;
    EXPECT_EQ(call("f32-bits", {f32_bits(nan)}).as_u32(), kCanonicalNan32) << std::hex << nan;  // lowered
    EXPECT_EQ(call("narrow-f32", {Val::u32(nan)}).scalar_bits(), kCanonicalNan32) << std::hex << nan;  // lifted
  }
  for (uint64_t nan : {0x7ff0000000000001ull, 0xfff8000000000000ull, 0x7ff4000000000000ull}) {
    EXPECT_EQ(call("echo-f64", {f64_bits(nan)}).scalar_bits(), kCanonicalNan64) << std::hex << nan;
    EXPECT_EQ(call("f64-bits", {f64_bits(nan)}).as_u64(), kCanonicalNan64) << std::hex << nan;
    EXPECT_EQ(call("narrow-f64", {Val::u64(nan)}).scalar_bits(), kCanonicalNan64) << std::hex << nan;
  }
  // Other bit patterns pass unchanged, both ways.
  EXPECT_EQ(call("f32-bits", {Val::f32(-0.0f)}).as_u32(), 0x80000000u);
  EXPECT_EQ(call("f32-bits", {Val::f32(1.0f)}).as_u32(), 0x3f800000u);
  EXPECT_EQ(call("f64-bits", {Val::f64(-0.0)}).as_u64(), uint64_t{1} << 63);
  EXPECT_EQ(call("narrow-f32", {Val::u32(0x7f800000)}), Val::f32(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(call("narrow-f32", {Val::u32(1)}), Val::f32(std::numeric_limits<float>::denorm_min()));
  EXPECT_EQ(call("narrow-f64", {Val::u64(0xfff0000000000000ull)}),
            Val::f64(-std::numeric_limits<double>::infinity()));
}

TEST_P(Values, Chars) {
  round_trip("echo-char", {Val::char_(0), Val::char_('a'), Val::char_(0x7F), Val::char_(0xE9), Val::char_(0xD7FF),
                           Val::char_(0xE000), Val::char_(0xFFFF), Val::char_(0x10000), Val::char_(0x1F600),
                           Val::char_(0x10FFFF)});
}

// --------------------------------------------------------- strings and lists

TEST_P(Values, Strings) {
  const std::string with_nul("a\0b", 3);
  const std::vector<Val> texts = {Val::string(""), Val::string("a"), Val::string(with_nul),
                                  Val::string("héllo wörld"), Val::string("☃ snow"),
                                  Val::string("𝄞😀 non-BMP"), Val::string(std::string(31, 'i')),
                                  Val::string(std::string(32, 'h')), Val::string("\xF4\x8F\xBF\xBF")};
  round_trip("echo-string", texts);
  round_trip("echo-string16", texts);
  round_trip("echo-string-latin1", texts);
  round_trip("echo-string-latin1", {Val::string("ÿ"), Val::string("ÿĀ"), Val::string("abcĀ")});
}

TEST_P(Values, LargeStringsGrowMemory) {
  std::string big;
  while (big.size() < (1u << 20)) big += "abc é ☃ 𝄞 ";
  round_trip("echo-string", {Val::string(big)});
  round_trip("echo-string16", {Val::string(big)});
  round_trip("echo-string-latin1", {Val::string(big)});
  std::string latin1;
  while (latin1.size() < (1u << 20)) latin1 += "latin ÿ ";
  round_trip("echo-string-latin1", {Val::string(latin1)});
  // The first code point above U+00FF last: a megabyte is widened in place.
  round_trip("echo-string-latin1", {Val::string(latin1 + "Ā")});
}

TEST_P(Values, ListsOfNumbers) {
  // Packed and one value per element: both lower the same way.
  const uint8_t bytes[] = {0, 1, 0x7F, 0x80, 0xFF};
  round_trip("bytes", {Val::bytes({}), Val::bytes(bytes),
                       list_of({0, 255}, [](int v) { return Val::u8(static_cast<uint8_t>(v)); })});
  round_trip("list-bool", {Val::list({}), list_of({true, false, true}, Val::bool_)});
  round_trip("list-s8", {list_of<int8_t>({INT8_MIN, -1, 0, INT8_MAX}, Val::s8)});
  round_trip("list-s16", {list_of<int16_t>({INT16_MIN, -1, 0, INT16_MAX}, Val::s16)});
  round_trip("list-u16", {list_of<uint16_t>({0, 1, UINT16_MAX}, Val::u16)});
  round_trip("list-s32", {list_of<int32_t>({INT32_MIN, -1, 0, INT32_MAX}, Val::s32)});
  const uint32_t u32s[] = {0, 1, 0x80000000u, UINT32_MAX};
  round_trip("list-u32", {Val::packed_list(ValKind::U32, u32s, 4), list_of<uint32_t>({7, UINT32_MAX}, Val::u32)});
  round_trip("list-s64", {list_of<int64_t>({INT64_MIN, -1, 0, INT64_MAX}, Val::s64)});
  round_trip("list-u64", {list_of<uint64_t>({0, UINT64_MAX}, Val::u64)});
  round_trip("list-f32", {list_of<float>({0.0f, -0.0f, 0.1f, std::numeric_limits<float>::infinity()}, Val::f32)});
  round_trip("list-f64", {list_of<double>({-0.0, 1e300, -std::numeric_limits<double>::infinity()}, Val::f64)});
  round_trip("list-char", {list_of<char32_t>({0, 'x', 0xFFFF, 0x10FFFF}, Val::char_)});
}

TEST_P(Values, NansInListsAreCanonicalized) {
  const uint32_t f32s[] = {0x7fa00001u, 0x3f800000u, 0xffc00000u};
  const Val out = call("list-f32", {Val::packed_list(ValKind::F32, f32s, 3)});
  ASSERT_EQ(out.list_size(), 3u);
  EXPECT_EQ(out.list_element(0).scalar_bits(), kCanonicalNan32);
  EXPECT_EQ(out.list_element(1).scalar_bits(), 0x3f800000u);
  EXPECT_EQ(out.list_element(2).scalar_bits(), kCanonicalNan32);
  const Val out64 = call("list-f64", {Val::list({f64_bits(0x7ff0000000000001ull), Val::f64(2.0)})});
  ASSERT_EQ(out64.list_size(), 2u);
  EXPECT_EQ(out64.list_element(0).scalar_bits(), kCanonicalNan64);
  EXPECT_EQ(out64.list_element(1), Val::f64(2.0));
}

TEST_P(Values, LargeLists) {
  std::vector<uint32_t> numbers(1u << 18);
  for (size_t i = 0; i < numbers.size(); ++i) numbers[i] = static_cast<uint32_t>(i * 2654435761u);
  round_trip("list-u32", {Val::packed_list(ValKind::U32, numbers.data(), numbers.size())});
  std::vector<Val> texts;
  for (int i = 0; i < 5000; ++i) texts.push_back(Val::string("string number " + std::to_string(i) + " ☃"));
  const Val many_strings = Val::list(texts);
  round_trip("list-string", {many_strings});
  round_trip("list-string16", {many_strings});
  round_trip("list-string-latin1", {many_strings});
  std::vector<Val> entries;
  for (uint32_t i = 0; i < 2000; ++i)
    entries.push_back(i % 3 == 0 ? Val::none()
                                 : Val::some(Val::record({Val::u32(i), Val::string(std::to_string(i)),
                                                          i % 2 ? Val::some(Val::f64(i / 8.0)) : Val::none()})));
  round_trip("list-entries", {Val::list(entries)});
}

TEST_P(Values, ListsOfStrings) {
  round_trip("list-string", {Val::list({}), strings({""}), strings({"a", "", "héllo", "𝄞"})});
  round_trip("list-string16", {strings({"a", "", "☃", "𝄞"})});
  round_trip("list-string-latin1", {strings({"é", "", "ÿĀ", "plain"})});
  round_trip("list-lists", {Val::list({}), Val::list({Val::list({}), strings({"x"}), strings({"y", "z"})})});
}

Val rec(bool flag, int64_t big, const char* name, float ratio, int8_t small, std::optional<uint16_t> maybe) {
  return Val::record({Val::bool_(flag), Val::s64(big), Val::string(name), Val::f32(ratio), Val::s8(small),
                      maybe ? Val::some(Val::u16(*maybe)) : Val::none()});
}

Val tup(uint8_t a, float b, const char* c, int64_t d, char32_t e) {
  return Val::tuple({Val::u8(a), Val::f32(b), Val::string(c), Val::s64(d), Val::char_(e)});
}

Val entry(uint32_t id, const char* name, std::optional<double> score) {
  return Val::record({Val::u32(id), Val::string(name), score ? Val::some(Val::f64(*score)) : Val::none()});
}

// One value of every case of `var`, with boundary payloads.
std::vector<Val> every_var() {
  return {var(kInt, Val::s32(INT32_MIN)),
          var(kInt, Val::s32(-1)),
          var(kInt, Val::s32(INT32_MAX)),
          var(kLong, Val::s64(INT64_MIN)),
          var(kLong, Val::s64(-1)),
          var(kFloat, Val::f32(-0.0f)),
          var(kFloat, Val::f32(-std::numeric_limits<float>::infinity())),
          var(kFloat, f32_bits(kCanonicalNan32)),
          var(kDouble, Val::f64(-0.0)),
          var(kDouble, Val::f64(std::numeric_limits<double>::denorm_min())),
          var(kText, Val::string("")),
          var(kText, Val::string("𝄞 text")),
          var(kByte, Val::u8(0)),
          var(kByte, Val::u8(255)),
          var(kNone)};
}

TEST_P(Values, ListsOfCompoundValues) {
  round_trip("list-rec", {Val::list({rec(true, -1, "n", 0.5f, -3, 7), rec(false, INT64_MAX, "", -0.0f, 127, {})})});
  round_trip("list-tup", {Val::list({tup(1, 2.5f, "x", -5, 'z'), tup(255, -0.0f, "", INT64_MIN, 0x10FFFF)})});
  round_trip("list-var", {Val::list(every_var())});
  round_trip("list-color", {Val::list({Val::enum_(2), Val::enum_(0), Val::enum_(1)})});
  round_trip("list-big", {Val::list({Val::enum_(0), Val::enum_(255), Val::enum_(256), Val::enum_(1)})});
  round_trip("list-perms", {Val::list({Val::flags(0), Val::flags(7), Val::flags(5)})});
  round_trip("list-mid", {Val::list({Val::flags(0), Val::flags(0xFFF), Val::flags(0x801)})});
  round_trip("list-wide", {Val::list({Val::flags(0), Val::flags(0xFFFFFFFF), Val::flags(0x80000001)})});
  const uint8_t quad[] = {1, 2, 3, 255};
  round_trip("list-fixed", {Val::list({Val::bytes(quad), Val::bytes(quad)})});
  round_trip("list-results",
             {Val::list({Val::ok(Val::u32(0)), Val::err(Val::string("e")), Val::ok(Val::u32(UINT32_MAX))})});
  round_trip("list-opt-opt", {Val::list({Val::none(), Val::some(Val::none()), Val::some(Val::some(Val::s8(-128)))})});
  round_trip("list-entries", {Val::list({Val::some(entry(1, "a", 0.5)), Val::none(), Val::some(entry(2, "b", {}))})});
}

// ------------------------------------------------------- fixed-length lists

TEST_P(Values, FixedLengthLists) {
  const uint8_t quad[] = {0, 1, 128, 255};
  round_trip("echo-u8x4", {Val::bytes(quad), list_of<uint8_t>({9, 8, 7, 6}, Val::u8)});
  round_trip("echo-string-x2", {strings({"", "𝄞"}), strings({"first", "second"})});
  std::vector<uint32_t> seventeen;
  for (uint32_t i = 0; i < 17; ++i) seventeen.push_back(UINT32_MAX - i);
  round_trip("echo-u32x17", {Val::packed_list(ValKind::U32, seventeen.data(), 17)});
  // A list of the wrong length is the host's mistake, not a trap.
  expect_invalid("echo-u8x4", {Val::bytes(std::span<const uint8_t>(quad, 3))});
  EXPECT_EQ(call("echo-u8x4", {Val::bytes(quad)}), Val::bytes(quad));
}

// Flattenings longer than the 256 values cmhost lists are only counted; such
// values always travel through memory.
TEST_P(Values, LongFlatteningsAreSpilled) {
  std::vector<uint8_t> thousand(1000);
  for (size_t i = 0; i < thousand.size(); ++i) thousand[i] = static_cast<uint8_t>(i * 7);
  round_trip("echo-u8x1000", {Val::bytes(thousand)});
  std::vector<Val> texts;
  for (int i = 0; i < 300; ++i) texts.push_back(Val::string(i % 2 ? "odd ☃" : std::to_string(i)));
  round_trip("echo-string-x300", {Val::list(texts)});
  round_trip("echo-opt-u8x300", {Val::none(), Val::some(Val::bytes(std::span<const uint8_t>(thousand.data(), 300)))});
  texts.pop_back();
  expect_invalid("echo-string-x300", {Val::list(texts)});
}

// --------------------------------------------------------- records, tuples

TEST_P(Values, Records) {
  round_trip("echo-rec", {rec(true, INT64_MIN, "rec", -0.25f, INT8_MIN, UINT16_MAX), rec(false, 0, "", 0.0f, 0, {}),
                          rec(true, INT64_MAX, "𝄞", std::numeric_limits<float>::infinity(), INT8_MAX, 0)});
  round_trip("echo-entry", {entry(0, "", {}), entry(UINT32_MAX, "y", 0.1), entry(7, "z", -0.0)});
  // A NaN field goes through memory, and is canonicalized there too.
  const Val r = call("echo-rec", {rec(true, 0, "", std::bit_cast<float>(0x7fa00001u), 0, {})});
  ASSERT_EQ(r.items().size(), 6u);
  EXPECT_EQ(r.items()[3].scalar_bits(), kCanonicalNan32);
}

TEST_P(Values, Tuples) {
  round_trip("echo-tup", {tup(255, -1.5f, "tup", INT64_MAX, 0x10FFFF), tup(0, 0.0f, "", INT64_MIN, 0)});
}

// ------------------------------------------- variants, enums, options, results

// var flattens to (i32, i64, i32): the i64 slot joins i32, i64, f32, f64 and
// the string's pointer. The guest checks the unused and widened slots are zero.
TEST_P(Values, VariantEveryCaseThroughJoinedSlots) { round_trip("echo-var", every_var()); }

TEST_P(Values, Enums) {
  round_trip("echo-color", {Val::enum_(0), Val::enum_(1), Val::enum_(2)});
  round_trip("echo-big", {Val::enum_(0), Val::enum_(255), Val::enum_(256)});
  expect_invalid("echo-color", {Val::enum_(3)});
}

TEST_P(Values, Options) {
  round_trip("echo-opt-u32", {Val::none(), Val::some(Val::u32(0)), Val::some(Val::u32(UINT32_MAX))});
  round_trip("echo-opt-opt", {Val::none(), Val::some(Val::none()), Val::some(Val::some(Val::s8(INT8_MIN))),
                              Val::some(Val::some(Val::s8(INT8_MAX)))});
  round_trip("echo-opt-string", {Val::none(), Val::some(Val::string("")), Val::some(Val::string("opt ☃"))});
}

TEST_P(Values, Results) {
  round_trip("echo-unit-result", {Val::ok(), Val::err()});
  round_trip("echo-result", {Val::ok(Val::u32(0)), Val::ok(Val::u32(UINT32_MAX)), Val::err(Val::string("")),
                             Val::err(Val::string("bad ☃"))});
  round_trip("echo-result-err", {Val::ok(), Val::err(Val::string("e"))});
  round_trip("echo-result-f32", {Val::ok(Val::f32(3.5f)), Val::ok(Val::f32(-0.0f)), Val::err()});
  // f64 and u8 share an i64 slot: the u8 arrives zero-extended.
  round_trip("echo-result-f64-u8", {Val::ok(Val::f64(-2.5)), Val::ok(Val::f64(-0.0)),
                                    Val::ok(Val::f64(-std::numeric_limits<double>::infinity())),
                                    Val::err(Val::u8(0)), Val::err(Val::u8(255))});
}

TEST_P(Values, Flags) {
  std::vector<Val> perms;
  for (uint32_t mask = 0; mask < 8; ++mask) perms.push_back(Val::flags(mask));
  round_trip("echo-perms", perms);
  std::vector<Val> mid = {Val::flags(0), Val::flags(0xFFF)};
  for (int bit = 0; bit < 12; ++bit) mid.push_back(Val::flags(1u << bit));
  round_trip("echo-mid", mid);
  std::vector<Val> wide = {Val::flags(0), Val::flags(0xFFFFFFFF), Val::flags(0xAAAAAAAA)};
  for (int bit = 0; bit < 32; ++bit) wide.push_back(Val::flags(1u << bit));
  round_trip("echo-wide", wide);
  // Setting a flag the type does not have is the host's mistake.
  expect_invalid("echo-perms", {Val::flags(8)});
  expect_invalid("echo-mid", {Val::flags(0x1000)});
}

TEST_P(Values, NestedResultOfListOrVariant) {
  std::vector<Val> results = {Val::ok(Val::list({})), Val::ok(strings({"a", "", "𝄞"}))};
  for (Val& v : every_var()) results.push_back(Val::err(std::move(v)));
  round_trip("echo-nested-result", results);
}

// ---------------------------------------------- spilling and post-return

TEST_P(Values, TwentyFlatParametersAreSpilledAndEchoedAsATuple) {
  const uint16_t shorts[] = {1, UINT16_MAX};
  const std::vector<Val> args = {Val::u8(UINT8_MAX), Val::s8(INT8_MIN), Val::u16(UINT16_MAX), Val::s16(INT16_MIN),
                                 Val::u32(UINT32_MAX), Val::s32(INT32_MIN), Val::u64(UINT64_MAX),
                                 Val::s64(INT64_MIN), Val::f32(-0.0f), Val::f64(0.1), Val::char_(0x1F600),
                                 Val::bool_(true), Val::string("spilled ☃"),
                                 Val::packed_list(ValKind::U16, shorts, 2), Val::some(Val::u8(9)), Val::flags(6),
                                 Val::enum_(2)};
  EXPECT_EQ(call("many", args), Val::tuple(args));
  std::vector<Val> zeros = {Val::u8(0), Val::s8(0), Val::u16(0), Val::s16(0), Val::u32(0), Val::s32(0),
                            Val::u64(0), Val::s64(0), Val::f32(0), Val::f64(0), Val::char_(0),
                            Val::bool_(false), Val::string(""), Val::list({}), Val::none(), Val::flags(0),
                            Val::enum_(0)};
  EXPECT_EQ(call("many", zeros), Val::tuple(zeros));
}

TEST_P(Values, SixteenFlatParametersStayFlat) {
  std::vector<Val> args;
  for (uint32_t i = 0; i < 15; ++i) args.push_back(Val::u32(i));
  args.push_back(Val::f64(-1.25));
  EXPECT_EQ(call("last-of-16", args), Val::f64(-1.25));
}

TEST_P(Values, PostReturnRunsAfterTheResultIsLifted) {
  EXPECT_EQ(post_returns(), 0u);
  EXPECT_EQ(call("echo-s32", {Val::s32(-5)}), Val::s32(-5));
  EXPECT_EQ(post_returns(), 1u);
  // post-free also releases the heap; heap-top shows it ran.
  EXPECT_EQ(call("echo-string", {Val::string("freed after")}), Val::string("freed after"));
  EXPECT_EQ(post_returns(), 2u);
  EXPECT_EQ(heap_top(), 4096u);
  EXPECT_EQ(call("list-string", {strings({"x", "y"})}), strings({"x", "y"}));
  EXPECT_EQ(post_returns(), 3u);
  EXPECT_EQ(call("echo-var", {var(kText, Val::string("no post-return"))}), var(kText, Val::string("no post-return")));
  EXPECT_EQ(post_returns(), 3u);
  EXPECT_GT(heap_top(), 4096u);
  call("many", {Val::u8(0), Val::s8(0), Val::u16(0), Val::s16(0), Val::u32(0), Val::s32(0), Val::u64(0),
                Val::s64(0), Val::f32(0), Val::f64(0), Val::char_(0), Val::bool_(false), Val::string(""),
                Val::list({}), Val::none(), Val::flags(0), Val::enum_(0)});
  EXPECT_EQ(post_returns(), 4u);
  EXPECT_EQ(heap_top(), 4096u);
  // Without results, the post-return takes no parameters.
  EXPECT_TRUE(instance.func("no-result").call(store, std::vector<Val>{Val::u32(1)}).empty());
  EXPECT_EQ(post_returns(), 5u);
}

// ------------------------------------------------ lifting chosen core bits

// lift_flat keeps the low bits of the i32: i % 2^N, then two's complement
// for signed types (definitions.py, lift_flat_unsigned/lift_flat_signed).
TEST_P(Values, NarrowIntegersWrap) {
  EXPECT_EQ(call("narrow-u8", {Val::u32(0x1FF)}), Val::u8(0xFF));
  EXPECT_EQ(call("narrow-u8", {Val::u32(0x100)}), Val::u8(0));
  EXPECT_EQ(call("narrow-u8", {Val::u32(UINT32_MAX)}), Val::u8(0xFF));
  EXPECT_EQ(call("narrow-s8", {Val::u32(0x80)}), Val::s8(INT8_MIN));
  EXPECT_EQ(call("narrow-s8", {Val::u32(0x17F)}), Val::s8(INT8_MAX));
  EXPECT_EQ(call("narrow-s8", {Val::u32(0xFFFFFF80)}), Val::s8(INT8_MIN));
  EXPECT_EQ(call("narrow-s8", {Val::u32(0xFF)}), Val::s8(-1));
  EXPECT_EQ(call("narrow-u16", {Val::u32(0x12345)}), Val::u16(0x2345));
  EXPECT_EQ(call("narrow-u16", {Val::u32(UINT32_MAX)}), Val::u16(UINT16_MAX));
  EXPECT_EQ(call("narrow-s16", {Val::u32(0x18000)}), Val::s16(INT16_MIN));
  EXPECT_EQ(call("narrow-s16", {Val::u32(0xFFFF)}), Val::s16(-1));
  EXPECT_EQ(call("narrow-s32", {Val::u32(UINT32_MAX)}), Val::s32(-1));
  EXPECT_EQ(call("narrow-s32", {Val::u32(0x80000000u)}), Val::s32(INT32_MIN));
}

// Any non-zero i32 is true (convert_int_to_bool).
TEST_P(Values, BoolFromAnyNonZero) {
  EXPECT_EQ(call("narrow-bool", {Val::u32(0)}), Val::bool_(false));
  EXPECT_EQ(call("narrow-bool", {Val::u32(1)}), Val::bool_(true));
  EXPECT_EQ(call("narrow-bool", {Val::u32(2)}), Val::bool_(true));
  EXPECT_EQ(call("narrow-bool", {Val::u32(0x100)}), Val::bool_(true));
  EXPECT_EQ(call("narrow-bool", {Val::u32(UINT32_MAX)}), Val::bool_(true));
}

// Bits above the last flag are ignored.
TEST_P(Values, FlagsIgnoreBitsBeyondTheirLabels) {
  EXPECT_EQ(call("narrow-perms", {Val::u32(0xFF)}), Val::flags(7));
  EXPECT_EQ(call("narrow-perms", {Val::u32(0xFFFFFFF8)}), Val::flags(0));
  EXPECT_EQ(call("narrow-mid", {Val::u32(UINT32_MAX)}), Val::flags(0xFFF));
  EXPECT_EQ(call("narrow-wide", {Val::u32(UINT32_MAX)}), Val::flags(0xFFFFFFFF));
}

TEST_P(Values, InvalidCharsTrap) {
  EXPECT_EQ(call("narrow-char", {Val::u32(0x10FFFF)}), Val::char_(0x10FFFF));
  EXPECT_EQ(call("narrow-char", {Val::u32(0xD7FF)}), Val::char_(0xD7FF));
  EXPECT_EQ(call("narrow-char", {Val::u32(0xE000)}), Val::char_(0xE000));
  expect_trap("narrow-char", {Val::u32(0xD800)}, "surrogate");
  expect_trap("narrow-char", {Val::u32(0xDFFF)}, "surrogate");
  expect_trap("narrow-char", {Val::u32(0x110000)}, "above 0x10FFFF");
  expect_trap("narrow-char", {Val::u32(UINT32_MAX)}, "above 0x10FFFF");
}

TEST_P(Values, DiscriminantsOutOfRangeTrap) {
  EXPECT_EQ(call("narrow-color", {Val::u32(2)}), Val::enum_(2));
  expect_trap("narrow-color", {Val::u32(3)}, "invalid discriminant 3");
  expect_trap("narrow-color", {Val::u32(UINT32_MAX)}, "invalid discriminant 4294967295");
  EXPECT_EQ(call("narrow-big", {Val::u32(256)}), Val::enum_(256));
  expect_trap("narrow-big", {Val::u32(257)}, "invalid discriminant 257");
  EXPECT_EQ(call("narrow-unit-result", {Val::u32(1)}), Val::err());
  expect_trap("narrow-unit-result", {Val::u32(2)}, "invalid discriminant 2");
}

// ------------------------------------------------ lifting chosen bytes

TEST_P(Values, MemoryBoolIsAnyNonZeroByte) {
  EXPECT_EQ(from_memory("mem-opt-bool", {1, 2}), Val::some(Val::bool_(true)));
  EXPECT_EQ(from_memory("mem-opt-bool", {1, 0xFF}), Val::some(Val::bool_(true)));
  EXPECT_EQ(from_memory("mem-opt-bool", {1, 0}), Val::some(Val::bool_(false)));
  EXPECT_EQ(from_memory("mem-opt-bool", {0, 5}), Val::none());  // the payload of none is not read
  memory_trap("mem-opt-bool", {2, 0}, "invalid discriminant 2");
}

TEST_P(Values, MemoryIntegersAndFloats) {
  EXPECT_EQ(from_memory("mem-opt-s8", {1, 0x80}), Val::some(Val::s8(INT8_MIN)));
  EXPECT_EQ(from_memory("mem-opt-u16", {1, 0xAA, 0xFF, 0xFF}), Val::some(Val::u16(UINT16_MAX)));
  EXPECT_EQ(from_memory("mem-opt-f32", {1, 0, 0, 0, 0x01, 0x00, 0xA0, 0x7F}), Val::some(f32_bits(kCanonicalNan32)));
  EXPECT_EQ(from_memory("mem-opt-f32", {1, 0, 0, 0, 0x00, 0x00, 0x00, 0x80}), Val::some(Val::f32(-0.0f)));
}

TEST_P(Values, MemoryCharsAreChecked) {
  EXPECT_EQ(from_memory("mem-opt-char", {1, 0, 0, 0, 0xFF, 0xFF, 0x10, 0}), Val::some(Val::char_(0x10FFFF)));
  memory_trap("mem-opt-char", {1, 0, 0, 0, 0x00, 0xD8, 0, 0}, "surrogate");
  memory_trap("mem-opt-char", {1, 0, 0, 0, 0x00, 0x00, 0x11, 0}, "above 0x10FFFF");
}

TEST_P(Values, MemoryDiscriminantsAreChecked) {
  EXPECT_EQ(from_memory("mem-opt-color", {1, 2}), Val::some(Val::enum_(2)));
  memory_trap("mem-opt-color", {1, 3}, "invalid discriminant 3");
  // 257 cases: a two-byte discriminant, at offset 2 of the option.
  EXPECT_EQ(from_memory("mem-opt-big", {1, 0, 0x00, 0x01}), Val::some(Val::enum_(256)));
  EXPECT_EQ(from_memory("mem-opt-big", {1, 0, 0xFF, 0x00}), Val::some(Val::enum_(255)));
  memory_trap("mem-opt-big", {1, 0, 0x01, 0x01}, "invalid discriminant 257");
  std::vector<uint8_t> variant(16, 0);
  variant[0] = kFloat;
  const uint8_t one_and_a_half[] = {0x00, 0x00, 0xC0, 0x3F};
  std::copy(std::begin(one_and_a_half), std::end(one_and_a_half), variant.begin() + 8);
  EXPECT_EQ(from_memory("mem-var", variant), var(kFloat, Val::f32(1.5f)));
  variant[0] = kInt;
  variant[8] = variant[9] = variant[10] = variant[11] = 0xFF;
  EXPECT_EQ(from_memory("mem-var", variant), var(kInt, Val::s32(-1)));
  variant[0] = 7;
  memory_trap("mem-var", variant, "invalid discriminant 7");
  // Flags in memory ignore bits beyond their labels too.
  EXPECT_EQ(from_memory("mem-opt-perms", {1, 0xFF}), Val::some(Val::flags(7)));
}

TEST_P(Values, MemoryStringsAreChecked) {
  // option<string>: case@0, ptr@4, len@8; the text follows at offset 12.
  auto option_string = [](uint32_t ptr, uint32_t len, std::vector<uint8_t> text) {
    std::vector<uint8_t> out = {1, 0, 0, 0};
    put_u32(out, ptr);
    put_u32(out, len);
    out.insert(out.end(), text.begin(), text.end());
    return out;
  };
  EXPECT_EQ(from_memory("mem-opt-string", option_string(kReturnArea + 12, 3, {'a', 'b', 'c'})),
            Val::some(Val::string("abc")));
  EXPECT_EQ(from_memory("mem-opt-string", option_string(0, 0, {})), Val::some(Val::string("")));
  memory_trap("mem-opt-string", option_string(kReturnArea + 12, 2, {0xC3, 0x28}), "not valid UTF-8");
  memory_trap("mem-opt-string", option_string(kReturnArea + 12, 3, {0xED, 0xA0, 0x80}), "not valid UTF-8");
  memory_trap("mem-opt-string", option_string(0xFFFF0000u, 10, {}), "out of bounds");
  memory_trap("mem-opt-string", option_string(0, 1u << 28, {}), "2^28-1");
}

TEST_P(Values, MemoryUtf16StringsAreChecked) {
  // option<string>: case@0, ptr@4, code units@8; the text follows at 12.
  auto option_string = [](uint32_t ptr, uint32_t units, std::vector<uint8_t> text) {
    std::vector<uint8_t> out = {1, 0, 0, 0};
    put_u32(out, ptr);
    put_u32(out, units);
    out.insert(out.end(), text.begin(), text.end());
    return out;
  };
  const uint32_t text = kReturnArea + 12;
  EXPECT_EQ(from_memory("mem-opt-string16", option_string(text, 2, {0x68, 0x00, 0x03, 0x26})),
            Val::some(Val::string("h☃")));
  EXPECT_EQ(from_memory("mem-opt-string16", option_string(text, 2, {0x34, 0xD8, 0x1E, 0xDD})),
            Val::some(Val::string("𝄞")));
  memory_trap("mem-opt-string16", option_string(text, 2, {0x34, 0xD8, 0x41, 0x00}), "not valid UTF-16");
  memory_trap("mem-opt-string16", option_string(text, 1, {0x1E, 0xDD}), "not valid UTF-16");
  memory_trap("mem-opt-string16", option_string(text + 1, 1, {0, 0x41, 0}), "not aligned");
  memory_trap("mem-opt-string16", option_string(0, 1u << 27, {}), "2^28-1");
  memory_trap("mem-opt-string16", option_string(0, (1u << 27) - 1, {}), "out of bounds");
  // latin1+utf16: untagged lengths are Latin-1 bytes, tagged ones UTF-16
  // code units; either way the pointer is 2-aligned.
  constexpr uint32_t kTag = 0x80000000u;
  EXPECT_EQ(from_memory("mem-opt-string-latin1", option_string(text, 2, {0xE9, 0x41})),
            Val::some(Val::string("éA")));
  EXPECT_EQ(from_memory("mem-opt-string-latin1", option_string(text, kTag | 1, {0x03, 0x26})),
            Val::some(Val::string("☃")));
  memory_trap("mem-opt-string-latin1", option_string(text + 1, 1, {0, 0x41}), "not aligned");
  memory_trap("mem-opt-string-latin1", option_string(text, kTag | 1, {0x00, 0xDC}), "not valid UTF-16");
}

TEST_P(Values, MemoryListsAreChecked) {
  // list<u32>: ptr@0, len@4; the elements follow at offset 8.
  auto list_u32 = [](uint32_t ptr, uint32_t len, std::vector<uint32_t> elements) {
    std::vector<uint8_t> out;
    put_u32(out, ptr);
    put_u32(out, len);
    for (uint32_t e : elements) put_u32(out, e);
    return out;
  };
  const uint32_t data = kReturnArea + 8;
  EXPECT_EQ(from_memory("mem-list-u32", list_u32(data, 2, {1, UINT32_MAX})),
            list_of<uint32_t>({1, UINT32_MAX}, Val::u32));
  memory_trap("mem-list-u32", list_u32(data + 2, 1, {0, 0}), "not aligned");
  memory_trap("mem-list-u32", list_u32(data, 0x3FFFFFF, {}), "out of bounds");
  memory_trap("mem-list-u32", list_u32(data, 0x4000000, {}), "2^28-1");
}

TEST_P(Values, ResultPointerIsChecked) {
  std::vector<uint8_t> bytes;
  put_u32(bytes, 42);
  put_u32(bytes, 0);  // name: an empty string at 0
  put_u32(bytes, 0);
  put_u32(bytes, 0);
  bytes.push_back(1);  // score: some(...)
  bytes.resize(24, 0);
  for (uint8_t b : {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF0, 0x3F}) bytes.push_back(b);  // 1.0
  EXPECT_EQ(from_memory("mem-entry", bytes), entry(42, "", 1.0));
  // The record is 8-aligned: at 256+4 it is not.
  memory_trap("mem-entry", bytes, "not aligned", 4);
  expect_trap("ptr-entry", {Val::u32(kReturnArea + 4)}, "not aligned");
  expect_trap("ptr-entry", {Val::u32(0xFFFFFFF8u)}, "out of bounds");
  expect_trap("ptr-entry", {Val::u32(1u << 16)}, "out of bounds");  // one byte past a one-page memory
}

// ------------------------------------------- core values of parameters

Val var_bits(uint32_t c, uint64_t a, uint32_t b) { return Val::tuple({Val::u32(c), Val::u64(a), Val::u32(b)}); }

// The core values a parameter arrives as (lower_flat): s8 and s16
// sign-extended to 32 bits, bool 0 or 1, an enum its case, flags their bits;
// a variant's 32-bit payloads zero-extended in its i64 slot, unused slots 0.
TEST_P(Values, CoreValuesOfParameters) {
  EXPECT_EQ(call("bool-bits", {Val::bool_(true)}), Val::u32(1));
  EXPECT_EQ(call("s8-bits", {Val::s8(-1)}), Val::u32(0xFFFFFFFF));
  EXPECT_EQ(call("s8-bits", {Val::s8(INT8_MIN)}), Val::u32(0xFFFFFF80));
  EXPECT_EQ(call("u8-bits", {Val::u8(UINT8_MAX)}), Val::u32(0xFF));
  EXPECT_EQ(call("s16-bits", {Val::s16(INT16_MIN)}), Val::u32(0xFFFF8000));
  EXPECT_EQ(call("u16-bits", {Val::u16(UINT16_MAX)}), Val::u32(0xFFFF));
  EXPECT_EQ(call("char-bits", {Val::char_(0x10FFFF)}), Val::u32(0x10FFFF));
  EXPECT_EQ(call("color-bits", {Val::enum_(2)}), Val::u32(2));
  EXPECT_EQ(call("perms-bits", {Val::flags(5)}), Val::u32(5));
  EXPECT_EQ(call("var-bits", {var(kInt, Val::s32(-1))}), var_bits(kInt, 0xFFFFFFFF, 0));
  EXPECT_EQ(call("var-bits", {var(kLong, Val::s64(-1))}), var_bits(kLong, UINT64_MAX, 0));
  EXPECT_EQ(call("var-bits", {var(kFloat, Val::f32(-0.0f))}), var_bits(kFloat, 0x80000000, 0));
  EXPECT_EQ(call("var-bits", {var(kDouble, Val::f64(-0.0))}), var_bits(kDouble, uint64_t{1} << 63, 0));
  EXPECT_EQ(call("var-bits", {var(kByte, Val::u8(UINT8_MAX))}), var_bits(kByte, 0xFF, 0));
  EXPECT_EQ(call("var-bits", {var(kNone)}), var_bits(kNone, 0, 0));
  const Val text = call("var-bits", {var(kText, Val::string("abc"))});
  ASSERT_EQ(text.items().size(), 3u);
  EXPECT_EQ(text.items()[0], Val::u32(kText));
  EXPECT_LT(text.items()[1].as_u64(), uint64_t{1} << 32);  // the pointer, zero-extended
  EXPECT_EQ(text.items()[2], Val::u32(3));
}

// The 18 flat values of spill-bytes' arguments, as stored for the callee:
// bool@0 s8@1 u16@2 char@4 color@8 perms@9 option<u8>@10 f32@12 u8 x 9 @16.
std::vector<uint8_t> spilled_bytes(uint8_t flag, uint8_t color, uint8_t perms, uint8_t option_case, uint32_t f32,
                                   uint32_t c = 'a') {
  std::vector<uint8_t> out = {flag, 0xFF, 0xFF, 0xFF};
  put_u32(out, c);
  out.insert(out.end(), {color, perms, option_case, 7});
  put_u32(out, f32);
  for (uint8_t i = 1; i <= 9; ++i) out.push_back(i);
  return out;
}

TEST_P(Values, SpilledArgumentBytes) {
  std::vector<Val> args = {Val::bool_(true), Val::s8(-1),    Val::u16(UINT16_MAX), Val::char_('a'),
                           Val::enum_(2),    Val::flags(5), Val::some(Val::u8(7)), Val::f32(1.5f)};
  for (uint8_t i = 1; i <= 9; ++i) args.push_back(Val::u8(i));
  EXPECT_EQ(call("spill-bytes", args), Val::bytes(spilled_bytes(1, 2, 5, 1, 0x3FC00000)));
}

// Only for the nested components: the outer core module hands the inner
// functions chosen core values. A call between components lifts them as the
// callee's parameter types and lowers them again (CanonicalABI.md), so the
// callee sees them wrapped, normalized, or the call traps.
class ValuesNested : public Values {};

TEST_P(ValuesNested, CoreValuesAreLiftedAndLoweredBetweenComponents) {
  EXPECT_EQ(call("raw-u8-bits", {Val::u32(0x1FF)}), Val::u32(0xFF));
  EXPECT_EQ(call("raw-bool-bits", {Val::u32(2)}), Val::u32(1));
  EXPECT_EQ(call("raw-bool-bits", {Val::u32(0x100)}), Val::u32(1));
  EXPECT_EQ(call("raw-s8-bits", {Val::u32(0xFF)}), Val::u32(0xFFFFFFFF));
  EXPECT_EQ(call("raw-s8-bits", {Val::u32(0x17F)}), Val::u32(0x7F));
  EXPECT_EQ(call("raw-s16-bits", {Val::u32(0x18000)}), Val::u32(0xFFFF8000));
  EXPECT_EQ(call("raw-u16-bits", {Val::u32(0x12345)}), Val::u32(0x2345));
  EXPECT_EQ(call("raw-perms-bits", {Val::u32(0xFF)}), Val::u32(7));
  EXPECT_EQ(call("raw-color-bits", {Val::u32(2)}), Val::u32(2));
  EXPECT_EQ(call("raw-f32-bits", {Val::u32(0x7FA00001)}), Val::u32(kCanonicalNan32));
  EXPECT_EQ(call("raw-f32-bits", {Val::u32(0x80000000)}), Val::u32(0x80000000));
  expect_trap("raw-char-bits", {Val::u32(0xD800)}, "surrogate");
  expect_trap("raw-char-bits", {Val::u32(0x110000)}, "above 0x10FFFF");
  expect_trap("raw-color-bits", {Val::u32(3)}, "invalid discriminant 3");
}

TEST_P(ValuesNested, VariantSlotsAreWrappedAndZeroedBetweenComponents) {
  auto raw = [&](uint32_t c, uint64_t a, uint32_t b) {
    return call("raw-var-bits", {Val::u32(c), Val::u64(a), Val::u32(b)});
  };
  EXPECT_EQ(raw(kInt, 0xDEADBEEF00000005ull, 7), var_bits(kInt, 5, 0));
  EXPECT_EQ(raw(kLong, 0xDEADBEEF00000005ull, 7), var_bits(kLong, 0xDEADBEEF00000005ull, 0));
  EXPECT_EQ(raw(kFloat, 0xDEADBEEF3FC00000ull, 9), var_bits(kFloat, 0x3FC00000, 0));
  EXPECT_EQ(raw(kFloat, 0x7FA00001, 0), var_bits(kFloat, kCanonicalNan32, 0));
  EXPECT_EQ(raw(kDouble, 0x7FF0000000000001ull, 0), var_bits(kDouble, kCanonicalNan64, 0));
  EXPECT_EQ(raw(kByte, 0x1FF, 0), var_bits(kByte, 0xFF, 0));
  EXPECT_EQ(raw(kNone, UINT64_MAX, UINT32_MAX), var_bits(kNone, 0, 0));
  expect_trap("raw-var-bits", {Val::u32(7), Val::u64(0), Val::u32(0)}, "invalid discriminant 7");
}

TEST_P(ValuesNested, SpilledArgumentsAreLiftedAndLoweredBetweenComponents) {
  // The outer memory holds the arguments as the words of a list<u32, 17>.
  auto words = [](std::vector<uint8_t> bytes) {
    bytes.resize(68, 0);
    std::vector<uint32_t> out(17);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return Val::packed_list(ValKind::U32, out.data(), out.size());
  };
  EXPECT_EQ(call("raw-spill-bytes", {words(spilled_bytes(2, 1, 0xFF, 1, 0x7FA00001))}),
            Val::bytes(spilled_bytes(1, 1, 7, 1, kCanonicalNan32)));
  expect_trap("raw-spill-bytes", {words(spilled_bytes(1, 3, 0, 1, 0))}, "invalid discriminant 3");
  expect_trap("raw-spill-bytes", {words(spilled_bytes(1, 0, 0, 2, 0))}, "invalid discriminant 2");
  expect_trap("raw-spill-bytes", {words(spilled_bytes(1, 0, 0, 1, 0, 0xDFFF))}, "surrogate");
}

// ---------------------------------------------------- invalid host values

TEST_P(Values, InvalidArgumentsAreNotTraps) {
  expect_invalid("echo-char", {Val::from_bits(ValKind::Char, 0xD800)});
  expect_invalid("echo-var", {Val::variant(7)});
  expect_invalid("echo-var", {Val::variant(kInt)});  // the case needs a payload
  expect_invalid("echo-var", {var(kNone, Val::u8(1))});
  expect_invalid("echo-u8", {Val::u16(1)});
  expect_invalid("echo-rec", {Val::record({Val::bool_(true)})});
  // Nothing trapped: the instance still works.
  EXPECT_EQ(call("echo-u8", {Val::u8(3)}), Val::u8(3));
}

// ------------------------------------------- realloc calls and their checks

struct Realloc {
  uint32_t old_ptr, old_size, align, new_size, result;
};

// An expected realloc call: `grows` when it resizes the previous call's
// allocation, else a fresh one, realloc(0, 0, align, size).
struct ExpectedRealloc {
  bool resizes_previous;
  uint32_t old_size, align, new_size;
};

class ValuesRealloc : public Values {
 protected:
  std::vector<Realloc> realloc_log() {
    const Val log = call("realloc-log", {});
    std::vector<Realloc> out;
    for (size_t i = 0; i < log.list_size(); ++i) {
      const Val entry = log.list_element(i);
      const auto f = entry.items();
      out.push_back({f[0].as_u32(), f[1].as_u32(), f[2].as_u32(), f[3].as_u32(), f[4].as_u32()});
    }
    return out;
  }

  // Calls `name` and checks the realloc calls lowering its arguments made.
  void expect_reallocs(const char* name, std::vector<Val> args, const std::vector<ExpectedRealloc>& expected) {
    realloc_log();  // its post-return clears the log
    call(name, std::move(args));
    const auto log = realloc_log();
    ASSERT_EQ(log.size(), expected.size()) << name;
    for (size_t i = 0; i < log.size(); ++i) {
      const ExpectedRealloc& e = expected[i];
      EXPECT_EQ(log[i].old_ptr, e.resizes_previous ? log[i - 1].result : 0u) << name << ", call " << i;
      EXPECT_EQ(log[i].old_size, e.old_size) << name << ", call " << i;
      EXPECT_EQ(log[i].align, e.align) << name << ", call " << i;
      EXPECT_EQ(log[i].new_size, e.new_size) << name << ", call " << i;
    }
  }
};

// The allocation sequences of CanonicalABI.md's store_string_* functions,
// which depend on the encoding the string comes from: the host's UTF-8, or
// the outer component's UTF-16 or latin1+utf16 in the nested components.
// Worst case first, then a shrink; latin1+utf16 grows when the first code
// point above U+00FF turns up.
TEST_P(ValuesRealloc, StringAllocationsFollowTheSpec) {
  struct Row {
    const char* func;
    const char* text;
    std::vector<ExpectedRealloc> from[3];  // indexed by Source
  };
  const Row rows[] = {
      {"echo-string", "", {{{false, 0, 1, 0}}, {{false, 0, 1, 0}}, {{false, 0, 1, 0}}}},
      {"echo-string", "abc", {{{false, 0, 1, 3}}, {{false, 0, 1, 3}}, {{false, 0, 1, 3}}}},
      {"echo-string",
       "héllo",
       {{{false, 0, 1, 6}},
        {{false, 0, 1, 5}, {true, 5, 1, 15}, {true, 15, 1, 6}},
        {{false, 0, 1, 5}, {true, 5, 1, 10}, {true, 10, 1, 6}}}},
      {"echo-string", "☃", {{{false, 0, 1, 3}}, {{false, 0, 1, 1}, {true, 1, 1, 3}}, {{false, 0, 1, 1}, {true, 1, 1, 3}}}},
      {"echo-string16", "abc", {{{false, 0, 2, 6}}, {{false, 0, 2, 6}}, {{false, 0, 2, 6}}}},
      {"echo-string16", "héllo", {{{false, 0, 2, 12}, {true, 12, 2, 10}}, {{false, 0, 2, 10}}, {{false, 0, 2, 10}}}},
      {"echo-string16", "𝄞", {{{false, 0, 2, 8}, {true, 8, 2, 4}}, {{false, 0, 2, 4}}, {{false, 0, 2, 4}}}},
      {"echo-string-latin1", "abc", {{{false, 0, 2, 3}}, {{false, 0, 2, 3}}, {{false, 0, 2, 3}}}},
      {"echo-string-latin1", "é", {{{false, 0, 2, 2}, {true, 2, 2, 1}}, {{false, 0, 2, 1}}, {{false, 0, 2, 1}}}},
      {"echo-string-latin1",
       "aĀ",
       {{{false, 0, 2, 3}, {true, 3, 2, 6}, {true, 6, 2, 4}}, {{false, 0, 2, 2}, {true, 2, 2, 4}}, {{false, 0, 2, 4}}}},
      {"echo-string-latin1",
       "☃",
       {{{false, 0, 2, 3}, {true, 3, 2, 6}, {true, 6, 2, 2}}, {{false, 0, 2, 1}, {true, 1, 2, 2}}, {{false, 0, 2, 2}}}},
      {"echo-string-latin1",
       "é𝄞",
       {{{false, 0, 2, 6}, {true, 6, 2, 12}, {true, 12, 2, 6}}, {{false, 0, 2, 3}, {true, 3, 2, 6}}, {{false, 0, 2, 6}}}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.func) + "(\"" + row.text + "\")");
    expect_reallocs(row.func, {Val::string(row.text)}, row.from[static_cast<int>(source())]);
  }
}

TEST_P(ValuesRealloc, ListAllocationsUseTheElementAlignment) {
  expect_reallocs("bytes", {Val::bytes({})}, {{false, 0, 1, 0}});
  expect_reallocs("list-u32", {list_of<uint32_t>({1, 2, 3}, Val::u32)}, {{false, 0, 4, 12}});
  expect_reallocs("list-u64", {list_of<uint64_t>({1}, Val::u64)}, {{false, 0, 8, 8}});
  expect_reallocs("list-string", {strings({"a", "bc"})}, {{false, 0, 4, 16}, {false, 0, 1, 1}, {false, 0, 1, 2}});
  if (source() == Source::Utf8)
    expect_reallocs("list-string16", {strings({"é"})}, {{false, 0, 4, 8}, {false, 0, 2, 4}, {true, 4, 2, 2}});
  else
    expect_reallocs("list-string16", {strings({"é"})}, {{false, 0, 4, 8}, {false, 0, 2, 2}});
  expect_reallocs("list-rec", {Val::list({rec(true, 1, "name", 1.0f, 1, {})})}, {{false, 0, 8, 40}, {false, 0, 1, 4}});
  expect_reallocs("list-big", {Val::list({Val::enum_(256)})}, {{false, 0, 2, 2}});
  expect_reallocs("echo-var", {var(kText, Val::string("xyz"))}, {{false, 0, 1, 3}});
  expect_reallocs("echo-var", {var(kLong, Val::s64(1))}, {});
}

// Spilled arguments are one allocation of their tuple, made before any
// allocation of the values inside.
TEST_P(ValuesRealloc, SpilledArgumentsAreAllocatedFirst) {
  const uint16_t shorts[] = {1, 2};
  expect_reallocs("many",
                  {Val::u8(0), Val::s8(0), Val::u16(0), Val::s16(0), Val::u32(0), Val::s32(0), Val::u64(0),
                   Val::s64(0), Val::f32(0), Val::f64(0), Val::char_(0), Val::bool_(false), Val::string("m"),
                   Val::packed_list(ValKind::U16, shorts, 2), Val::none(), Val::flags(0), Val::enum_(0)},
                  {{false, 0, 8, 80}, {false, 0, 1, 1}, {false, 0, 2, 4}});
  std::vector<uint32_t> seventeen(17, 1);
  expect_reallocs("echo-u32x17", {Val::packed_list(ValKind::U32, seventeen.data(), 17)}, {{false, 0, 4, 68}});
}

TEST_P(Values, BadAllocationsTrap) {
  expect_trap("misaligned-list", {list_of<uint32_t>({1}, Val::u32)}, "not aligned");
  // Even an empty list's pointer must be aligned.
  expect_trap("misaligned-list", {Val::list({})}, "not aligned");
  std::vector<uint32_t> seventeen(17, 1);
  expect_trap("misaligned-spill", {Val::packed_list(ValKind::U32, seventeen.data(), 17)}, "not aligned");
  expect_trap("out-of-bounds-string", {Val::string("abc")}, "out of bounds");
  expect_trap("out-of-bounds-string", {Val::string("")}, "out of bounds");
  expect_trap("trapping-realloc", {Val::string("x")}, "unreachable");
}

TEST_P(Values, TrappingPostReturnTrapsTheCall) {
  const Error e = [&] {
    try {
      call("trapping-post-return", {Val::u32(5)});
    } catch (const Error& error) {
      return error;
    }
    return Error(ErrorKind::Usage, "no trap");
  }();
  EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
  EXPECT_NE(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
  // And the instance may not be entered again.
  try {
    call("echo-u8", {Val::u8(1)});
    ADD_FAILURE() << "the instance was entered after a trap";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::Trap) << error.what();
  }
}

std::string component_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}
const auto kComponents = ::testing::Values("values", "values-nested", "values-nested-utf16", "values-nested-latin1");
INSTANTIATE_TEST_SUITE_P(Components, Values, kComponents, component_name);
INSTANTIATE_TEST_SUITE_P(Components, ValuesRealloc, kComponents, component_name);
INSTANTIATE_TEST_SUITE_P(Components, ValuesNested,
                         ::testing::Values("values-nested", "values-nested-utf16", "values-nested-latin1"),
                         component_name);

// ------------------------------------------------ the host's side: imports

using test::func_type;

abi::TypeRef var_type() {
  return Type::variant({{"int", Type::s32()},
                        {"long", Type::s64()},
                        {"float", Type::f32()},
                        {"double", Type::f64()},
                        {"text", Type::string()},
                        {"byte", Type::u8()},
                        {"none", nullptr}});
}

// tests/components/values-host.wat: exports that forward their core
// arguments to host imports, which record what they receive and return it.
class ValuesHost : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("values-host"));
  std::vector<std::vector<Val>> received;
  Linker linker = make_linker();
  Store store{engine};
  Instance instance = linker.instantiate(store, component);

  Linker make_linker() {
    Linker l;
    auto echo = [this](std::span<const Val> args) {
      received.emplace_back(args.begin(), args.end());
      return std::vector<Val>{args[0]};
    };
    l.define_func("host-var", func_type({{"v", var_type()}}, var_type()), echo);
    const auto strings_type = Type::list(Type::string());
    l.define_func("host-strings", func_type({{"v", strings_type}}, strings_type), echo);
    std::vector<std::pair<std::string, abi::TypeRef>> params = {
        {"a", Type::u8()},   {"b", Type::s8()},   {"c", Type::u16()},  {"d", Type::s16()},
        {"e", Type::u32()},  {"f", Type::s32()},  {"g", Type::u64()},  {"h", Type::s64()},
        {"i", Type::f32()},  {"j", Type::f64()},  {"k", Type::char_()}, {"l", Type::bool_()},
        {"m", Type::string()}, {"n", Type::list(Type::u16())}, {"o", Type::option(Type::u8())}};
    std::vector<abi::TypeRef> types;
    for (const auto& p : params) types.push_back(p.second);
    l.define_func("host-many", func_type(params, Type::tuple(types)), [this](std::span<const Val> args) {
      received.emplace_back(args.begin(), args.end());
      return std::vector<Val>{Val::tuple(std::vector<Val>(args.begin(), args.end()))};
    });
    return l;
  }

  Val call(const char* name, std::vector<Val> args) {
    auto results = instance.func(name).call(store, args);
    EXPECT_EQ(results.size(), 1u) << name;
    return results.empty() ? Val() : std::move(results[0]);
  }

  // What the host import received for raw-var(case, a, b): the variant it
  // lifted from those three core values.
  Val lifted_from(uint32_t c, uint64_t a, uint32_t b) {
    received.clear();
    const Val out = call("raw-var", {Val::u32(c), Val::u64(a), Val::u32(b)});
    EXPECT_EQ(received.size(), 1u);
    if (received.size() != 1) return Val();
    EXPECT_EQ(out, received[0][0]) << "the lowered result differs from what the host returned";
    return received[0][0];
  }
};

TEST_F(ValuesHost, VariantsGoThroughAnImportAndBack) {
  for (const Val& v : every_var()) {
    received.clear();
    EXPECT_EQ(call("via-var", {v}), v);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0][0], v);
  }
}

// lift_flat of a variant reads 32-bit payloads from the low half of an i64
// slot (wrap_i64_to_i32) and ignores the slots its case does not use.
TEST_F(ValuesHost, LiftingJoinedSlotsWrapsAndIgnoresUnusedSlots) {
  EXPECT_EQ(lifted_from(kInt, 0xDEADBEEF00000005ull, 0), var(kInt, Val::s32(5)));
  EXPECT_EQ(lifted_from(kInt, 0x00000000FFFFFFFFull, 7), var(kInt, Val::s32(-1)));
  EXPECT_EQ(lifted_from(kLong, 0xFFFFFFFFFFFFFFFEull, 7), var(kLong, Val::s64(-2)));
  EXPECT_EQ(lifted_from(kFloat, 0xDEADBEEF3FC00000ull, 0), var(kFloat, Val::f32(1.5f)));
  EXPECT_EQ(lifted_from(kFloat, 0x000000007FA00001ull, 0), var(kFloat, f32_bits(kCanonicalNan32)));
  EXPECT_EQ(lifted_from(kDouble, 0xBFF8000000000000ull, 0), var(kDouble, Val::f64(-1.5)));
  EXPECT_EQ(lifted_from(kDouble, 0x7FF0000000000001ull, 0), var(kDouble, f64_bits(kCanonicalNan64)));
  EXPECT_EQ(lifted_from(kText, 0xFFFFFFFF00000000ull, 0), var(kText, Val::string("")));
  EXPECT_EQ(lifted_from(kByte, 0x1FF, 0), var(kByte, Val::u8(0xFF)));
  EXPECT_EQ(lifted_from(kNone, UINT64_MAX, UINT32_MAX), var(kNone));
}

TEST_F(ValuesHost, LiftingABadDiscriminantFromTheGuestTraps) {
  try {
    call("raw-var", {Val::u32(7), Val::u64(0), Val::u32(0)});
    ADD_FAILURE() << "raw-var(7, ...) did not trap";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid discriminant 7"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(received.empty());
}

TEST_F(ValuesHost, StringsGoThroughAnImportAndBack) {
  std::vector<Val> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(Val::string(std::string(static_cast<size_t>(i % 50), 'x') + "☃"));
  for (const Val& v : {Val::list({}), strings({"", "a", "𝄞"}), Val::list(texts)}) {
    received.clear();
    EXPECT_EQ(call("via-strings", {v}), v);
    ASSERT_EQ(received.size(), 1u);
    EXPECT_EQ(received[0][0], v);
  }
}

// Both ways spilled: the import gets a pointer to its 18 flat values and
// stores its tuple result through the guest's return pointer.
TEST_F(ValuesHost, SpilledArgumentsAndResultsOfAnImport) {
  const uint16_t shorts[] = {0, 1, UINT16_MAX};
  const std::vector<Val> args = {Val::u8(UINT8_MAX), Val::s8(INT8_MIN), Val::u16(UINT16_MAX), Val::s16(INT16_MIN),
                                 Val::u32(UINT32_MAX), Val::s32(INT32_MIN), Val::u64(UINT64_MAX),
                                 Val::s64(INT64_MIN), Val::f32(-0.0f), Val::f64(0.1), Val::char_(0x10FFFF),
                                 Val::bool_(true), Val::string("spilled ☃"),
                                 Val::packed_list(ValKind::U16, shorts, 3), Val::some(Val::u8(0))};
  EXPECT_EQ(call("via-many", args), Val::tuple(args));
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(Val::tuple(received[0]), Val::tuple(args));
}

// More than 32 flags is not a valid type (Explainer: flags have 1 to 32
// labels); the component is rejected when it is loaded.
TEST(ValuesFlags, ThirtyThreeFlagsAreInvalid) {
  Engine engine{testing_support::test_engine_config()};
  try {
    Component::from_file(engine, fixture("values-flags33"));
    ADD_FAILURE() << "a flags type with 33 labels was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Validate) << e.what();
    EXPECT_NE(std::string(e.what()).find("32 flags"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cmhost
