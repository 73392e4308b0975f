// WAVE printing and parsing. The expected printed forms are those of the
// wasm-wave crate's writer; many parse cases come from the crate's own UI
// tests (crates/wasm-wave/tests/ui/*.waves in wasm-tools).
#include "cmhost/wave.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cmhost/error.hpp"

namespace cmhost {
namespace {

using abi::Case;
using abi::Field;
using abi::Type;
using abi::TypeRef;
using abi::Val;

// Parses `text`, expecting an InvalidValue error whose message contains
// `fragment`; returns the message.
std::string parse_error(const TypeRef& type, std::string_view text,
                        std::string_view fragment = "") {
  try {
    parse_wave(*type, text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message: " << e.what() << "\nexpected it to contain: " << fragment;
    return e.what();
  }
  ADD_FAILURE() << "expected " << text << " to be rejected as " << type->to_wit();
  return {};
}

// Parses and prints back.
std::string reprint(const TypeRef& type, std::string_view text) {
  return to_wave(*type, parse_wave(*type, text));
}

// Prints `value`, checks the text, and checks it parses back to `value`.
void expect_round_trip(const TypeRef& type, const Val& value, const std::string& text) {
  EXPECT_EQ(to_wave(*type, value), text);
  EXPECT_EQ(parse_wave(*type, text), value) << text;
}

TypeRef u8_option() { return Type::option(Type::u8()); }

// ------------------------------------------------------------------ printing

TEST(WavePrint, BoolsAndIntegers) {
  expect_round_trip(Type::bool_(), Val::bool_(true), "true");
  expect_round_trip(Type::bool_(), Val::bool_(false), "false");
  expect_round_trip(Type::s8(), Val::s8(-5), "-5");
  expect_round_trip(Type::s8(), Val::s8(-128), "-128");
  expect_round_trip(Type::u8(), Val::u8(255), "255");
  expect_round_trip(Type::s16(), Val::s16(-32768), "-32768");
  expect_round_trip(Type::u16(), Val::u16(65535), "65535");
  expect_round_trip(Type::s32(), Val::s32(1000000), "1000000");
  expect_round_trip(Type::u32(), Val::u32(4294967295u), "4294967295");
  expect_round_trip(Type::s64(), Val::s64(std::numeric_limits<int64_t>::min()),
                    "-9223372036854775808");
  expect_round_trip(Type::u64(), Val::u64(std::numeric_limits<uint64_t>::max()),
                    "18446744073709551615");
  expect_round_trip(Type::u64(), Val::u64(0), "0");
}

TEST(WavePrint, FloatsUseRustDisplay) {
  const auto f32 = Type::f32();
  const auto f64 = Type::f64();
  expect_round_trip(f32, Val::f32(0.1f), "0.1");
  expect_round_trip(f32, Val::f32(1.5f), "1.5");
  expect_round_trip(f32, Val::f32(1.0f), "1");
  expect_round_trip(f32, Val::f32(-0.0f), "-0");
  expect_round_trip(f32, Val::f32(0.0f), "0");
  expect_round_trip(f32, Val::f32(-100000.0f), "-100000");
  expect_round_trip(f32, Val::f32(1.0e-7f), "0.0000001");
  expect_round_trip(f32, Val::f32(16777216.0f), "16777216");
  expect_round_trip(f32, Val::f32(123456789.0f), "123456790");
  expect_round_trip(f32, Val::f32(std::numeric_limits<float>::max()),
                    "340282350000000000000000000000000000000");
  expect_round_trip(f32, Val::f32(std::numeric_limits<float>::denorm_min()),
                    "0.000000000000000000000000000000000000000000001");
  // Exactly halfway between 522429.12 and 522429.13: Rust rounds up.
  expect_round_trip(f32, Val::f32(522429.125f), "522429.13");
  expect_round_trip(f32, Val::f32(std::numeric_limits<float>::infinity()), "inf");
  expect_round_trip(f32, Val::f32(-std::numeric_limits<float>::infinity()), "-inf");
  expect_round_trip(f32, Val::f32(std::numeric_limits<float>::quiet_NaN()), "nan");
  EXPECT_EQ(to_wave(*f32, Val::f32(std::bit_cast<float>(0xFFC00001u))), "nan");

  expect_round_trip(f64, Val::f64(0.1 + 0.2), "0.30000000000000004");
  expect_round_trip(f64, Val::f64(-1.5e-10), "-0.00000000015");
  expect_round_trip(f64, Val::f64(1e21), "1000000000000000000000");
  expect_round_trip(f64, Val::f64(1e16), "10000000000000000");
  expect_round_trip(f64, Val::f64(-0.0), "-0");
  expect_round_trip(f64, Val::f64(std::numeric_limits<double>::denorm_min()),
                    "0." + std::string(323, '0') + "5");
  expect_round_trip(f64, Val::f64(std::numeric_limits<double>::max()),
                    "17976931348623157" + std::string(292, '0'));
  expect_round_trip(f64, Val::f64(-std::numeric_limits<double>::infinity()), "-inf");
  expect_round_trip(f64, Val::f64(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(WavePrint, CharsEscapeLikeTheCrate) {
  const auto c = Type::char_();
  expect_round_trip(c, Val::char_('x'), "'x'");
  expect_round_trip(c, Val::char_(U'☃'), "'☃'");
  expect_round_trip(c, Val::char_(U'😂'), "'😂'");
  expect_round_trip(c, Val::char_('\''), R"('\'')");
  expect_round_trip(c, Val::char_('"'), R"('\"')");
  expect_round_trip(c, Val::char_('\\'), R"('\\')");
  expect_round_trip(c, Val::char_('\t'), R"('\t')");
  expect_round_trip(c, Val::char_('\n'), R"('\n')");
  expect_round_trip(c, Val::char_('\r'), R"('\r')");
  expect_round_trip(c, Val::char_(' '), "' '");
  // Controls as \u{...} in lowercase hex.
  expect_round_trip(c, Val::char_(0), R"('\u{0}')");
  expect_round_trip(c, Val::char_(0x1B), R"('\u{1b}')");
  expect_round_trip(c, Val::char_(0x7F), R"('\u{7f}')");
  expect_round_trip(c, Val::char_(0x85), R"('\u{85}')");
  // What Rust's debug formatting escapes: separators, format characters,
  // combining marks, variation selectors, private use, unassigned.
  expect_round_trip(c, Val::char_(0xA0), R"('\u{a0}')");
  expect_round_trip(c, Val::char_(0x200D), R"('\u{200d}')");
  expect_round_trip(c, Val::char_(0x301), R"('\u{301}')");
  expect_round_trip(c, Val::char_(0xFE0F), R"('\u{fe0f}')");
  expect_round_trip(c, Val::char_(0xE000), R"('\u{e000}')");
  expect_round_trip(c, Val::char_(0x378), R"('\u{378}')");
  expect_round_trip(c, Val::char_(0x10FFFF), R"('\u{10ffff}')");
  expect_round_trip(c, Val::char_(0xE9), "'é'");
}

TEST(WavePrint, StringsEscapeLikeTheCrate) {
  const auto s = Type::string();
  expect_round_trip(s, Val::string(""), R"("")");
  expect_round_trip(s, Val::string("abc"), R"("abc")");
  expect_round_trip(s, Val::string("WAVE🌊"), R"("WAVE🌊")");
  expect_round_trip(s, Val::string("\\☃\""), R"("\\☃\"")");
  expect_round_trip(s, Val::string(std::string("\t\r\n\0", 4)), R"("\t\r\n\u{0}")");
  expect_round_trip(s, Val::string("it's"), R"("it\'s")");
  expect_round_trip(s, Val::string("❤\uFE0F e\u0301 \u00A0\u200D\u007F\u0085"),
                    R"("❤\u{fe0f} e\u{301} \u{a0}\u{200d}\u{7f}\u{85}")");
}

TEST(WavePrint, Lists) {
  const auto list_u8 = Type::list(Type::u8());
  expect_round_trip(list_u8, Val::list({Val::u8(1), Val::u8(2)}), "[1, 2]");
  expect_round_trip(list_u8, Val::list({}), "[]");
  const uint8_t bytes[] = {79, 75};
  expect_round_trip(list_u8, Val::bytes(bytes), "[79, 75]");
  const float floats[] = {1.5f, -0.0f};
  expect_round_trip(Type::list(Type::f32()), Val::packed_list(abi::ValKind::F32, floats, 2),
                    "[1.5, -0]");
  expect_round_trip(Type::list(Type::list(Type::string())),
                    Val::list({Val::list({Val::string("a")}), Val::list({})}), R"([["a"], []])");
  expect_round_trip(Type::fixed_list(Type::s16(), 3),
                    Val::list({Val::s16(-1), Val::s16(0), Val::s16(1)}), "[-1, 0, 1]");
}

TEST(WavePrint, MapsAsListsOfTuples) {
  // wasm-wave has no map syntax; a map is its despecialized list of tuples.
  const auto map = Type::map(Type::string(), Type::u32());
  const Val value = Val::map(
      {Val::tuple({Val::string("a"), Val::u32(1)}), Val::tuple({Val::string("b"), Val::u32(2)})});
  expect_round_trip(map, value, R"([("a", 1), ("b", 2)])");
  expect_round_trip(map, Val::map({}), "[]");
  EXPECT_EQ(parse_wave(*map, "[]").kind(), abi::ValKind::Map);
}

TEST(WavePrint, RecordsLeaveOutNoneFields) {
  const auto record = Type::record({{"a", Type::u8()}, {"b", Type::string()}});
  expect_round_trip(record, Val::record({Val::u8(1), Val::string("x")}), R"({a: 1, b: "x"})");

  const auto optional = Type::record({{"required", Type::u8()}, {"optional", u8_option()}});
  expect_round_trip(optional, Val::record({Val::u8(1), Val::none()}), "{required: 1}");
  expect_round_trip(optional, Val::record({Val::u8(1), Val::some(Val::u8(2))}),
                    "{required: 1, optional: some(2)}");

  const auto all_optional = Type::record({{"a", u8_option()}, {"b", u8_option()}});
  expect_round_trip(all_optional, Val::record({Val::none(), Val::none()}), "{:}");
  expect_round_trip(all_optional, Val::record({Val::none(), Val::some(Val::u8(2))}),
                    "{b: some(2)}");

  // Only a none at the field itself is left out.
  const auto nested = Type::record({{"a", Type::option(u8_option())}});
  expect_round_trip(nested, Val::record({Val::some(Val::none())}), "{a: some(none)}");

  // Field names are never %-prefixed, even keywords.
  const auto keywords =
      Type::record({{"true", Type::bool_()}, {"ok", Type::result(nullptr, nullptr)}});
  expect_round_trip(keywords, Val::record({Val::bool_(true), Val::ok()}), "{true: true, ok: ok}");
}

TEST(WavePrint, Tuples) {
  expect_round_trip(Type::tuple({Type::u8(), Type::string()}),
                    Val::tuple({Val::u8(1), Val::string("x")}), R"((1, "x"))");
  expect_round_trip(Type::tuple({Type::bool_()}), Val::tuple({Val::bool_(false)}), "(false)");
}

TEST(WavePrint, VariantsEnumsOptionsResults) {
  const auto variant = Type::variant({{"empty", nullptr},
                                      {"body", Type::list(Type::u8())},
                                      {"err", Type::string()},
                                      {"none", nullptr}});
  expect_round_trip(variant, Val::variant(0), "empty");
  expect_round_trip(variant, Val::variant(1, Val::list({Val::u8(79), Val::u8(75)})),
                    "body([79, 75])");
  expect_round_trip(variant, Val::variant(2, Val::string("oops")), R"(%err("oops"))");
  expect_round_trip(variant, Val::variant(3), "%none");

  const auto status = Type::enum_({"ok", "not-found", "nan"});
  expect_round_trip(status, Val::enum_(0), "%ok");
  expect_round_trip(status, Val::enum_(1), "not-found");
  expect_round_trip(status, Val::enum_(2), "%nan");

  expect_round_trip(u8_option(), Val::some(Val::u8(5)), "some(5)");
  expect_round_trip(u8_option(), Val::none(), "none");
  const auto nested = Type::option(u8_option());
  expect_round_trip(nested, Val::some(Val::some(Val::u8(1))), "some(some(1))");
  expect_round_trip(nested, Val::some(Val::none()), "some(none)");

  const auto both = Type::result(Type::string(), Type::u8());
  expect_round_trip(both, Val::ok(Val::string("x")), R"(ok("x"))");
  expect_round_trip(both, Val::err(Val::u8(1)), "err(1)");
  const auto empty = Type::result(nullptr, nullptr);
  expect_round_trip(empty, Val::ok(), "ok");
  expect_round_trip(empty, Val::err(), "err");
}

TEST(WavePrint, Flags) {
  const auto flags = Type::flags({"flag-a", "flag-b", "flag-c"});
  expect_round_trip(flags, Val::flags(0b101), "{flag-a, flag-c}");
  expect_round_trip(flags, Val::flags(0), "{}");
  expect_round_trip(flags, Val::flags(0b111), "{flag-a, flag-b, flag-c}");
  // Flags that are keywords are not prefixed.
  expect_round_trip(Type::flags({"ok", "none"}), Val::flags(0b11), "{ok, none}");
}

TEST(WavePrint, HandlesGetAPlaceholderThatIsNotWave) {
  const auto file = std::make_shared<abi::ResourceType>(abi::ResourceType{"file"});
  EXPECT_EQ(to_wave(*Type::own(file), Val::own(3)), "<own<file> handle 3>");
  EXPECT_EQ(to_wave(*Type::borrow(file), Val::borrow(0)), "<borrow<file> handle 0>");
  EXPECT_EQ(to_wave(*Type::stream(Type::u8()), Val::stream(2)), "<stream<u8> handle 2>");
  EXPECT_EQ(to_wave(*Type::future(nullptr), Val::future(4)), "<future handle 4>");
  EXPECT_EQ(to_wave(*Type::error_context(), Val::error_context(1)), "<error-context handle 1>");
  parse_error(Type::own(file), "<own<file> handle 3>", "cannot be written in WAVE");
  parse_error(Type::list(Type::error_context()), "[1]", "cannot be written in WAVE");
}

TEST(WavePrint, RejectsValuesOfTheWrongType) {
  auto expect_invalid = [](const TypeRef& type, const Val& value) {
    try {
      to_wave(*type, value);
      ADD_FAILURE() << "printed a mismatched value as " << type->to_wit();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
    }
  };
  expect_invalid(Type::u8(), Val::s8(1));
  expect_invalid(Type::list(Type::u8()), Val::list({Val::u16(1)}));
  const uint16_t wide[] = {1};
  expect_invalid(Type::list(Type::u8()), Val::packed_list(abi::ValKind::U16, wide, 1));
  expect_invalid(Type::record({{"a", Type::u8()}}), Val::record({}));
  expect_invalid(Type::record({{"a", u8_option()}}), Val::record({Val::u8(1)}));
  expect_invalid(Type::tuple({Type::u8(), Type::u8()}), Val::tuple({Val::u8(1)}));
  expect_invalid(Type::enum_({"a"}), Val::enum_(1));
  expect_invalid(Type::variant({{"a", Type::u8()}}), Val::variant(0));
  expect_invalid(Type::variant({{"a", nullptr}}), Val::variant(0, Val::u8(1)));
  expect_invalid(Type::flags({"a", "b"}), Val::flags(0b100));
  expect_invalid(Type::fixed_list(Type::u8(), 2), Val::list({Val::u8(1)}));
  expect_invalid(Type::char_(), Val::from_bits(abi::ValKind::Char, 0xD800));
  expect_invalid(Type::string(), Val::string_unchecked("\xFF"));
}

// ------------------------------------------------------------------- parsing

TEST(WaveParse, WhitespaceAndComments) {
  // From the crate's accept-comments.waves.
  const auto basic = Type::record({{"required", Type::u8()}, {"optional", u8_option()}});
  const std::string commented =
      "       // comment\n"
      "  {                 // comment\n"
      "    required: 1,    // comment\n"
      "    optional: some( // comment\n"
      "      1             // comment\n"
      "    ),              // comment\n"
      "  }                 // comment\n";
  EXPECT_EQ(reprint(basic, commented), "{required: 1, optional: some(1)}");
  EXPECT_EQ(reprint(basic, "\t{\r\n// {\nrequired:1,optional:some(1)}// end"),
            "{required: 1, optional: some(1)}");
  EXPECT_EQ(reprint(Type::u8(), "  7  "), "7");
  parse_error(basic, "// { required: 1 }", "end of input");
  parse_error(Type::u8(), "/ 1", "unexpected character `/`");
}

TEST(WaveParse, Records) {
  // From accept-records.waves.
  const auto basic = Type::record({{"required", Type::u8()}, {"optional", u8_option()}});
  EXPECT_EQ(reprint(basic, "{ required: 1 }"), "{required: 1}");
  EXPECT_EQ(reprint(basic, "{ required: 1, optional: none }"), "{required: 1}");
  EXPECT_EQ(reprint(basic, "{ required: 1, optional: none, }"), "{required: 1}");
  EXPECT_EQ(reprint(basic, "{ optional: none, required: 1 }"), "{required: 1}");
  EXPECT_EQ(reprint(basic, "{ optional: some(2), required: 1, }"),
            "{required: 1, optional: some(2)}");
  EXPECT_EQ(reprint(basic, "{ optional: 2, required: 1 }"), "{required: 1, optional: some(2)}");
  const auto all_optional = Type::record({{"a", u8_option()}, {"b", u8_option()}});
  EXPECT_EQ(reprint(all_optional, "{:}"), "{:}");
  EXPECT_EQ(reprint(all_optional, "{ : }"), "{:}");
  EXPECT_EQ(reprint(all_optional, "{a:none,b:none}"), "{:}");
  EXPECT_EQ(reprint(all_optional, "{b:none,}"), "{:}");
  EXPECT_EQ(reprint(all_optional, "{b:some(2),a:some(1)}"), "{a: some(1), b: some(2)}");
  const auto keywords = Type::record({{"true", Type::bool_()},
                                      {"false", Type::bool_()},
                                      {"some", u8_option()},
                                      {"none", u8_option()},
                                      {"ok", Type::result(nullptr, nullptr)},
                                      {"err", Type::result(nullptr, nullptr)},
                                      {"inf", Type::f32()},
                                      {"nan", Type::f32()}});
  EXPECT_EQ(reprint(keywords,
                    "{true: true, false: false, some: some(1), none: none, ok: ok, err: err, "
                    "inf: inf, nan: nan}"),
            "{true: true, false: false, some: some(1), ok: ok, err: err, inf: inf, nan: nan}");
  const auto prefixed = Type::record(
      {{"red", Type::s32()}, {"green", Type::char_()}, {"color-42-2A-5d", Type::bool_()}});
  EXPECT_EQ(reprint(prefixed, "{ %red: 0, %green: 'a', %color-42-2A-5d: true }"),
            "{red: 0, green: 'a', color-42-2A-5d: true}");
}

TEST(WaveParse, RejectsBadRecords) {
  // From reject-records.waves.
  const auto basic = Type::record({{"required", Type::u8()}, {"optional", u8_option()}});
  parse_error(basic, "{ optional: none }", "missing field `required`");
  parse_error(basic, "{ optional: some(0) }", "missing field `required`");
  parse_error(basic, "{ required: 0, required: 0 }", "duplicate field `required`");
  parse_error(basic, "{ required: 0, optional: none, optional: some(0) }",
              "duplicate field `optional`");
  parse_error(basic, "{ required: 0,, }", "expected a field name, found `,`");
  parse_error(basic, "{ , required: 0, }", "expected a field name, found `,`");
  parse_error(Type::record({{"a", u8_option()}}), "{}", "`{:}`");
  // Stricter than the crate, as the grammar says: commas between fields and
  // no fields the type lacks.
  parse_error(basic, "{ required: 0 optional: none }", "expected `,` or `}` in a record");
  parse_error(basic, "{ required: 0, extra: 1 }", "the record has no field `extra`");
  parse_error(basic, "{ required }", "expected `:` after the field name");
  parse_error(basic, "{ required: 0", "found end of input");
  parse_error(basic, "[1]", "expected `{` to start a record");
}

TEST(WaveParse, Lists) {
  const auto list = Type::list(Type::string());
  EXPECT_EQ(reprint(list, R"([ "a" , "b", ])"), R"(["a", "b"])");
  EXPECT_EQ(reprint(list, "[ ]"), "[]");
  // From reject-lists.waves.
  parse_error(list, R"(["\u{0}",,])", "expected a string");
  parse_error(list, R"([,"\u{0}"])", "found `,`");
  parse_error(list, "[,]", "found `,`");
  parse_error(list, "[)", "found `)`");
  parse_error(list, "(]", "expected `[`");
  parse_error(list, "[}", "found `}`");
  parse_error(list, R"(["a" "b"])", "expected `,` or `]` in a list");
  // Numbers come back packed.
  const Val bytes = parse_wave(*Type::list(Type::u8()), "[1, 2, 255]");
  EXPECT_TRUE(bytes.is_packed());
  const uint8_t expected[] = {1, 2, 255};
  EXPECT_EQ(bytes, Val::bytes(expected));
  const Val doubles = parse_wave(*Type::list(Type::f64()), "[1.5, -2]");
  ASSERT_EQ(doubles.list_size(), 2u);
  EXPECT_EQ(doubles.list_element(1).as_f64(), -2.0);
}

TEST(WaveParse, FixedLengthLists) {
  const auto triple = Type::fixed_list(Type::u8(), 3);
  EXPECT_EQ(reprint(triple, "[1, 2, 3,]"), "[1, 2, 3]");
  parse_error(triple, "[1, 2]", "expected 3 elements");
  parse_error(triple, "[1, 2, 3, 4]", "found 4");
}

TEST(WaveParse, Tuples) {
  const auto pair = Type::tuple({Type::u8(), Type::string()});
  EXPECT_EQ(reprint(pair, R"(( 1 , "x" , ))"), R"((1, "x"))");
  parse_error(pair, "()", "expected 2 values");
  parse_error(pair, "(1)", "expected `,` between tuple values");
  parse_error(pair, R"((1, "x", 2))", "too many values");
  parse_error(pair, R"((1 "x"))", "expected `,` between tuple values");
}

TEST(WaveParse, Variants) {
  const auto response = Type::variant(
      {{"empty", nullptr}, {"body", Type::list(Type::u8())}, {"err", Type::string()}});
  EXPECT_EQ(reprint(response, "body ( [79, 75] )"), "body([79, 75])");
  EXPECT_EQ(reprint(response, "%empty"), "empty");
  EXPECT_EQ(reprint(response, R"(%err("oops"))"), R"(%err("oops"))");
  parse_error(response, R"(err("oops"))", "written with `%`");
  parse_error(response, "body", "case `body` needs a payload");
  parse_error(response, "empty(1)", "case `empty` has no payload");
  parse_error(response, "full", "unknown case `full`");
  parse_error(response, "1", "expected a variant case");
  parse_error(response, "body([1]", "expected `)` after the payload of `body`");

  // From the crate's parser tests: keyword cases need their %.
  const auto keywords = Type::list(Type::variant({{"true", Type::u8()},
                                                  {"false", nullptr},
                                                  {"inf", Type::u8()},
                                                  {"nan", nullptr},
                                                  {"some", Type::u8()},
                                                  {"none", nullptr},
                                                  {"ok", Type::u8()},
                                                  {"err", nullptr}}));
  const std::string all = "[%true(1), %false, %inf(1), %nan, %some(1), %none, %ok(1), %err]";
  EXPECT_EQ(reprint(keywords, all), all);
  parse_error(Type::variant({{"some", Type::u8()}}), "some(1)", "written with `%`");
}

TEST(WaveParse, Enums) {
  // From accept-enums.waves and reject-enums.waves.
  const auto hand = Type::enum_({"left", "right"});
  EXPECT_EQ(reprint(hand, "left"), "left");
  EXPECT_EQ(reprint(hand, "%left"), "left");
  parse_error(hand, "up", "unknown case `up`");
  parse_error(hand, "left(1)", "enum cases have no payload");
  const std::vector<std::string> words = {"true", "false", "some", "none",
                                          "ok",   "err",   "inf",  "nan"};
  const auto keywords = Type::enum_(words);
  for (const std::string& word : words) {
    EXPECT_EQ(reprint(keywords, "%" + word), "%" + word);
    parse_error(keywords, word, "written with `%`");
  }
}

TEST(WaveParse, Options) {
  const auto opt = u8_option();
  EXPECT_EQ(parse_wave(*opt, "some(1)"), Val::some(Val::u8(1)));
  EXPECT_EQ(parse_wave(*opt, "1"), Val::some(Val::u8(1)));
  EXPECT_EQ(parse_wave(*opt, "none"), Val::none());
  // A bare payload is fine unless it is itself an option or result.
  EXPECT_EQ(parse_wave(*Type::option(Type::bool_()), "true"), Val::some(Val::bool_(true)));
  const auto nested = Type::option(u8_option());
  EXPECT_EQ(parse_wave(*nested, "some(1)"), Val::some(Val::some(Val::u8(1))));
  EXPECT_EQ(parse_wave(*nested, "some(none)"), Val::some(Val::none()));
  parse_error(nested, "1", "expected `some(...)` or `none`");
  // A flattened option payload that is a variant case named `none` needs %.
  const auto maybe_case = Type::option(Type::enum_({"none", "all"}));
  EXPECT_EQ(parse_wave(*maybe_case, "none"), Val::none());
  EXPECT_EQ(parse_wave(*maybe_case, "%none"), Val::some(Val::enum_(0)));
  // From reject-options.waves.
  parse_error(opt, "some", "expected `(` after `some`");
  parse_error(opt, "some()", "found `)`");
  parse_error(opt, "some(some)", "found `some`");
  parse_error(opt, "some(some(0))", "found `some`");
  parse_error(opt, "none()", "unexpected `(`");
  parse_error(opt, "none(0)", "unexpected `(`");
}

TEST(WaveParse, Results) {
  const auto ok_u8 = Type::result(Type::u8(), nullptr);
  const auto err_u8 = Type::result(nullptr, Type::u8());
  const auto no_payloads = Type::result(nullptr, nullptr);
  const auto both = Type::result(Type::u8(), Type::u8());
  EXPECT_EQ(parse_wave(*ok_u8, "ok(1)"), Val::ok(Val::u8(1)));
  EXPECT_EQ(parse_wave(*ok_u8, "123"), Val::ok(Val::u8(123)));
  EXPECT_EQ(parse_wave(*ok_u8, "err"), Val::err());
  EXPECT_EQ(parse_wave(*err_u8, "err(2)"), Val::err(Val::u8(2)));
  EXPECT_EQ(parse_wave(*no_payloads, "ok"), Val::ok());
  EXPECT_EQ(parse_wave(*both, "err ( 3 )"), Val::err(Val::u8(3)));
  parse_error(Type::result(u8_option(), nullptr), "1", "expected `ok` or `err`");
  parse_error(err_u8, "1", "expected `ok` or `err`");
  // From reject-results.waves.
  parse_error(ok_u8, "ok", "case `ok` needs a payload");
  parse_error(ok_u8, "ok()", "found `)`");
  parse_error(ok_u8, "o(0)", "an integer");
  parse_error(ok_u8, "err(0)", "case `err` has no payload");
  parse_error(err_u8, "err", "case `err` needs a payload");
  parse_error(err_u8, "err()", "found `)`");
  parse_error(err_u8, "e(0)", "expected `ok` or `err`");
  parse_error(err_u8, "ok(0)", "case `ok` has no payload");
  parse_error(no_payloads, "ok()", "case `ok` has no payload");
  parse_error(no_payloads, "ok(0)", "case `ok` has no payload");
  parse_error(no_payloads, "err(0)", "case `err` has no payload");
  parse_error(both, "ok", "case `ok` needs a payload");
  parse_error(both, "err", "case `err` needs a payload");
}

TEST(WaveParse, Flags) {
  // From accept-flags.waves and reject-flags.waves.
  const auto permissions = Type::flags({"read", "write"});
  EXPECT_EQ(reprint(permissions, "{}"), "{}");
  EXPECT_EQ(reprint(permissions, "{ read }"), "{read}");
  EXPECT_EQ(reprint(permissions, "{ read, }"), "{read}");
  EXPECT_EQ(reprint(permissions, "{ write, read }"), "{read, write}");
  EXPECT_EQ(reprint(permissions, "{ read, write, }"), "{read, write}");
  EXPECT_EQ(reprint(permissions, "{%write}"), "{write}");
  parse_error(permissions, "{ read, read }", "duplicate flag `read`");
  parse_error(permissions, "{ read, write, read }", "duplicate flag `read`");
  parse_error(permissions, "{ read, write, execute }", "unknown flag `execute`");
  parse_error(permissions, "{:}", "expected a flag name, found `:`");
  parse_error(permissions, "{read: true}", "expected `,` or `}` in flags, found `:`");
  const auto keywords = Type::flags({"true", "false", "inf", "nan", "some", "none", "ok", "err"});
  EXPECT_EQ(parse_wave(*keywords, "{true, false, inf, nan, some, none, ok, err}"),
            Val::flags(0xFF));
  std::vector<std::string> many;
  for (int i = 0; i < 32; ++i) many.push_back("f" + std::to_string(i));
  EXPECT_EQ(parse_wave(*Type::flags(many), "{f31, f0}"), Val::flags(0x80000001u));
}

TEST(WaveParse, Integers) {
  EXPECT_EQ(parse_wave(*Type::s8(), "-128"), Val::s8(-128));
  EXPECT_EQ(parse_wave(*Type::s8(), "-0"), Val::s8(0));
  EXPECT_EQ(parse_wave(*Type::u64(), "18446744073709551615"), Val::u64(~uint64_t{0}));
  EXPECT_EQ(parse_wave(*Type::s64(), "-9223372036854775808"),
            Val::s64(std::numeric_limits<int64_t>::min()));
  parse_error(Type::u8(), "256", "`256` is out of range for u8 (0 to 255)");
  parse_error(Type::s8(), "-129", "out of range for s8 (-128 to 127)");
  parse_error(Type::u64(), "18446744073709551616", "out of range for u64");
  parse_error(Type::s64(), "9223372036854775808", "out of range for s64");
  parse_error(Type::u8(), "-1", "expected an integer from 0 to 255, found `-1`");
  parse_error(Type::u8(), "-0", "expected an integer from 0 to 255");  // as Rust's parsing
  parse_error(Type::u32(), "1.0", "expected an integer");
  parse_error(Type::u32(), "1e3", "expected an integer");
  parse_error(Type::s32(), "inf", "expected an integer");
  parse_error(Type::s32(), "-inf", "expected an integer");
  parse_error(Type::u32(), "01", "unexpected `1` after the value");
  parse_error(Type::u32(), "+1", "unexpected character `+`");
  parse_error(Type::u32(), "\"1\"", "expected an integer");
  parse_error(Type::u32(), "", "found end of input");
}

TEST(WaveParse, Floats) {
  // From accept-floats.waves.
  const auto list = Type::list(Type::f32());
  EXPECT_EQ(reprint(list, "[0, 0.0, 0e0, 0.0e0, 0e-1, 0e+1, 0.000e100]"), "[0, 0, 0, 0, 0, 0, 0]");
  EXPECT_EQ(reprint(list, "[-3.1415, -100000, -0.0e-0]"), "[-3.1415, -100000, -0]");
  EXPECT_EQ(reprint(list, "[nan, inf, -inf]"), "[nan, inf, -inf]");
  const auto f32 = Type::f32();
  EXPECT_EQ(reprint(f32, "3.4028234664e38"), "340282350000000000000000000000000000000");
  EXPECT_EQ(reprint(f32, "3.4028234664123e38"), "340282350000000000000000000000000000000");
  EXPECT_EQ(reprint(f32, "3.4028234664e39"), "inf");
  EXPECT_EQ(reprint(f32, "-3.4028234664e39"), "-inf");
  EXPECT_EQ(reprint(f32, "1.4012984643e-45"), "0.000000000000000000000000000000000000000000001");
  EXPECT_EQ(reprint(f32, "1.4012984643e-46"), "0");
  EXPECT_EQ(reprint(f32, "-1e-99999999999999999999"), "-0");
  EXPECT_EQ(reprint(f32, "0.0000001e99999999999999999999"), "inf");
  EXPECT_EQ(reprint(f32, "0.1"), "0.1");
  const auto f64 = Type::f64();
  EXPECT_EQ(reprint(f64, "6.022e+23"), "602200000000000000000000");
  EXPECT_EQ(reprint(f64, "1E400"), "inf");
  EXPECT_EQ(reprint(f64, "4.9e-324"), "0." + std::string(323, '0') + "5");
  EXPECT_EQ(reprint(f64, "1e-400"), "0");
  EXPECT_EQ(reprint(f64, "7"), "7");
  // The NaN the crate makes: positive and quiet.
  EXPECT_EQ(parse_wave(*f32, "nan").scalar_bits(), 0x7FC00000u);
  EXPECT_EQ(parse_wave(*f64, "nan").scalar_bits(), 0x7FF8000000000000u);
  // From reject-floats.waves.
  for (const char* text : {"-nan", "NaN", "infinity", "-infinity", "INFINITY", "Infinity", "Inf",
                           "-Inf", "INF", "-INF", "%inf", ".5", "1.", "1.e5"})
    parse_error(f64, text);
}

TEST(WaveParse, Chars) {
  const auto c = Type::char_();
  // From accept-chars.waves.
  const auto list = Type::list(c);
  EXPECT_EQ(reprint(list, R"(['W', 'A', 'V', 'E', '🌊'])"), R"(['W', 'A', 'V', 'E', '🌊'])");
  EXPECT_EQ(reprint(list, R"(['\\', '\'', '\"', '\t', '\n', '\r'])"),
            R"(['\\', '\'', '\"', '\t', '\n', '\r'])");
  EXPECT_EQ(reprint(list, R"(['\u{0}', '\u{000000}'])"), R"(['\u{0}', '\u{0}'])");
  EXPECT_EQ(reprint(list, R"(['x', '\u{78}', '\u{000078}'])"), "['x', 'x', 'x']");
  EXPECT_EQ(reprint(list, R"(['☃', '\u{2603}', '\u{002603}'])"), "['☃', '☃', '☃']");
  EXPECT_EQ(reprint(list, R"(['"', '\"', '\u{22}'])"), R"(['\"', '\"', '\"'])");
  EXPECT_EQ(reprint(c, "'\t'"), R"('\t')");
  // From reject-chars.waves.
  parse_error(c, "''", "expected one character");
  parse_error(c, "'ab'", "exactly one");
  parse_error(c, "'☃☃'", "exactly one");
  parse_error(c, R"('\n\n')", "exactly one");
  parse_error(c, R"('\z')", "invalid escape");
  parse_error(c, R"('\x1f')", "invalid escape");
  parse_error(c, R"('\u1f')", "expected `{` after \\u");
  parse_error(c, R"('\u{1f')", "hex digits and `}`");
  parse_error(c, R"('\u{}')", "hex digits and `}`");
  parse_error(c, R"('\u{x}')", "hex digits and `}`");
  parse_error(c, R"('\u{12345678}')", "hex digits and `}`");
  parse_error(c, R"('\u{110000}')", "\\u{110000} is not a Unicode scalar value");
  parse_error(c, R"('\u{D800}')", "not a Unicode scalar value");
  parse_error(c, R"('\u{DFFF}')", "not a Unicode scalar value");
  parse_error(c, "'", "expected one character");
  parse_error(c, "x'", "expected a char");
  parse_error(c, "'x", "exactly one");
  parse_error(c, R"('\')", "expected `'` after one character");
  parse_error(c, "'''", "expected one character");
  parse_error(c, "'\n'", "expected one character");
}

TEST(WaveParse, Strings) {
  const auto s = Type::string();
  // From accept-strings.waves.
  EXPECT_EQ(parse_wave(*s, R"("")").as_string(), "");
  EXPECT_EQ(parse_wave(*s, R"("WAVE🌊")").as_string(), "WAVE🌊");
  EXPECT_EQ(parse_wave(*s, R"("\\\'\"\t\n\r")").as_string(), "\\'\"\t\n\r");
  EXPECT_EQ(parse_wave(*s, R"("'\'\u{27}")").as_string(), "'''");
  EXPECT_EQ(parse_wave(*s, R"("☃\u{2603}\u{002603}")").as_string(), "☃☃☃");
  EXPECT_EQ(parse_wave(*s, "\"tab\there\"").as_string(), "tab\there");
  // From reject-strings.waves.
  parse_error(s, R"("\u{d800}")", "not a Unicode scalar value");
  parse_error(s, R"("\u{dcff}")", "not a Unicode scalar value");
  parse_error(s, R"("\u{110000}")", "not a Unicode scalar value");
  parse_error(s, R"("\u{ffffffff}")", "hex digits");
  parse_error(s, R"("\u{-1}")", "hex digits");
  parse_error(s, R"("\u{+1}")", "hex digits");
  parse_error(s, R"("\")", "unterminated string");
  parse_error(s, "\"\n\"", "unterminated string");
  parse_error(s, R"("a" "b")", "unexpected `\"b\"` after the value");
}

TEST(WaveParse, MultilineStrings) {
  const auto s = Type::string();
  // From accept-strings.waves.
  EXPECT_EQ(parse_wave(*s, "\"\"\"\n\"\"\"").as_string(), "");
  EXPECT_EQ(parse_wave(*s,
                       "\"\"\"\n"
                       "Break up double quote sequences: \"\"\\\"\"\n"
                       "Other escapes work: \\\\\\'\\\"\\t\\n\\r\\u{2603}\n"
                       "\"\"\"")
                .as_string(),
            "Break up double quote sequences: \"\"\"\"\nOther escapes work: \\'\"\t\n\r☃");
  EXPECT_EQ(parse_wave(*s,
                       "\"\"\"\n"
                       "    Trailing indent\n"
                       "  determines dedent\n"
                       "      behavior.\n"
                       "  \"\"\"")
                .as_string(),
            "  Trailing indent\ndetermines dedent\n    behavior.");
  EXPECT_EQ(parse_wave(*s,
                       "\"\"\"\n"
                       "\n"
                       "Empty leading and trailing lines are retained\n"
                       "\n"
                       "\"\"\"")
                .as_string(),
            "\nEmpty leading and trailing lines are retained\n");
  // \r\n line breaks count as one; a \r before them is dropped.
  EXPECT_EQ(parse_wave(*s, "\"\"\"\r\n  one\r\n  two\r\n  \"\"\"").as_string(), "one\ntwo");
  // Multi-line strings are never printed; they print as ordinary strings.
  EXPECT_EQ(reprint(s, "\"\"\"\n  a\n  b\n  \"\"\""), R"("a\nb")");
  // From reject-strings.waves.
  parse_error(s, "\"\"\"\"\"\"", "opening \"\"\" must be followed by a line break");
  parse_error(s, "\"\"\" \"\"\"", "opening \"\"\" must be followed by a line break");
  parse_error(s, "\"\"\"\"\n\"\"\"", "opening \"\"\" must be followed by a line break");
  parse_error(s, "\"\"\"\n\"\"", "unterminated multi-line string");
  parse_error(s, "\"\"\"\n\"\"\"\"", "unterminated string");
  parse_error(s, "\"\"\"extra\n\"\"\"", "opening \"\"\" must be followed by a line break");
  parse_error(s, "\"\"\"\nextra\"\"\"", "closing \"\"\" must be on its own line");
  parse_error(s, "\"\"\"\n  \"\"\"\n  \"\"\"", "unterminated multi-line string");
  parse_error(s, "\"\"\"\n  Between \"\"\" words\n  \"\"\"",
              "closing \"\"\" must be on its own line");
  parse_error(s, "\"\"\"\nInvalid surrogate: \\u{d800}\n\"\"\"", "not a Unicode scalar value");
  parse_error(s, "\"\"\"\nInvalid escape: \\j\n\"\"\"", "invalid escape");
  parse_error(s, "\"\"\"\n  a\n b\n  \"\"\"", "indented less than the closing");
  parse_error(s, "\"\"\"\n  a\n\n  \"\"\"", "indented less than the closing");
}

TEST(WaveParse, ErrorsNameLineAndColumn) {
  const std::string message =
      parse_error(Type::list(Type::u8()), "[\n  1,\n  ☃300]", "line 3, column 3");
  EXPECT_NE(message.find("unexpected character `☃`"), std::string::npos) << message;
  parse_error(Type::list(Type::u8()), "[1, 2,\n 256]", "line 2, column 2: `256` is out of range");
  parse_error(Type::u8(), "1 2", "line 1, column 3: unexpected `2` after the value");
  parse_error(Type::string(), "\"ab\xFF\"", "line 1, column 4: the text is not valid UTF-8");
  // A NUL is an ordinary character in a string literal.
  EXPECT_EQ(parse_wave(*Type::string(), std::string("\"a\0\"", 4)).as_string(),
            std::string("a\0", 2));
}

TEST(WaveParse, NestingIsLimitedLikeTheCrate) {
  TypeRef deep = Type::u8();
  for (int i = 0; i < 100; ++i) deep = Type::list(deep);
  // 100 lists and the number make 101 nested values: one too many.
  parse_error(deep, std::string(100, '[') + "0" + std::string(100, ']'), "nested more than 100");
  EXPECT_NO_THROW(parse_wave(*deep, std::string(100, '[') + std::string(100, ']')));
  parse_error(Type::list(deep), std::string(101, '[') + std::string(101, ']'),
              "nested more than 100");
  // Bare option payloads are the same value as their option.
  TypeRef options = Type::u8();
  for (int i = 0; i < 99; ++i) options = Type::list(Type::option(options));
  EXPECT_NO_THROW(parse_wave(*options, std::string(99, '[') + "0" + std::string(99, ']')));
}

TEST(WaveArgs, CommaSeparatedArguments) {
  const std::vector<TypeRef> types = {Type::u8(), Type::string(), u8_option(), u8_option()};
  auto args = parse_wave_args(types, R"(1, "x", some(2), 3)");
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0], Val::u8(1));
  EXPECT_EQ(args[1], Val::string("x"));
  EXPECT_EQ(args[2], Val::some(Val::u8(2)));
  EXPECT_EQ(args[3], Val::some(Val::u8(3)));
  // Trailing options may be left out; a trailing comma is fine.
  args = parse_wave_args(types, R"( 1 , "x" , )");
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[2], Val::none());
  EXPECT_EQ(args[3], Val::none());
  EXPECT_EQ(parse_wave_args(std::vector<TypeRef>{u8_option()}, " // nothing\n").at(0), Val::none());
  EXPECT_TRUE(parse_wave_args({}, "").empty());
  auto expect_error = [](std::span<const TypeRef> types, std::string_view text,
                         std::string_view fragment) {
    try {
      parse_wave_args(types, text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidValue);
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(types, "1", "missing argument 2 of type string");
  expect_error(types, "", "missing argument 1 of type u8");
  expect_error(types, R"(1, "x", none, none, 5)", "too many arguments; the function takes 4");
  expect_error({}, "1", "too many arguments; the function takes 0");
  expect_error(types, R"(1 "x")", "expected `,` or end of input after argument 1");
  expect_error(types, R"(1, , "x")", "expected a string");
  expect_error(types, R"((1, "x"))", "expected an integer");
}

// A composite value exercising every printable kind, for round trips.
TEST(WaveRoundTrip, CompositeValue) {
  const auto shape = Type::variant({{"circle", Type::f64()},
                                    {"rect", Type::tuple({Type::f32(), Type::f32()})},
                                    {"none", nullptr}});
  const auto type = Type::record({
      {"name", Type::string()},
      {"tags", Type::list(Type::string())},
      {"bytes", Type::list(Type::u8())},
      {"shapes", Type::list(shape)},
      {"mode", Type::enum_({"fast", "err"})},
      {"perms", Type::flags({"read", "write", "exec"})},
      {"lookup", Type::map(Type::char_(), Type::option(Type::s64()))},
      {"outcome", Type::result(Type::list(Type::bool_()), Type::string())},
      {"maybe", Type::option(Type::option(Type::u16()))},
      {"absent", Type::option(Type::u32())},
      {"grid", Type::fixed_list(Type::fixed_list(Type::s8(), 2), 2)},
  });
  const uint8_t bytes[] = {0, 127, 255};
  const Val value = Val::record({
      Val::string("a \"quoted\"\nname ☃"),
      Val::list({Val::string(""), Val::string("x,y")}),
      Val::bytes(bytes),
      Val::list({Val::variant(0, Val::f64(2.5)),
                 Val::variant(1, Val::tuple({Val::f32(1.0f), Val::f32(-0.25f)})), Val::variant(2)}),
      Val::enum_(1),
      Val::flags(0b101),
      Val::map({Val::tuple({Val::char_('k'), Val::some(Val::s64(-7))}),
                Val::tuple({Val::char_('\''), Val::none()})}),
      Val::ok(Val::list({Val::bool_(true), Val::bool_(false)})),
      Val::some(Val::none()),
      Val::none(),
      Val::list({Val::list({Val::s8(1), Val::s8(-2)}), Val::list({Val::s8(3), Val::s8(-4)})}),
  });
  const std::string text =
      R"({name: "a \"quoted\"\nname ☃", tags: ["", "x,y"], bytes: [0, 127, 255], )"
      R"(shapes: [circle(2.5), rect((1, -0.25)), %none], mode: %err, perms: {read, exec}, )"
      R"(lookup: [('k', some(-7)), ('\'', none)], outcome: ok([true, false]), )"
      R"(maybe: some(none), grid: [[1, -2], [3, -4]]})";
  expect_round_trip(type, value, text);
}

// Mangled inputs must be rejected with an Error, never crash or hang.
TEST(WaveParse, MangledInputIsRejectedCleanly) {
  const auto type = Type::list(Type::variant({
      {"r", Type::record({{"a", Type::option(Type::string())}, {"b", Type::f64()}})},
      {"t", Type::tuple({Type::char_(), Type::flags({"x", "y"})})},
      {"o", Type::result(Type::option(Type::s32()), Type::enum_({"e", "f"}))},
  }));
  const std::string seed =
      "[r({a: some(\"s\\u{41}\"), b: -1.5e3}), t(('\\n', {x, y})), o(ok(some(-3))), "
      "o(err(f)), r({b: nan}), r({a: \"\"\"\n  x\n  \"\"\", b: inf})] // end";
  ASSERT_NO_THROW(parse_wave(*type, seed));
  std::mt19937 random(12345);
  const std::string alphabet = "[](){},:%'\"\\-.e0123456789abcdefnorstuxy \n/\xE2\x98\x83\xFF";
  for (int round = 0; round < 20000; ++round) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = random() % text.size();
      switch (random() % 3) {
        case 0: text.erase(at, 1 + random() % 3); break;
        case 1: text.insert(at, 1, alphabet[random() % alphabet.size()]); break;
        default: text[at] = alphabet[random() % alphabet.size()]; break;
      }
    }
    try {
      const Val value = parse_wave(*type, text);
      EXPECT_EQ(parse_wave(*type, to_wave(*type, value)), value) << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
    }
  }
}

}  // namespace
}  // namespace cmhost
