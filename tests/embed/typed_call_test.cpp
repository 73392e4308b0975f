// Typed calls of exports (Instance::typed_func): signatures checked once at
// lookup, naming both types when they differ; results equal to the dynamic
// call's for every scalar type, with the lift's rules (truncation, any
// nonzero bool, checked chars, canonical NaNs); results through memory read
// by abi::typed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

class TypedCall : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Instance basics = Linker().instantiate(store, Component::from_file(engine, fixture("basics")));
  Instance values = Linker().instantiate(store, Component::from_file(engine, fixture("values")));

  // The dynamic call's single result.
  Val dynamic(const Instance& instance, const char* name, Val arg) {
    return instance.func(name).call(store, std::vector<Val>{std::move(arg)}).at(0);
  }
};

TEST_F(TypedCall, ScalarsEqualTheDynamicCall) {
  const auto add = basics.typed_func<uint32_t(uint32_t, uint32_t)>("add");
  EXPECT_EQ(add.call(store, 2, 40), 42u);
  EXPECT_EQ(add.call(store, 0xffffffffu, 2), 1u);
  for (bool v : {false, true})
    EXPECT_EQ(values.typed_func<bool(bool)>("echo-bool").call(store, v), dynamic(values, "echo-bool", Val::bool_(v)).as_bool());
  for (int8_t v : {int8_t{-128}, int8_t{-1}, int8_t{0}, int8_t{127}})
    EXPECT_EQ(values.typed_func<int8_t(int8_t)>("echo-s8").call(store, v), dynamic(values, "echo-s8", Val::s8(v)).as_s8());
  for (uint16_t v : {uint16_t{0}, uint16_t{0xffff}})
    EXPECT_EQ(values.typed_func<uint16_t(uint16_t)>("echo-u16").call(store, v), dynamic(values, "echo-u16", Val::u16(v)).as_u16());
  for (int32_t v : {std::numeric_limits<int32_t>::min(), -1, 7})
    EXPECT_EQ(values.typed_func<int32_t(int32_t)>("echo-s32").call(store, v), dynamic(values, "echo-s32", Val::s32(v)).as_s32());
  for (int64_t v : {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{1} << 40})
    EXPECT_EQ(values.typed_func<int64_t(int64_t)>("echo-s64").call(store, v), dynamic(values, "echo-s64", Val::s64(v)).as_s64());
  EXPECT_EQ(values.typed_func<uint64_t(uint64_t)>("echo-u64").call(store, ~uint64_t{0}), ~uint64_t{0});
  for (float v : {-0.0f, 1.5f, std::numeric_limits<float>::infinity()}) {
    const float got = values.typed_func<float(float)>("echo-f32").call(store, v);
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(dynamic(values, "echo-f32", Val::f32(v)).as_f32()));
  }
  const double nan = values.typed_func<double(double)>("echo-f64").call(store, std::bit_cast<double>(0x7ff0000000000123ull));
  EXPECT_EQ(std::bit_cast<uint64_t>(nan), std::bit_cast<uint64_t>(dynamic(values, "echo-f64", Val::f64(std::bit_cast<double>(0x7ff0000000000123ull))).as_f64()));
  EXPECT_EQ(values.typed_func<char32_t(char32_t)>("echo-char").call(store, U'\U0001F600'), U'\U0001F600');
}

TEST_F(TypedCall, ResultsAreLiftedAsTheDynamicCallLiftsThem) {
  // Core values wider than the result type: truncated; a bool from any nonzero value.
  EXPECT_EQ(values.typed_func<uint8_t(uint32_t)>("narrow-u8").call(store, 511), 255u);
  EXPECT_EQ(values.typed_func<int8_t(uint32_t)>("narrow-s8").call(store, 0xff), -1);
  EXPECT_TRUE(values.typed_func<bool(uint32_t)>("narrow-bool").call(store, 2));
  EXPECT_EQ(values.typed_func<uint8_t(uint32_t)>("narrow-u8").call(store, 511), dynamic(values, "narrow-u8", Val::u32(511)).as_u8());
  // A char argument that is not one is refused as the dynamic call refuses it.
  expect_error(ErrorKind::InvalidValue, [&] { values.typed_func<char32_t(char32_t)>("echo-char").call(store, 0xD800); });
  // A surrogate is no char: a trap, as in the dynamic call (which then
  // finds the instance poisoned, still a trap).
  expect_error(ErrorKind::Trap, [&] { values.typed_func<char32_t(uint32_t)>("narrow-char").call(store, 0xD800); });
  expect_error(ErrorKind::Trap, [&] { dynamic(values, "narrow-char", Val::u32(0xD800)); });
}

TEST_F(TypedCall, ResultsThroughMemoryAreReadTyped) {
  const auto pair = basics.typed_func<std::tuple<uint32_t, uint64_t>(uint32_t)>("pair");
  const auto [a, b] = pair.call(store, 7);
  const Val want = dynamic(basics, "pair", Val::u32(7));
  EXPECT_EQ(a, want.items()[0].as_u32());
  EXPECT_EQ(b, want.items()[1].as_u64());
}

TEST_F(TypedCall, StringsAndListsAreLoweredIntoTheCalleesMemory) {
  // `len` is lifted with UTF-16 strings: it returns the code units it got.
  EXPECT_EQ(basics.typed_func<uint32_t(std::string_view)>("len16").call(store, "h\u00e9llo \U0001D11E"), 8u);
  EXPECT_EQ(basics.typed_func<uint32_t(std::string_view)>("len16").call(store, "h\u00e9llo"),
            dynamic(basics, "len16", Val::string("h\u00e9llo")).as_u32());
  const auto echo = basics.typed_func<std::string(std::string_view)>("echo");
  EXPECT_EQ(echo.call(store, ""), "");
  EXPECT_EQ(echo.call(store, "h\u00e9llo \u2603"), dynamic(basics, "echo", Val::string("h\u00e9llo \u2603")).as_string());
  EXPECT_EQ(basics.typed_func<std::string(std::string)>("echo").call(store, std::string(5000, 'x')), std::string(5000, 'x'));
  expect_error(ErrorKind::InvalidValue, [&] { echo.call(store, std::string_view("\xff", 1)); }, "not valid UTF-8");
  // Into a component whose strings are UTF-16, and back out.
  const Instance utf16 = Linker().instantiate(store, Component::from_file(engine, fixture("values-nested-utf16")));
  const std::string text = "h\u00e9llo \u2603 \U0001D11E";
  EXPECT_EQ(utf16.typed_func<std::string(std::string_view)>("echo-string-latin1").call(store, text), text);
  // A list of scalars: the C guest sums it.
  const Instance strings = Linker().instantiate(store, Component::from_file(engine, fixture("strings")));
  const auto sum = strings.typed_func<uint64_t(std::vector<uint32_t>)>("cmhost:test/text#sum");
  EXPECT_EQ(sum.call(store, std::vector<uint32_t>{1, 2, 4294967295}), 4294967298u);
  EXPECT_EQ(sum.call(store, {}), 0u);
  const std::vector<uint32_t> many(1000, 3);
  EXPECT_EQ(strings.typed_func<uint64_t(std::span<const uint32_t>)>("cmhost:test/text#sum").call(store, many), 3000u);
}

TEST_F(TypedCall, AWrongSignatureIsRefusedNamingBothTypes) {
  const Error e = expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<uint32_t(float, uint32_t)>("add"); });
  const std::string message = e.what();
  EXPECT_NE(message.find("`add` is (func (param \"a\" u32) (param \"b\" u32) (result u32))"), std::string::npos) << message;
  EXPECT_NE(message.find("the C++ signature unsigned int (float, unsigned int) does not match it: parameter 1 (`a`) is u32"),
            std::string::npos)
      << message;
  expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<uint32_t(uint32_t)>("add"); }, "takes 2 parameters");
  expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<void(uint32_t, uint32_t)>("add"); }, "returns u32");
  expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<int32_t(uint32_t, uint32_t)>("add"); }, "the result is u32");
  expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<uint32_t(uint32_t)>("nope"); }, "no exported function");
  expect_error(ErrorKind::Usage, [&] { (void)basics.typed_func<uint32_t(std::vector<uint32_t>)>("len16"); },
               "parameter 1 (`s`) is string");
  using U = uint32_t;
  expect_error(ErrorKind::Usage,
               [&] { (void)basics.typed_func<U(U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U)>("sum17"); },
               "passed in memory");
}

// ---- Wrapped host functions (Linker::func_wrap) ----

struct Log {
  std::vector<std::string> lines;
};

// tests/components/imports.wat: `run(msg)` logs `msg` through the root
// import `log: func(msg: string)` and returns `double(21)` of the interface
// `cmhost:test/host@0.1.0`.
class FuncWrap : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("imports"));
};

TEST_F(FuncWrap, CallablesWithCArgumentsAndTheCallersContext) {
  Store store(engine, Log{});
  Linker linker;
  linker.func_wrap("log", [](Caller& caller, std::string_view msg) { caller.data<Log>().lines.emplace_back(msg); });
  linker.func_wrap("cmhost:test/host@0.1.0#double", [](uint32_t x) { return 2 * x; });
  const Instance instance = linker.instantiate(store, component);
  EXPECT_EQ(instance.func("run").call(store, std::vector<Val>{Val::string("h\u00e9llo")})[0].as_u32(), 42u);
  EXPECT_EQ(store.data<Log>().lines, (std::vector<std::string>{"h\u00e9llo"}));
}

TEST_F(FuncWrap, AFunctionPointerAndAnOwnedStringParameter) {
  Store store(engine);
  Linker linker;
  static std::string last;
  linker.func_wrap("log", +[](std::string msg) { last = std::move(msg); });
  linker.func_wrap("cmhost:test/host@0.1.0#double", +[](uint32_t x) -> uint32_t { return x + x; });
  const Instance instance = linker.instantiate(store, component);
  EXPECT_EQ(instance.func("run").call(store, std::vector<Val>{Val::string("x")})[0].as_u32(), 42u);
  EXPECT_EQ(last, "x");
}

TEST_F(FuncWrap, OneCallableServesEveryInstance) {
  Store store(engine);
  Linker linker;
  linker.func_wrap("log", [](std::string_view) {});
  linker.func_wrap("cmhost:test/host@0.1.0#double", [calls = 0u](uint32_t x) mutable { return x + ++calls; });
  const Instance first = linker.instantiate(store, component);
  const Instance second = linker.instantiate(store, component);
  EXPECT_EQ(first.func("run").call(store, std::vector<Val>{Val::string("a")})[0].as_u32(), 22u);
  EXPECT_EQ(second.func("run").call(store, std::vector<Val>{Val::string("b")})[0].as_u32(), 23u);  // the same counter
}

// Views point into guest memory, which a typed call's post-return frees.
static_assert(abi::typed::holds_view_v<std::string_view>);
static_assert(abi::typed::holds_view_v<std::optional<std::vector<std::string_view>>>);
static_assert(!abi::typed::holds_view_v<std::tuple<uint32_t, std::string>>);

TEST_F(FuncWrap, AWrongSignatureIsALinkErrorNamingBothTypes) {
  Store store(engine);
  Linker linker;
  linker.func_wrap("log", [](std::string_view) {});
  linker.func_wrap("cmhost:test/host@0.1.0#double", [](uint64_t x) { return x; });
  const Error e = expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); });
  const std::string message = e.what();
  EXPECT_NE(message.find("import `cmhost:test/host@0.1.0#double` is (func (param \"x\" u32) (result u32)); the C++ "
                         "function unsigned long (unsigned long) does not fit it: parameter 1 (`x`) is u32"),
            std::string::npos)
      << message;
  Linker arity;
  arity.func_wrap("log", [](std::string_view, uint32_t) {});
  expect_error(ErrorKind::Link, [&] { arity.instantiate(store, component); }, "the import takes 1 parameters");
  Linker result;
  result.func_wrap("log", [](std::string_view) { return 1u; });
  expect_error(ErrorKind::Link, [&] { result.instantiate(store, component); }, "the import returns nothing");
}

}  // namespace
}  // namespace cmhost
