// Typed lowers (abi/typed.hpp) against the Val path (ValueAbi, checked
// by the reference vectors), for every value type a C++ type stands for: a
// value stored or flattened typed is loaded or lifted dynamically and must
// equal the expected Val, and a value stored or flattened dynamically must
// load (or lift flat) typed as the C++ value. Both address widths; memory
// grows on every allocation, so nothing may keep a pointer across realloc.
#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <cstring>
#include <map>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "../support/expect_error.hpp"
#include "cmhost/abi.hpp"
#include "cmhost/abi/host_memory.hpp"
#include "cmhost/abi/typed.hpp"

namespace lower_test {

enum class Color : uint8_t { Red, Green, Blue };
enum class Wide : uint16_t {};  // 257 cases: a two-byte discriminant

struct Point {
  int32_t x;
  std::string label;
  std::optional<uint16_t> port;
  bool operator==(const Point&) const = default;
};

// What bindgen generates for `variant shape { circle(f32), square(f32), named(point), none }`
// (two cases with one payload type) and `flags perms { read, write, exec }`.
namespace shape {
struct Circle : cmhost::abi::typed::Case<float> { using Case::Case; };
struct Square : cmhost::abi::typed::Case<float> { using Case::Case; };
struct Named : cmhost::abi::typed::Case<Point> { using Case::Case; };
struct None : cmhost::abi::typed::Case<void> {};
}  // namespace shape
using Shape = std::variant<shape::Circle, shape::Square, shape::Named, shape::None>;
struct Perms : cmhost::abi::typed::Flags<Perms, 3> {
  static const Perms read, write, exec;
};
inline constexpr Perms Perms::read{{uint32_t{1} << 0}};
inline constexpr Perms Perms::write{{uint32_t{1} << 1}};
inline constexpr Perms Perms::exec{{uint32_t{1} << 2}};

}  // namespace lower_test

namespace cmhost::abi::typed {
template <>
struct Enum<lower_test::Color> {
  static constexpr size_t count = 3;
};
template <>
struct Enum<lower_test::Wide> {
  static constexpr size_t count = 257;
};
template <>
struct Record<lower_test::Point> {
  using P = lower_test::Point;
  static constexpr auto fields =
      std::make_tuple(field("x", &P::x), field("label", &P::label), field("port", &P::port));
};
}  // namespace cmhost::abi::typed

namespace cmhost::abi {
namespace {

using namespace lower_test;

TypeRef point_type() {
  return Type::record({{"x", Type::s32()}, {"label", Type::string()}, {"port", Type::option(Type::u16())}});
}
Val point_val(int32_t x, const std::string& label, std::optional<uint16_t> port) {
  return Val::record({Val::s32(x), Val::string(label), port ? Val::some(Val::u16(*port)) : Val::none()});
}
TypeRef color_type() { return Type::enum_({"red", "green", "blue"}); }
TypeRef wide_enum_type() {
  std::vector<std::string> labels;
  for (int i = 0; i < 257; ++i) labels.push_back("c" + std::to_string(i));
  return Type::enum_(labels);
}
TypeRef flags_type(size_t n) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < n; ++i) labels.push_back("f" + std::to_string(i));
  return Type::flags(labels);
}

// The four directions for one width: typed store / lower_flat read back
// dynamically, dynamic store / lower_flat read back typed.
template <class T, AddrWidth W>
void check_width(const TypeRef& type, const T& value, const Val& val) {
  SCOPED_TRACE(type->to_wit() + (W == AddrWidth::I64 ? " (memory64)" : ""));
  ASSERT_TRUE((typed::matches<T, W>(*type)));
  EXPECT_EQ((typed::Lift<T, W>::size), type->layout(W).size);
  EXPECT_EQ((typed::Lift<T, W>::align), type->layout(W).align);
  ASSERT_EQ((typed::Lower<T, W>::flat_count), type->layout(W).flat_count);
  HostMemory mem(1 << 16, 8);
  mem.set_growth_per_allocation(4096);  // memory moves under every realloc
  CanonOptions options;
  options.addr = W;
  AbiContext cx(&mem, options);
  const ValueAbi dynamic(type, W);
  const Layout& layout = type->layout(W);

  const uint64_t at = cx.realloc(0, 0, layout.align, layout.size);
  typed::Lower<T, W>::store(cx, at, value);
  cx.refresh();
  EXPECT_EQ(dynamic.load(cx, at), val) << "typed store";

  std::vector<uint64_t> flat(typed::Lower<T, W>::flat_count);
  typed::Lower<T, W>::lower_flat(cx, value, flat.data());
  cx.refresh();
  if (layout.flat_listed()) {
    EXPECT_EQ(dynamic.lift_flat(cx, flat), val) << "typed lower_flat";
  }

  const uint64_t back = cx.realloc(0, 0, layout.align, layout.size);
  dynamic.store(cx, val, back);
  cx.refresh();
  const typed::Reader reader(cx);
  EXPECT_EQ((typed::load<T, W>(reader, back)), value) << "typed load";

  if constexpr (typed::is_flat_liftable_v<T> && W == AddrWidth::I32) {  // FlatLift reads 32-bit memories
    std::vector<uint64_t> dynamic_flat;
    dynamic.lower_flat(cx, val, dynamic_flat);
    EXPECT_EQ(typed::FlatLift<T>::lift(cx, dynamic_flat.data()), value) << "typed lift_flat";
  }
}

template <class T>
void check(const TypeRef& type, const T& value, const Val& val) {
  check_width<T, AddrWidth::I32>(type, value, val);
  check_width<T, AddrWidth::I64>(type, value, val);
}

TEST(TypedLower, Scalars) {
  check(Type::bool_(), true, Val::bool_(true));
  check(Type::s8(), int8_t{-7}, Val::s8(-7));
  check(Type::u8(), uint8_t{250}, Val::u8(250));
  check(Type::s16(), int16_t{-300}, Val::s16(-300));
  check(Type::u16(), uint16_t{65000}, Val::u16(65000));
  check(Type::s32(), int32_t{-70000}, Val::s32(-70000));
  check(Type::u32(), uint32_t{4000000000u}, Val::u32(4000000000u));
  check(Type::s64(), int64_t{-1} << 40, Val::s64(int64_t{-1} << 40));
  check(Type::u64(), ~uint64_t{0}, Val::u64(~uint64_t{0}));
  check(Type::f32(), -1.5f, Val::f32(-1.5f));
  check(Type::f64(), 0.1, Val::f64(0.1));
  check(Type::char_(), U'\U0001F600', Val::char_(U'\U0001F600'));
}

TEST(TypedLower, StringsListsAndFixedLists) {
  check(Type::string(), std::string("h\xC3\xA9llo \xE2\x98\x83"), Val::string("h\xC3\xA9llo \xE2\x98\x83"));
  check(Type::string(), std::string(), Val::string(""));
  check(Type::list(Type::u8()), std::vector<uint8_t>{1, 2, 255}, Val::bytes(std::vector<uint8_t>{1, 2, 255}));
  check(Type::list(Type::u32()), std::vector<uint32_t>{7, 0, 1u << 31},
        Val::list({Val::u32(7), Val::u32(0), Val::u32(1u << 31)}));
  check(Type::list(Type::f64()), std::vector<double>{0.5, -2}, Val::list({Val::f64(0.5), Val::f64(-2)}));
  check(Type::list(Type::char_()), std::vector<char32_t>{U'a', U'\u2603'},
        Val::list({Val::char_(U'a'), Val::char_(U'\u2603')}));
  check(Type::list(Type::string()), std::vector<std::string>{"a", "", "\xE2\x98\x83"},
        Val::list({Val::string("a"), Val::string(""), Val::string("\xE2\x98\x83")}));
  check(Type::list(Type::list(Type::s16())), std::vector<std::vector<int16_t>>{{-1, 2}, {}},
        Val::list({Val::list({Val::s16(-1), Val::s16(2)}), Val::list({})}));
  check(Type::fixed_list(Type::u16(), 3), std::array<uint16_t, 3>{1, 2, 3},
        Val::list({Val::u16(1), Val::u16(2), Val::u16(3)}));
  check(Type::fixed_list(Type::string(), 2), std::array<std::string, 2>{"x", "yz"},
        Val::list({Val::string("x"), Val::string("yz")}));
}

TEST(TypedLower, BoolListsLowerFromVectorsAndSpans) {
  // std::vector<bool> packs its bits: it is written a byte per bool, as a
  // span of bools is, and read back from the bytes.
  const TypeRef type = Type::list(Type::bool_());
  const Val val = Val::list({Val::bool_(true), Val::bool_(false), Val::bool_(true)});
  check(type, std::vector<bool>{true, false, true}, val);
  check(type, std::vector<bool>{}, Val::list({}));
  check(Type::option(type), std::optional<std::vector<bool>>(std::vector<bool>{true, false, true}), Val::some(val));
  check(Type::tuple({Type::u8(), type}), std::tuple<uint8_t, std::vector<bool>>{7, {true, false, true}},
        Val::tuple({Val::u8(7), val}));
  check(Type::list(type), std::vector<std::vector<bool>>{{true, false, true}, {}}, Val::list({val, Val::list({})}));

  HostMemory mem(1 << 12, 8);
  AbiContext cx(&mem, CanonOptions{});
  const bool bits[] = {true, false, true};
  const uint64_t at = mem.realloc(0, 0, 4, 8);
  typed::Lower<std::span<const bool>, AddrWidth::I32>::store(cx, at, std::span<const bool>(bits));
  EXPECT_EQ(ValueAbi(type, AddrWidth::I32).load(cx, at), val);
  std::pmr::monotonic_buffer_resource arena;
  const std::pmr::vector<bool> pmr({false, true}, &arena);
  typed::Lower<std::pmr::vector<bool>, AddrWidth::I32>::store(cx, at, pmr);
  EXPECT_EQ(ValueAbi(type, AddrWidth::I32).load(cx, at), Val::list({Val::bool_(false), Val::bool_(true)}));
}

TEST(TypedLower, BoolListsLiftEveryNonZeroByteAsTrue) {
  // The flat lift of a host function's list<bool> parameter: bytes a guest
  // wrote other than 0 and 1 are true.
  HostMemory mem(1 << 12, 8);
  AbiContext cx(&mem, CanonOptions{});
  const uint8_t stored[] = {2, 0, 0x80, 0xFF, 1};
  const uint64_t at = mem.realloc(0, 0, 1, sizeof stored);
  std::memcpy(mem.bytes().data() + at, stored, sizeof stored);
  const uint64_t flat[2] = {at, sizeof stored};
  EXPECT_EQ(typed::FlatLift<std::vector<bool>>::lift(cx, flat), (std::vector<bool>{true, false, true, true, true}));
}

TEST(TypedLower, RecordsTuplesAndMaps) {
  check(point_type(), Point{-5, "p\xC3\xA9", 8080}, point_val(-5, "p\xC3\xA9", 8080));
  check(point_type(), Point{0, "", std::nullopt}, point_val(0, "", std::nullopt));
  check(Type::list(point_type()), std::vector<Point>{{1, "a", 1}, {2, "b", std::nullopt}},
        Val::list({point_val(1, "a", 1), point_val(2, "b", std::nullopt)}));
  check(Type::tuple({Type::u8(), Type::f32(), Type::string(), Type::s64(), Type::char_()}),
        std::tuple<uint8_t, float, std::string, int64_t, char32_t>{9, 2.5f, "t", -9, U'z'},
        Val::tuple({Val::u8(9), Val::f32(2.5f), Val::string("t"), Val::s64(-9), Val::char_(U'z')}));
  check(Type::map(Type::string(), Type::u32()), std::map<std::string, uint32_t>{{"a", 1}, {"b", 2}},
        Val::map({Val::tuple({Val::string("a"), Val::u32(1)}), Val::tuple({Val::string("b"), Val::u32(2)})}));
  check(Type::map(Type::u8(), Type::list(Type::string())), std::map<uint8_t, std::vector<std::string>>{{3, {"x"}}},
        Val::map({Val::tuple({Val::u8(3), Val::list({Val::string("x")})})}));
}

TEST(TypedLower, VariantsOptionsAndResults) {
  using Shape = std::variant<int32_t, int64_t, float, double, std::string, uint8_t, std::monostate>;
  const TypeRef shape = Type::variant({{"int", Type::s32()}, {"long", Type::s64()}, {"float", Type::f32()},
                                       {"double", Type::f64()}, {"text", Type::string()}, {"byte", Type::u8()},
                                       {"none", nullptr}});
  check(shape, Shape(std::in_place_index<0>, -3), Val::variant(0, Val::s32(-3)));
  check(shape, Shape(std::in_place_index<1>, int64_t{1} << 50), Val::variant(1, Val::s64(int64_t{1} << 50)));
  check(shape, Shape(std::in_place_index<2>, 0.75f), Val::variant(2, Val::f32(0.75f)));
  check(shape, Shape(std::in_place_index<3>, -0.5), Val::variant(3, Val::f64(-0.5)));
  check(shape, Shape(std::in_place_index<4>, "s"), Val::variant(4, Val::string("s")));
  check(shape, Shape(std::in_place_index<5>, uint8_t{200}), Val::variant(5, Val::u8(200)));
  check(shape, Shape(std::in_place_index<6>), Val::variant(6));
  check(Type::option(Type::u16()), std::optional<uint16_t>(9), Val::some(Val::u16(9)));
  check(Type::option(Type::u16()), std::optional<uint16_t>(), Val::none());
  check(Type::option(Type::option(Type::s8())), std::optional<std::optional<int8_t>>(std::optional<int8_t>()),
        Val::some(Val::none()));
  check(Type::option(Type::string()), std::optional<std::string>("o"), Val::some(Val::string("o")));
  using Res = std::variant<uint32_t, std::string>;
  check(Type::result(Type::u32(), Type::string()), Res(std::in_place_index<0>, 5u), Val::ok(Val::u32(5)));
  check(Type::result(Type::u32(), Type::string()), Res(std::in_place_index<1>, "bad"), Val::err(Val::string("bad")));
  using Unit = std::variant<std::monostate, std::monostate>;
  check(Type::result(nullptr, nullptr), Unit(std::in_place_index<1>), Val::err());
  using ErrOnly = std::variant<std::monostate, std::string>;
  check(Type::result(nullptr, Type::string()), ErrOnly(std::in_place_index<0>), Val::ok());
  using Nested = std::variant<std::vector<std::string>, Shape>;
  check(Type::result(Type::list(Type::string()), shape), Nested(std::in_place_index<1>, Shape(std::in_place_index<3>, 4.0)),
        Val::err(Val::variant(3, Val::f64(4.0))));
  check(Type::list(Type::option(point_type())), std::vector<std::optional<Point>>{Point{1, "q", 2}, std::nullopt},
        Val::list({Val::some(point_val(1, "q", 2)), Val::none()}));
}

TEST(TypedLower, EnumsAndFlags) {
  check(color_type(), Color::Blue, Val::enum_(2));
  check(wide_enum_type(), static_cast<Wide>(256), Val::enum_(256));
  check(flags_type(3), std::bitset<3>(0b101), Val::flags(0b101));
  check(flags_type(12), std::bitset<12>(0x801), Val::flags(0x801));
  check(flags_type(32), std::bitset<32>(0x80000001u), Val::flags(0x80000001u));
  check(Type::list(color_type()), std::vector<Color>{Color::Green, Color::Red}, Val::list({Val::enum_(1), Val::enum_(0)}));
}

TEST(TypedLower, NamedCasesResultsAndFlagSets) {
  const TypeRef shape = Type::variant(
      {{"circle", Type::f32()}, {"square", Type::f32()}, {"named", point_type()}, {"none", nullptr}});
  check(shape, Shape(shape::Circle{1.5f}), Val::variant(0, Val::f32(1.5f)));
  check(shape, Shape(shape::Square{1.5f}), Val::variant(1, Val::f32(1.5f)));
  check(shape, Shape(shape::Named{Point{3, "n", 1}}), Val::variant(2, point_val(3, "n", 1)));
  check(shape, Shape(shape::None{}), Val::variant(3));
  check(Type::list(shape), std::vector<Shape>{shape::Square{2}, shape::None{}, shape::Named{Point{-1, "", {}}}},
        Val::list({Val::variant(1, Val::f32(2)), Val::variant(3), Val::variant(2, point_val(-1, "", std::nullopt))}));
  EXPECT_FALSE((typed::matches<Shape>(*Type::variant({{"circle", Type::f32()}, {"square", Type::f32()},
                                                       {"named", point_type()}, {"none", Type::u8()}}))));

  using Res = typed::Result<uint32_t, std::string>;
  check(Type::result(Type::u32(), Type::string()), Res::ok(5u), Val::ok(Val::u32(5)));
  check(Type::result(Type::u32(), Type::string()), Res::err("bad"), Val::err(Val::string("bad")));
  check(Type::result(nullptr, Type::string()), typed::Result<void, std::string>::ok(), Val::ok());
  check(Type::result(nullptr, nullptr), typed::Result<void, void>::err(), Val::err());
  check(Type::result(shape, nullptr), typed::Result<Shape, void>::ok(shape::Circle{-2}),
        Val::ok(Val::variant(0, Val::f32(-2))));
  const Res r = Res::err("x");
  EXPECT_TRUE(r.is_err());
  EXPECT_EQ(r.error(), "x");
  EXPECT_THROW((void)r.value(), std::bad_variant_access);

  const TypeRef perms = Type::flags({"read", "write", "exec"});
  check(perms, Perms::read | Perms::exec, Val::flags(0b101));
  check(perms, Perms{}, Val::flags(0));
  check(perms, Perms::all(), Val::flags(0b111));
  EXPECT_TRUE((Perms::read | Perms::write).has(Perms::write));
  EXPECT_FALSE((Perms::read | Perms::write).has(Perms::exec));
  EXPECT_EQ(~Perms::read, Perms::write | Perms::exec);  // bits beyond the labels stay clear
  EXPECT_FALSE((typed::matches<Perms>(*Type::flags({"read", "write"}))));
}

TEST(TypedLower, ValuesTheAbiForbidsAreRefused) {
  HostMemory mem(1 << 12, 8);
  AbiContext cx(&mem, CanonOptions{});
  uint64_t flat[2];
  EXPECT_ERROR((typed::Lower<Color, AddrWidth::I32>::lower_flat(cx, static_cast<Color>(3), flat)), ErrorKind::InvalidValue);
  EXPECT_ERROR((typed::Lower<char32_t, AddrWidth::I32>::lower_flat(cx, char32_t{0xD800}, flat)), ErrorKind::InvalidValue);
  EXPECT_ERROR((typed::Lower<std::string, AddrWidth::I32>::lower_flat(cx, std::string("\xFF"), flat)),
               ErrorKind::InvalidValue);
  // A flat enum or variant discriminant out of range is a trap, as lifting traps.
  const uint64_t bad[] = {3, 0};
  EXPECT_ERROR(typed::FlatLift<Color>::lift(cx, bad), ErrorKind::Trap);
  EXPECT_ERROR((typed::FlatLift<std::variant<uint8_t, uint16_t>>::lift(cx, bad)), ErrorKind::Trap);
  EXPECT_ERROR(typed::FlatLift<std::optional<uint8_t>>::lift(cx, bad), ErrorKind::Trap);
}

TEST(TypedLower, ArgumentsAreCheckedBeforeAnyIsLowered) {
  HostMemory mem(1 << 12, 8);
  AbiContext cx(&mem, CanonOptions{});
  // Bad values anywhere inside an argument.
  using Tup = std::tuple<std::string, std::vector<char32_t>>;
  EXPECT_ERROR(typed::check_arg(cx, Tup{"ok", {U'a', char32_t{0xDFFF}}}), ErrorKind::InvalidValue);
  EXPECT_ERROR(typed::check_arg(cx, std::optional<std::string>("\xC0\x80")), ErrorKind::InvalidValue);
  EXPECT_ERROR(typed::check_arg(cx, std::vector<Color>{Color::Red, static_cast<Color>(7)}), ErrorKind::InvalidValue);
  EXPECT_ERROR(typed::check_arg(cx, std::map<std::string, uint8_t>{{"\xFF", 1}}), ErrorKind::InvalidValue);
  typed::check_arg(cx, Tup{"fine", {U'a', U'\U0010FFFF'}});
  typed::check_arg(cx, Point{1, "p", 2});
  EXPECT_TRUE(mem.allocations().empty());  // checking allocates nothing
  // A view into the memory that lowering may move.
  const uint64_t at = mem.realloc(0, 0, 1, 4);
  std::memcpy(mem.bytes().data() + at, "abcd", 4);
  const std::string_view inside(reinterpret_cast<const char*>(mem.bytes().data() + at), 4);
  cx.refresh();
  EXPECT_ERROR(typed::check_arg(cx, inside), ErrorKind::Usage);
  EXPECT_ERROR(typed::check_arg(cx, std::vector<std::string_view>{"x", inside}), ErrorKind::Usage);
  typed::check_arg(cx, std::string_view("outside"));
}

TEST(TypedLower, NaNsAreLoweredCanonical) {
  HostMemory mem(1 << 12, 8);
  AbiContext cx(&mem, CanonOptions{});
  uint64_t flat[1];
  typed::Lower<float, AddrWidth::I32>::lower_flat(cx, std::bit_cast<float>(0x7fc00123u), flat);
  std::vector<uint64_t> dynamic;
  ValueAbi(Type::f32(), AddrWidth::I32).lower_flat(cx, Val::f32(std::bit_cast<float>(0x7fc00123u)), dynamic);
  EXPECT_EQ(flat[0], dynamic.at(0));
  CanonOptions raw;
  raw.canonicalize_nan = false;
  AbiContext raw_cx(&mem, raw);
  typed::Lower<float, AddrWidth::I32>::lower_flat(raw_cx, std::bit_cast<float>(0x7fc00123u), flat);
  EXPECT_EQ(flat[0], 0x7fc00123u);
}

}  // namespace
}  // namespace cmhost::abi
