// Typed calls of every value type (tests/components/values.wat echoes its
// argument): the typed call, with C++ arguments and result, returns what the
// dynamic call returns for the same value written as a Val.
#include <gtest/gtest.h>

#include <array>
#include <bitset>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace typed_values {

enum class Color : uint8_t { Red, Green, Blue };
enum class Big : uint16_t {};  // 257 cases

struct Rec {
  bool flag;
  int64_t big;
  std::string name;
  float ratio;
  int8_t small;
  std::optional<uint16_t> maybe;
  bool operator==(const Rec&) const = default;
};

struct Entry {
  uint32_t id;
  std::string name;
  std::optional<double> score;
  bool operator==(const Entry&) const = default;
};

using Var = std::variant<int32_t, int64_t, float, double, std::string, uint8_t, std::monostate>;
using Tup = std::tuple<uint8_t, float, std::string, int64_t, char32_t>;

}  // namespace typed_values

namespace cmhost::abi::typed {
template <>
struct Enum<typed_values::Color> {
  static constexpr size_t count = 3;
};
template <>
struct Enum<typed_values::Big> {
  static constexpr size_t count = 257;
};
template <>
struct Record<typed_values::Rec> {
  using R = typed_values::Rec;
  static constexpr auto fields = std::make_tuple(field("flag", &R::flag), field("big", &R::big), field("name", &R::name),
                                                 field("ratio", &R::ratio), field("small", &R::small),
                                                 field("maybe", &R::maybe));
};
template <>
struct Record<typed_values::Entry> {
  using E = typed_values::Entry;
  static constexpr auto fields = std::make_tuple(field("id", &E::id), field("name", &E::name), field("score", &E::score));
};
}  // namespace cmhost::abi::typed

namespace cmhost {
namespace {

using namespace typed_values;

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

Val rec_val(const Rec& r) {
  return Val::record({Val::bool_(r.flag), Val::s64(r.big), Val::string(r.name), Val::f32(r.ratio), Val::s8(r.small),
                      r.maybe ? Val::some(Val::u16(*r.maybe)) : Val::none()});
}
Val entry_val(const Entry& e) {
  return Val::record({Val::u32(e.id), Val::string(e.name), e.score ? Val::some(Val::f64(*e.score)) : Val::none()});
}
Val var_val(const Var& v) {
  switch (v.index()) {
    case 0: return Val::variant(0, Val::s32(std::get<0>(v)));
    case 1: return Val::variant(1, Val::s64(std::get<1>(v)));
    case 2: return Val::variant(2, Val::f32(std::get<2>(v)));
    case 3: return Val::variant(3, Val::f64(std::get<3>(v)));
    case 4: return Val::variant(4, Val::string(std::get<4>(v)));
    case 5: return Val::variant(5, Val::u8(std::get<5>(v)));
    default: return Val::variant(6);
  }
}
Val tup_val(const Tup& t) {
  return Val::tuple({Val::u8(std::get<0>(t)), Val::f32(std::get<1>(t)), Val::string(std::get<2>(t)),
                     Val::s64(std::get<3>(t)), Val::char_(std::get<4>(t))});
}
template <class T, class F>
Val list_val(const std::vector<T>& items, F to_val) {
  std::vector<Val> out;
  for (const auto& i : items) out.push_back(to_val(i));
  return Val::list(std::move(out));
}

class TypedValues : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Instance values = Linker().instantiate(store, Component::from_file(engine, fixture("values")));

  // `name` echoes its argument: the typed call returns `value`, the dynamic
  // call `val` (the same value as a Val), and both see each other's
  // argument come back the same.
  template <class T>
  void echo(const char* name, const T& value, const Val& val) {
    SCOPED_TRACE(name);
    const auto typed = values.typed_func<T(T)>(name);
    EXPECT_EQ(typed.call(store, value), value);
    EXPECT_EQ(values.func(name).call(store, std::vector<Val>{val}).at(0), val);
  }
};

TEST_F(TypedValues, StringsAndListsOfScalars) {
  for (const char* name : {"echo-string", "echo-string16", "echo-string-latin1"}) {
    echo<std::string>(name, "h\u00e9llo \u2603 \U0001D11E", Val::string("h\u00e9llo \u2603 \U0001D11E"));
    echo<std::string>(name, "", Val::string(""));
  }
  echo<std::vector<uint8_t>>("bytes", {0, 1, 255}, Val::bytes(std::vector<uint8_t>{0, 1, 255}));
  echo<std::vector<int8_t>>("list-s8", {-128, 127}, Val::list({Val::s8(-128), Val::s8(127)}));
  echo<std::vector<int16_t>>("list-s16", {-2, 3}, Val::list({Val::s16(-2), Val::s16(3)}));
  echo<std::vector<uint16_t>>("list-u16", {65535}, Val::list({Val::u16(65535)}));
  echo<std::vector<int32_t>>("list-s32", {-1, 0}, Val::list({Val::s32(-1), Val::s32(0)}));
  echo<std::vector<uint32_t>>("list-u32", {}, Val::list({}));
  echo<std::vector<int64_t>>("list-s64", {int64_t{-1} << 60}, Val::list({Val::s64(int64_t{-1} << 60)}));
  echo<std::vector<uint64_t>>("list-u64", {~uint64_t{0}}, Val::list({Val::u64(~uint64_t{0})}));
  echo<std::vector<float>>("list-f32", {0.5f, -1.0f}, Val::list({Val::f32(0.5f), Val::f32(-1.0f)}));
  echo<std::vector<double>>("list-f64", {1e300}, Val::list({Val::f64(1e300)}));
  echo<std::vector<char32_t>>("list-char", {U'a', U'\U0001F600'}, Val::list({Val::char_(U'a'), Val::char_(U'\U0001F600')}));
  echo<std::vector<std::string>>("list-string", {"a", "", "\u2603"},
                                 Val::list({Val::string("a"), Val::string(""), Val::string("\u2603")}));
  echo<std::vector<std::string>>("list-string16", {"x\u00e9"}, Val::list({Val::string("x\u00e9")}));
  echo<std::vector<std::string>>("list-string-latin1", {"\u2603", "ab"},
                                 Val::list({Val::string("\u2603"), Val::string("ab")}));
  // Bools lower from a std::vector<bool> (a byte per bit) or a span of bools.
  echo<std::vector<bool>>("list-bool", {true, false, true},
                          Val::list({Val::bool_(true), Val::bool_(false), Val::bool_(true)}));
  const bool bits[] = {true, false, true};
  EXPECT_EQ((values.typed_func<std::vector<bool>(std::span<const bool>)>("list-bool").call(store, bits)),
            (std::vector<bool>{true, false, true}));
}

TEST_F(TypedValues, RecordsTuplesAndVariants) {
  const Rec rec{true, int64_t{-1} << 40, "n\u00e4me", 0.25f, -8, 513};
  echo<Rec>("echo-rec", rec, rec_val(rec));
  const Rec bare{false, 0, "", -0.0f, 0, std::nullopt};
  echo<Rec>("echo-rec", bare, rec_val(bare));
  const Entry entry{7, "e", 2.5};
  echo<Entry>("echo-entry", entry, entry_val(entry));
  echo<Entry>("echo-entry", Entry{0, "", std::nullopt}, entry_val(Entry{0, "", std::nullopt}));
  const Tup tup{200, 1.5f, "t\u00fcp", -99, U'\u2603'};
  echo<Tup>("echo-tup", tup, tup_val(tup));
  for (const Var& v : {Var(std::in_place_index<0>, -5), Var(std::in_place_index<1>, int64_t{1} << 62),
                       Var(std::in_place_index<2>, 3.5f), Var(std::in_place_index<3>, -0.125),
                       Var(std::in_place_index<4>, "text"), Var(std::in_place_index<5>, uint8_t{255}),
                       Var(std::in_place_index<6>)})
    echo<Var>("echo-var", v, var_val(v));
  const std::vector<Rec> recs{rec, bare};
  echo<std::vector<Rec>>("list-rec", recs, list_val(recs, rec_val));
  const std::vector<Tup> tups{tup};
  echo<std::vector<Tup>>("list-tup", tups, list_val(tups, tup_val));
  const std::vector<Var> vars{Var(std::in_place_index<4>, "s"), Var(std::in_place_index<6>), Var(std::in_place_index<2>, 1.0f)};
  echo<std::vector<Var>>("list-var", vars, list_val(vars, var_val));
}

TEST_F(TypedValues, OptionsAndResults) {
  echo<std::optional<uint32_t>>("echo-opt-u32", 42u, Val::some(Val::u32(42)));
  echo<std::optional<uint32_t>>("echo-opt-u32", std::nullopt, Val::none());
  using OptOpt = std::optional<std::optional<int8_t>>;
  echo<OptOpt>("echo-opt-opt", OptOpt(std::optional<int8_t>()), Val::some(Val::none()));
  echo<OptOpt>("echo-opt-opt", OptOpt(std::optional<int8_t>(-3)), Val::some(Val::some(Val::s8(-3))));
  echo<OptOpt>("echo-opt-opt", OptOpt(), Val::none());
  echo<std::optional<std::string>>("echo-opt-string", "o", Val::some(Val::string("o")));
  using Res = std::variant<uint32_t, std::string>;
  echo<Res>("echo-result", Res(std::in_place_index<0>, 9u), Val::ok(Val::u32(9)));
  echo<Res>("echo-result", Res(std::in_place_index<1>, "bad"), Val::err(Val::string("bad")));
  using ErrOnly = std::variant<std::monostate, std::string>;
  echo<ErrOnly>("echo-result-err", ErrOnly(std::in_place_index<0>), Val::ok());
  echo<ErrOnly>("echo-result-err", ErrOnly(std::in_place_index<1>, "e"), Val::err(Val::string("e")));
  using ResF32 = std::variant<float, std::monostate>;
  echo<ResF32>("echo-result-f32", ResF32(std::in_place_index<0>, 2.0f), Val::ok(Val::f32(2.0f)));
  echo<ResF32>("echo-result-f32", ResF32(std::in_place_index<1>), Val::err());
  using ResF64 = std::variant<double, uint8_t>;
  echo<ResF64>("echo-result-f64-u8", ResF64(std::in_place_index<0>, -1.5), Val::ok(Val::f64(-1.5)));
  echo<ResF64>("echo-result-f64-u8", ResF64(std::in_place_index<1>, uint8_t{7}), Val::err(Val::u8(7)));
  using Nested = std::variant<std::vector<std::string>, Var>;
  echo<Nested>("echo-nested-result", Nested(std::in_place_index<0>, std::vector<std::string>{"a", "b"}),
               Val::ok(Val::list({Val::string("a"), Val::string("b")})));
  echo<Nested>("echo-nested-result", Nested(std::in_place_index<1>, Var(std::in_place_index<1>, int64_t{-7})),
               Val::err(Val::variant(1, Val::s64(-7))));
  using Unit = std::variant<std::monostate, std::monostate>;
  echo<Unit>("echo-unit-result", Unit(std::in_place_index<1>), Val::err());
  echo<Unit>("echo-unit-result", Unit(std::in_place_index<0>), Val::ok());
  using ListRes = std::vector<Res>;
  echo<ListRes>("list-results", {Res(std::in_place_index<1>, "x"), Res(std::in_place_index<0>, 1u)},
                Val::list({Val::err(Val::string("x")), Val::ok(Val::u32(1))}));
  echo<std::vector<OptOpt>>("list-opt-opt", {OptOpt(), OptOpt(std::optional<int8_t>(1))},
                            Val::list({Val::none(), Val::some(Val::some(Val::s8(1)))}));
  const std::vector<std::optional<Entry>> entries{Entry{1, "one", std::nullopt}, std::nullopt};
  echo<std::vector<std::optional<Entry>>>("list-entries", entries,
                                          Val::list({Val::some(entry_val(*entries[0])), Val::none()}));
}

TEST_F(TypedValues, EnumsFlagsAndFixedLengthLists) {
  echo<Color>("echo-color", Color::Blue, Val::enum_(2));
  echo<Color>("echo-color", Color::Red, Val::enum_(0));
  echo<Big>("echo-big", static_cast<Big>(256), Val::enum_(256));
  echo<std::bitset<3>>("echo-perms", std::bitset<3>(0b110), Val::flags(0b110));
  echo<std::bitset<12>>("echo-mid", std::bitset<12>(0x803), Val::flags(0x803));
  echo<std::bitset<32>>("echo-wide", std::bitset<32>(0xffffffffu), Val::flags(0xffffffffu));
  echo<std::vector<Color>>("list-color", {Color::Green, Color::Blue}, Val::list({Val::enum_(1), Val::enum_(2)}));
  echo<std::vector<Big>>("list-big", {static_cast<Big>(0), static_cast<Big>(255)},
                         Val::list({Val::enum_(0), Val::enum_(255)}));
  echo<std::vector<std::bitset<3>>>("list-perms", {std::bitset<3>(1), std::bitset<3>(7)},
                                    Val::list({Val::flags(1), Val::flags(7)}));
  echo<std::vector<std::bitset<12>>>("list-mid", {std::bitset<12>(0xfff)}, Val::list({Val::flags(0xfff)}));
  echo<std::vector<std::bitset<32>>>("list-wide", {std::bitset<32>(1u << 31)}, Val::list({Val::flags(1u << 31)}));
  echo<std::array<uint8_t, 4>>("echo-u8x4", {1, 2, 3, 255},
                               Val::list({Val::u8(1), Val::u8(2), Val::u8(3), Val::u8(255)}));
  echo<std::array<std::string, 2>>("echo-string-x2", {"a", "\u2603"}, Val::list({Val::string("a"), Val::string("\u2603")}));
  using Quad = std::array<uint8_t, 4>;
  echo<std::vector<Quad>>("list-fixed", {Quad{1, 2, 3, 4}, Quad{0, 0, 0, 9}},
                          Val::list({Val::list({Val::u8(1), Val::u8(2), Val::u8(3), Val::u8(4)}),
                                     Val::list({Val::u8(0), Val::u8(0), Val::u8(0), Val::u8(9)})}));
  using Lists = std::vector<std::vector<std::string>>;
  echo<Lists>("list-lists", {{"a"}, {}, {"b", "c"}},
              Val::list({Val::list({Val::string("a")}), Val::list({}), Val::list({Val::string("b"), Val::string("c")})}));
}

TEST_F(TypedValues, WrongShapesAndValuesAreRefused) {
  expect_error(ErrorKind::Usage, [&] { (void)values.typed_func<Color(Color)>("echo-big"); }, "enum");
  expect_error(ErrorKind::Usage, [&] { (void)values.typed_func<std::bitset<4>(std::bitset<4>)>("echo-perms"); }, "flags");
  expect_error(ErrorKind::Usage, [&] { (void)values.typed_func<std::array<uint8_t, 3>(std::array<uint8_t, 3>)>("echo-u8x4"); },
               "parameter 1");
  // Arguments whose core values exceed 16 are passed in memory: not typed yet.
  expect_error(ErrorKind::Usage,
               [&] { (void)values.typed_func<std::array<uint32_t, 17>(std::array<uint32_t, 17>)>("echo-u32x17"); },
               "passed in memory");
  // An enum value outside the enum is refused before the call, as the dynamic call refuses it.
  expect_error(ErrorKind::InvalidValue, [&] { values.typed_func<Color(Color)>("echo-color").call(store, static_cast<Color>(3)); });
  expect_error(ErrorKind::InvalidValue, [&] { values.func("echo-color").call(store, std::vector<Val>{Val::enum_(3)}); });
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

struct Counter;  // the tag of tests/components/resources.wat's resource
struct Other;

class TypedHandles : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Instance counters = Linker().instantiate(store, Component::from_file(engine, fixture("resources")));
  using Own = abi::typed::Own<Counter>;
  using Borrow = abi::typed::Borrow<Counter>;

  uint32_t drops() { return counters.typed_func<uint32_t()>("drops").call(store); }
};

TEST_F(TypedHandles, OwnAndBorrowHandlesMoveAsInTheDynamicCall) {
  const Own typed = counters.typed_func<Own(uint32_t)>("make").call(store, 7);
  const Val dynamic = counters.func("make").call(store, std::vector<Val>{Val::u32(8)}).at(0);
  ASSERT_EQ(dynamic.kind(), abi::ValKind::Own);
  // Both are handles of the store's host table, usable either way.
  const auto value = counters.typed_func<uint32_t(Borrow)>("value");
  EXPECT_EQ(value.call(store, Borrow{typed.handle}), 7u);
  EXPECT_EQ(value.call(store, Borrow{dynamic.as_handle()}), 8u);
  EXPECT_EQ(counters.func("value").call(store, std::vector<Val>{Val::borrow(typed.handle)}).at(0), Val::u32(7));
  // An own handle passed in moves to the guest, which drops it.
  const Own bumped = counters.typed_func<Own(Own)>("bump").call(store, typed);
  EXPECT_EQ(value.call(store, Borrow{bumped.handle}), 8u);
  counters.typed_func<void(Own)>("consume").call(store, bumped);
  EXPECT_EQ(drops(), 2u);  // the bumped-from and the consumed counter
  // Moved away: the host holds that handle no more, typed or dynamic.
  expect_error(ErrorKind::InvalidValue, [&] { value.call(store, Borrow{bumped.handle}); });
  expect_error(ErrorKind::InvalidValue,
               [&] { counters.func("value").call(store, std::vector<Val>{Val::borrow(bumped.handle)}); });
  store.drop(dynamic);
  EXPECT_EQ(drops(), 3u);
}

TEST_F(TypedHandles, ATagStandsForOneResourceType) {
  expect_error(ErrorKind::Usage, [&] { (void)counters.typed_func<uint32_t(abi::typed::Own<Other>)>("value"); },
               "parameter 1");
  expect_error(ErrorKind::Usage, [&] { (void)counters.typed_func<abi::typed::Borrow<Counter>(uint32_t)>("make"); },
               "the result is own");
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// tests/components/values-host.wat forwards its core arguments to host
// imports: here the imports are C++ callables (Linker::func_wrap), which
// lift what the guest lowered with no Val and lower their results into the
// guest's memory; the same calls with Val host functions (define_func) are
// the reference.
class FuncWrapValues : public ::testing::Test {
 protected:
  using Many = std::tuple<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t, float, double,
                          char32_t, bool, std::string, std::vector<uint16_t>, std::optional<uint8_t>>;
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("values-host"));
  std::vector<Var> vars;
  std::vector<std::vector<std::string>> lists;
  std::vector<Many> manys;
  Store store{engine};
  Instance instance = make_linker().instantiate(store, component);

  Linker make_linker() {
    Linker linker;
    linker.func_wrap("host-var", [this](Var v) {
      vars.push_back(v);
      return v;
    });
    linker.func_wrap("host-strings", [this](const std::vector<std::string>& v) {
      lists.push_back(v);
      return v;
    });
    linker.func_wrap("host-many", [this](uint8_t a, int8_t b, uint16_t c, int16_t d, uint32_t e, int32_t f, uint64_t g,
                                         int64_t h, float i, double j, char32_t k, bool l, std::string m,
                                         std::vector<uint16_t> n, std::optional<uint8_t> o) {
      manys.emplace_back(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o);
      return manys.back();
    });
    return linker;
  }
  Val call(const char* name, std::vector<Val> args) { return instance.func(name).call(store, args).at(0); }
};

TEST_F(FuncWrapValues, VariantsFromJoinedSlots) {
  for (const Var& v : {Var(std::in_place_index<0>, -5), Var(std::in_place_index<1>, int64_t{-1} << 62),
                       Var(std::in_place_index<2>, 3.5f), Var(std::in_place_index<3>, -0.125),
                       Var(std::in_place_index<4>, "text \u2603"), Var(std::in_place_index<5>, uint8_t{255}),
                       Var(std::in_place_index<6>)}) {
    vars.clear();
    EXPECT_EQ(call("via-var", {var_val(v)}), var_val(v));
    ASSERT_EQ(vars.size(), 1u);
    EXPECT_EQ(vars[0], v);
  }
  // Bits a guest may leave in a joined slot: truncated, NaNs canonical, as
  // the Val path lifts them (tests/runtime/values_test.cpp, ValuesHost).
  vars.clear();
  EXPECT_EQ(call("raw-var", {Val::u32(2), Val::u64(0xDEADBEEF3FC00000ull), Val::u32(0)}),
            Val::variant(2, Val::f32(1.5f)));
  EXPECT_EQ(call("raw-var", {Val::u32(0), Val::u64(0xFFFFFFFF80000000ull), Val::u32(0)}),
            Val::variant(0, Val::s32(INT32_MIN)));
  EXPECT_EQ(call("raw-var", {Val::u32(5), Val::u64(0x1FF), Val::u32(0)}), Val::variant(5, Val::u8(0xFF)));
  expect_error(ErrorKind::Trap, [&] { call("raw-var", {Val::u32(7), Val::u64(0), Val::u32(0)}); }, "discriminant 7");
  EXPECT_EQ(vars.size(), 3u);
}

TEST_F(FuncWrapValues, ListsOfStringsBothWays) {
  std::vector<std::string> texts;
  for (int i = 0; i < 3000; ++i) texts.push_back(std::string(static_cast<size_t>(i % 50), 'x') + "\u2603");
  for (const auto& v : {std::vector<std::string>{}, std::vector<std::string>{"", "a", "\U0001D11E"}, texts}) {
    lists.clear();
    std::vector<Val> items;
    for (const auto& s : v) items.push_back(Val::string(s));
    EXPECT_EQ(call("via-strings", {Val::list(items)}), Val::list(items));
    ASSERT_EQ(lists.size(), 1u);
    EXPECT_EQ(lists[0], v);
  }
}

TEST_F(FuncWrapValues, SpilledArgumentsAndAResultThroughTheReturnPointer) {
  const uint16_t shorts[] = {0, 1, UINT16_MAX};
  const std::vector<Val> args = {Val::u8(UINT8_MAX), Val::s8(INT8_MIN), Val::u16(UINT16_MAX), Val::s16(INT16_MIN),
                                 Val::u32(UINT32_MAX), Val::s32(INT32_MIN), Val::u64(UINT64_MAX),
                                 Val::s64(INT64_MIN), Val::f32(-0.0f), Val::f64(0.1), Val::char_(0x10FFFF),
                                 Val::bool_(true), Val::string("spilled \u2603"),
                                 Val::packed_list(abi::ValKind::U16, shorts, 3), Val::some(Val::u8(0))};
  EXPECT_EQ(call("via-many", args), Val::tuple(args));
  ASSERT_EQ(manys.size(), 1u);
  EXPECT_EQ(std::get<12>(manys[0]), "spilled \u2603");
  EXPECT_EQ(std::get<13>(manys[0]), (std::vector<uint16_t>{0, 1, UINT16_MAX}));
  EXPECT_EQ(std::get<10>(manys[0]), char32_t{0x10FFFF});
}

// The host calls its own wrapped functions with Vals (a component exports
// them again): the arguments are lowered into scratch memory as a guest
// lowers them, and the result lifted from it.
TEST(FuncWrapFromTheHost, ValsGoThroughScratchMemory) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  Linker linker;
  std::vector<std::string> logged;
  linker.func_wrap("echo-strings", [](std::vector<std::string> v) { return v; });
  linker.func_wrap("pair", [](uint32_t a, std::string_view b) { return std::tuple<uint32_t, std::string>(a + 1, b); });
  linker.func_wrap("count", [](std::vector<uint16_t> v) { return static_cast<uint32_t>(v.size()); });
  linker.func_wrap("log", [&](Caller& caller, const std::string& msg) {
    EXPECT_FALSE(caller.from_guest());
    EXPECT_TRUE(caller.memory().empty());  // the host's call has no guest memory
    logged.push_back(msg);
  });
  const Error e = expect_error(ErrorKind::Link, [&] {
    linker.instantiate(store, Component::from_file(engine, fixture("reexport")));
  });
  EXPECT_NE(std::string(e.what()).find("import `count` is (func (param \"v\" (list u8)) (result u32))"),
            std::string::npos)
      << e.what();
  EXPECT_NE(std::string(e.what()).find("parameter 1 (`v`) is list<u8>"), std::string::npos) << e.what();
  linker = Linker();
  linker.func_wrap("echo-strings", [](std::vector<std::string> v) { return v; });
  linker.func_wrap("pair", [](uint32_t a, std::string_view b) { return std::tuple<uint32_t, std::string>(a + 1, b); });
  linker.func_wrap("log", [&](Caller& caller, const std::string& msg) {
    EXPECT_FALSE(caller.from_guest());
    EXPECT_TRUE(caller.memory().empty());
    logged.push_back(msg);
  });
  linker.func_wrap("count", [](std::vector<uint8_t> v) { return static_cast<uint32_t>(v.size()); });
  uint32_t ticks = 0;
  linker.func_wrap("tick", [&ticks] { return ++ticks; });  // no parameters
  const Instance instance = linker.instantiate(store, Component::from_file(engine, fixture("reexport")));
  const Val strings = Val::list({Val::string("a"), Val::string(""), Val::string("\u2603")});
  EXPECT_EQ(instance.func("echo-strings").call(store, std::vector<Val>{strings}).at(0), strings);
  EXPECT_EQ(instance.func("pair").call(store, std::vector<Val>{Val::u32(41), Val::string("b")}).at(0),
            Val::tuple({Val::u32(42), Val::string("b")}));
  EXPECT_EQ(instance.func("count").call(store, std::vector<Val>{Val::bytes(std::vector<uint8_t>(300, 1))}).at(0),
            Val::u32(300));
  EXPECT_TRUE(instance.func("log").call(store, std::vector<Val>{Val::string("hi")}).empty());
  EXPECT_EQ(logged, std::vector<std::string>{"hi"});
  EXPECT_EQ(instance.func("tick").call(store, {}).at(0), Val::u32(1));
  EXPECT_EQ(instance.func("tick").call(store, {}).at(0), Val::u32(2));
  // Typed calls are for lifted exports, and say so.
  expect_error(ErrorKind::Usage, [&] { (void)instance.typed_func<uint32_t(std::vector<uint8_t>)>("count"); },
               "host function");
}

}  // namespace
}  // namespace cmhost
