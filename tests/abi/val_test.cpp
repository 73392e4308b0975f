// Dynamic values: construction, accessors, copies, packed lists.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::abi {
namespace {

template <typename F>
void expect_invalid_value(F&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an InvalidValue error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidValue) << e.what();
  }
}

template <typename T>
Val packed(ValKind kind, std::vector<T> elements) {
  return Val::packed_list(kind, elements.data(), elements.size());
}

TEST(Val, IntegerScalars) {
  EXPECT_EQ(Val::s8(-128).as_s8(), -128);
  EXPECT_EQ(Val::u8(255).as_u8(), 255);
  EXPECT_EQ(Val::s16(-32768).as_s16(), -32768);
  EXPECT_EQ(Val::u16(65535).as_u16(), 65535);
  EXPECT_EQ(Val::s32(std::numeric_limits<int32_t>::min()).as_s32(),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(Val::u32(0xFFFFFFFFu).as_u32(), 0xFFFFFFFFu);
  EXPECT_EQ(Val::s64(std::numeric_limits<int64_t>::min()).as_s64(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Val::u64(~uint64_t{0}).as_u64(), ~uint64_t{0});
  EXPECT_EQ(Val::s8(-1).kind(), ValKind::S8);
  EXPECT_EQ(Val::u64(1).kind(), ValKind::U64);
}

TEST(Val, ScalarBitsExtendByKind) {
  // Signed integers are sign-extended, unsigned zero-extended.
  EXPECT_EQ(Val::s8(-1).scalar_bits(), ~uint64_t{0});
  EXPECT_EQ(Val::s16(-2).scalar_bits(), ~uint64_t{1});
  EXPECT_EQ(Val::s32(-1).scalar_bits(), ~uint64_t{0});
  EXPECT_EQ(Val::u8(0xFF).scalar_bits(), 0xFFu);
  EXPECT_EQ(Val::u32(0x80000000u).scalar_bits(), 0x80000000u);
  EXPECT_EQ(Val::bool_(true).scalar_bits(), 1u);
  EXPECT_EQ(Val::char_(U'€').scalar_bits(), 0x20ACu);
  EXPECT_EQ(Val::f32(1.0f).scalar_bits(), 0x3F800000u);
  EXPECT_EQ(Val::f64(-2.0).scalar_bits(), 0xC000000000000000ull);
}

TEST(Val, FloatsBoolsCharsFlagsHandles) {
  EXPECT_EQ(Val::f32(1.5f).as_f32(), 1.5f);
  EXPECT_EQ(Val::f64(-0.25).as_f64(), -0.25);
  EXPECT_TRUE(Val::bool_(true).as_bool());
  EXPECT_FALSE(Val::bool_(false).as_bool());
  EXPECT_EQ(Val::char_(U'\U0001F600').as_char(), U'\U0001F600');
  EXPECT_EQ(Val::flags(0b1010).as_flags(), 0b1010u);
  EXPECT_EQ(Val::own(7).as_handle(), 7u);
  EXPECT_EQ(Val::borrow(8).as_handle(), 8u);
  EXPECT_EQ(Val::stream(9).as_handle(), 9u);
  EXPECT_EQ(Val::future(10).as_handle(), 10u);
  EXPECT_EQ(Val::error_context(11).as_handle(), 11u);
  EXPECT_EQ(Val::own(7).kind(), ValKind::Own);
  EXPECT_EQ(Val::error_context(1).kind(), ValKind::ErrorContext);
  EXPECT_EQ(Val().kind(), ValKind::Bool);
  EXPECT_FALSE(Val().as_bool());
}

TEST(Val, WrongKindAccessorsThrowInvalidValue) {
  const Val u8 = Val::u8(1);
  expect_invalid_value([&] { (void)u8.as_u32(); });
  expect_invalid_value([&] { (void)u8.as_s8(); });
  expect_invalid_value([&] { (void)u8.as_bool(); });
  expect_invalid_value([&] { (void)u8.as_f32(); });
  expect_invalid_value([&] { (void)u8.as_string(); });
  expect_invalid_value([&] { (void)u8.as_handle(); });
  expect_invalid_value([&] { (void)u8.list_size(); });
  expect_invalid_value([&] { (void)Val::f32(1).as_f64(); });
  expect_invalid_value([&] { (void)Val::u32(1).as_char(); });
  expect_invalid_value([&] { (void)Val::u32(1).as_flags(); });
  expect_invalid_value([&] { (void)Val::string("x").as_u8(); });
  expect_invalid_value([&] { (void)Val::list({}).as_string(); });
  expect_invalid_value([&] { (void)Val::list({Val::u8(1)}).list_element(1); });
}

TEST(Val, StringRejectsInvalidUtf8) {
  EXPECT_EQ(Val::string("h\xC3\xA9llo").as_string(), "h\xC3\xA9llo");
  EXPECT_EQ(Val::string("").as_string(), "");
  EXPECT_EQ(Val::string(std::string("a\0b", 3)).as_string().size(), 3u);
  for (const char* bad : {"\x80", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xFF", "abc\xE2\x82"}) {
    SCOPED_TRACE(bad);
    expect_invalid_value([&] { Val::string(bad); });
  }
  // The unchecked form is for text already validated by the lift programs.
  EXPECT_EQ(Val::string_unchecked("\xFF").as_string(), "\xFF");
}

TEST(Val, CharRejectsSurrogatesAndOutOfRange) {
  for (char32_t ok : {char32_t{0}, char32_t{0xD7FF}, char32_t{0xE000}, char32_t{0x10FFFF}})
    EXPECT_EQ(Val::char_(ok).as_char(), ok);
  for (char32_t bad : {char32_t{0xD800}, char32_t{0xDBFF}, char32_t{0xDC00}, char32_t{0xDFFF},
                       char32_t{0x110000}, char32_t{0xFFFFFFFF}}) {
    SCOPED_TRACE(static_cast<uint32_t>(bad));
    expect_invalid_value([&] { Val::char_(bad); });
  }
}

TEST(Val, CompoundConstruction) {
  Val r = Val::record({Val::u8(1), Val::string("x")});
  EXPECT_EQ(r.kind(), ValKind::Record);
  ASSERT_EQ(r.items().size(), 2u);
  EXPECT_EQ(r.items()[1].as_string(), "x");

  Val t = Val::tuple({Val::u8(1)});
  EXPECT_EQ(t.kind(), ValKind::Tuple);
  EXPECT_NE(t, Val::record({Val::u8(1)}));

  Val v = Val::variant(3, Val::u16(9));
  EXPECT_EQ(v.kind(), ValKind::Variant);
  EXPECT_EQ(v.case_index(), 3u);
  ASSERT_NE(v.payload(), nullptr);
  EXPECT_EQ(v.payload()->as_u16(), 9);
  EXPECT_EQ(Val::variant(2).payload(), nullptr);

  EXPECT_EQ(Val::enum_(4).case_index(), 4u);
  EXPECT_EQ(Val::enum_(4).kind(), ValKind::Enum);
  EXPECT_EQ(Val::none().case_index(), 0u);
  EXPECT_EQ(Val::none().payload(), nullptr);
  EXPECT_EQ(Val::some(Val::u8(5)).case_index(), 1u);
  EXPECT_EQ(Val::some(Val::u8(5)).payload()->as_u8(), 5);
  EXPECT_EQ(Val::ok().case_index(), 0u);
  EXPECT_EQ(Val::ok().kind(), ValKind::Result);
  EXPECT_EQ(Val::err(Val::string("e")).case_index(), 1u);
  EXPECT_EQ(Val::err(Val::string("e")).payload()->as_string(), "e");

  Val m = Val::map({Val::tuple({Val::string("k"), Val::u32(1)})});
  EXPECT_EQ(m.kind(), ValKind::Map);
  EXPECT_EQ(m.list_size(), 1u);
  EXPECT_EQ(m.list_element(0).items()[0].as_string(), "k");
}

TEST(Val, CopyIsDeep) {
  Val original = Val::list({Val::string("a long enough string to live on the heap"),
                            Val::record({Val::u8(1)})});
  Val copy = original;
  EXPECT_EQ(copy, original);
  copy.items_mut()[0] = Val::string("changed");
  copy.items_mut()[1].items_mut()[0] = Val::u8(2);
  EXPECT_EQ(original.items()[0].as_string(), "a long enough string to live on the heap");
  EXPECT_EQ(original.items()[1].items()[0].as_u8(), 1);
  EXPECT_NE(copy, original);

  const uint8_t data[] = {1, 2, 3};
  Val p = Val::bytes(data);
  Val pc = p;
  EXPECT_NE(pc.packed_bytes().data(), p.packed_bytes().data());
  EXPECT_EQ(pc, p);

  Val assigned = Val::u8(0);
  assigned = original;
  EXPECT_EQ(assigned, original);
  assigned = assigned;  // self-assignment keeps the value
  EXPECT_EQ(assigned, original);
}

TEST(Val, MoveTransfersStorage) {
  Val s = Val::string("a long enough string to live on the heap");
  const char* chars = s.as_string().data();
  Val moved = std::move(s);
  EXPECT_EQ(moved.as_string().data(), chars);
  EXPECT_EQ(moved.as_string(), "a long enough string to live on the heap");

  std::vector<uint16_t> data(100, 7);  // 200 bytes: on the heap
  Val p = Val::packed_list(ValKind::U16, data.data(), data.size());
  const uint8_t* bytes = p.packed_bytes().data();
  Val q = Val::u8(0);
  q = std::move(p);
  EXPECT_TRUE(q.is_packed());
  EXPECT_EQ(q.packed_bytes().data(), bytes);
  EXPECT_EQ(q.list_size(), 100u);
  EXPECT_EQ(q.kind(), ValKind::List);
}

TEST(Val, ShortStringsLiveInline) {
  const std::string fits(Val::kMaxInlineText, 'i'), longer(Val::kMaxInlineText + 1, 'h');
  const Val a = Val::string(fits), b = Val::string(longer);
  const auto* inside = reinterpret_cast<const char*>(&a);
  EXPECT_TRUE(a.as_string().data() >= inside && a.as_string().data() < inside + sizeof(Val));
  EXPECT_EQ(a.as_string(), fits);
  const auto* b_inside = reinterpret_cast<const char*>(&b);
  EXPECT_FALSE(b.as_string().data() >= b_inside && b.as_string().data() < b_inside + sizeof(Val));
  EXPECT_EQ(b.as_string(), longer);
  EXPECT_NE(a, b);
  EXPECT_EQ(Val(b), b);
}

TEST(Val, TextOfEveryInlineLengthKeepsEveryByte) {
  // Each length takes its own path through the short copy (1-3, 4-7, 8-16, 17-23 bytes).
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyz";
  for (size_t n = 0; n <= Val::kMaxInlineText + 1; ++n) {
    const std::string text = alphabet.substr(0, n);
    EXPECT_EQ(Val::string(text).as_string(), text) << n;
    EXPECT_EQ(Val(Val::string(text)).as_string(), text) << n;
  }
}

TEST(Val, SmallPackedListsLiveInline) {
  const uint16_t data[] = {1, 2, 3};
  Val p = Val::packed_list(ValKind::U16, data, 3);
  const auto* inside = reinterpret_cast<const uint8_t*>(&p);
  EXPECT_TRUE(p.packed_bytes().data() >= inside && p.packed_bytes().data() < inside + sizeof(Val));
  Val copy = p;
  Val moved = std::move(p);
  EXPECT_EQ(moved, Val::list({Val::u16(1), Val::u16(2), Val::u16(3)}));
  EXPECT_EQ(copy, moved);
  EXPECT_NE(copy.packed_bytes().data(), moved.packed_bytes().data());
  EXPECT_EQ(moved.list_element(2).as_u16(), 3u);
}

TEST(Val, PackedInlineHoldsWhatFitsAndRefusesMore) {
  const uint8_t bytes[Val::kMaxInlinePacked + 1] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const Val full = Val::packed_inline(ValKind::U16, bytes, Val::kMaxInlinePacked);
  EXPECT_EQ(full, Val::list({Val::u16(0x0201), Val::u16(0x0403), Val::u16(0x0605), Val::u16(0x0807)}));
  EXPECT_THROW(Val::packed_inline(ValKind::U8, bytes, Val::kMaxInlinePacked + 1), std::length_error);
}

// Assigning a value from one of its own items (unwrapping a payload in
// place). Run in a child process: a broken assignment corrupts the heap.
template <typename Assign>
void expect_unwraps_in_place(Val outer, const Val& expected, Assign assign) {
  EXPECT_EXIT(
      {
        assign(outer);
        std::exit(outer == expected ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Val, AssignFromOwnItem) {
  const Val text = Val::string("a long enough string to live on the heap");
  expect_unwraps_in_place(Val::some(text), text, [](Val& v) { v = v.items()[0]; });
  expect_unwraps_in_place(Val::some(text), text, [](Val& v) { v = std::move(v.items_mut()[0]); });
  const Val inner = Val::list({Val::u8(1), Val::u8(2)});
  expect_unwraps_in_place(Val::list({inner, Val::u8(3)}), inner,
                          [](Val& v) { v = std::move(v.items_mut()[0]); });
}

TEST(Val, PackedListBasics) {
  Val p = packed<uint32_t>(ValKind::U32, {1, 2, 3});
  EXPECT_TRUE(p.is_packed());
  EXPECT_EQ(p.kind(), ValKind::List);
  EXPECT_EQ(p.packed_element_kind(), ValKind::U32);
  EXPECT_EQ(p.list_size(), 3u);
  EXPECT_EQ(p.packed_bytes().size(), 12u);
  EXPECT_TRUE(p.items().empty());
  EXPECT_EQ(p.list_element(2).as_u32(), 3u);
  EXPECT_EQ(Val::bytes({}).list_size(), 0u);
  expect_invalid_value([] { Val::packed_list(ValKind::Bool, nullptr, 0); });
  expect_invalid_value([] { Val::packed_list(ValKind::String, nullptr, 0); });
  expect_invalid_value([&] { (void)p.list_element(3); });
}

TEST(Val, PackedEqualsUnpacked) {
  Val p = packed<int16_t>(ValKind::S16, {-1, 2, 300});
  Val u = Val::list({Val::s16(-1), Val::s16(2), Val::s16(300)});
  EXPECT_EQ(p, u);
  EXPECT_EQ(u, p);
  EXPECT_NE(p, Val::list({Val::s16(-1), Val::s16(2)}));
  EXPECT_NE(p, Val::list({Val::s16(-1), Val::s16(2), Val::s16(301)}));
  // Same bytes, different element kind: not equal.
  EXPECT_NE(packed<uint8_t>(ValKind::U8, {0xFF}), packed<int8_t>(ValKind::S8, {-1}));
  EXPECT_NE(packed<uint8_t>(ValKind::U8, {1}), Val::list({Val::s8(1)}));
  // Empty lists are equal whatever their representation.
  EXPECT_EQ(Val::bytes({}), Val::list({}));
}

TEST(Val, PackedListElementsOfEachKind) {
  EXPECT_EQ(packed<uint8_t>(ValKind::U8, {0, 0xFF}).list_element(1), Val::u8(0xFF));
  EXPECT_EQ(packed<uint16_t>(ValKind::U16, {0, 0xFFFF}).list_element(1), Val::u16(0xFFFF));
  EXPECT_EQ(packed<uint32_t>(ValKind::U32, {0xFFFFFFFF}).list_element(0), Val::u32(0xFFFFFFFF));
  EXPECT_EQ(packed<uint64_t>(ValKind::U64, {~uint64_t{0}}).list_element(0), Val::u64(~uint64_t{0}));
  EXPECT_EQ(packed<int64_t>(ValKind::S64, {-5}).list_element(0), Val::s64(-5));

  // Signed elements are sign-extended.
  Val s8 = packed<int8_t>(ValKind::S8, {-1, 127, -128});
  EXPECT_EQ(s8.list_element(0).as_s8(), -1);
  EXPECT_EQ(s8.list_element(0).scalar_bits(), ~uint64_t{0});
  EXPECT_EQ(s8.list_element(2).as_s8(), -128);
  EXPECT_EQ(s8.list_element(1).scalar_bits(), 127u);
  Val s16 = packed<int16_t>(ValKind::S16, {-32768});
  EXPECT_EQ(s16.list_element(0).as_s16(), -32768);
  EXPECT_EQ(s16.list_element(0).scalar_bits(), 0xFFFFFFFFFFFF8000ull);
  Val s32 = packed<int32_t>(ValKind::S32, {-2});
  EXPECT_EQ(s32.list_element(0).scalar_bits(), 0xFFFFFFFFFFFFFFFEull);
  EXPECT_EQ(s32.list_element(0), Val::s32(-2));

  // Floats come back with their exact bit patterns.
  Val f32 = packed<uint32_t>(ValKind::F32, {0x3F800000u, 0x7FA00001u});
  EXPECT_EQ(f32.list_element(0).as_f32(), 1.0f);
  EXPECT_EQ(f32.list_element(1).scalar_bits(), 0x7FA00001u);
  Val f64 = packed<uint64_t>(ValKind::F64, {0xC000000000000000ull});
  EXPECT_EQ(f64.list_element(0).as_f64(), -2.0);
}

TEST(Val, FloatsCompareByBits) {
  EXPECT_NE(Val::f32(0.0f), Val::f32(-0.0f));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Val::f32(nan), Val::f32(nan));
  EXPECT_NE(Val::f64(1.0), Val::f32(1.0f));
  EXPECT_NE(Val::u32(1), Val::s32(1));
}

TEST(Val, CompoundEquality) {
  EXPECT_EQ(Val::some(Val::string("x")), Val::some(Val::string("x")));
  EXPECT_NE(Val::some(Val::string("x")), Val::some(Val::string("y")));
  EXPECT_NE(Val::ok(Val::u8(1)), Val::err(Val::u8(1)));
  EXPECT_NE(Val::variant(0, Val::u8(1)), Val::variant(1, Val::u8(1)));
  EXPECT_NE(Val::variant(0), Val::variant(0, Val::u8(0)));
  EXPECT_NE(Val::enum_(1), Val::variant(1));
  EXPECT_NE(Val::flags(1), Val::flags(3));
  EXPECT_NE(Val::own(1), Val::borrow(1));
}

}  // namespace
}  // namespace cmhost::abi
