// Every value type through headers `cmhost bindgen` generated from
// tests/bindgen/values/values.wit: a C++ value goes into the guest through
// the generated Guest (lowered), back out to the generated Host the test
// implements (lifted, then lowered as the host's answer), and back to the
// test (lifted). What comes back must equal what went in, and the host must
// have seen it too.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "values.hpp"

namespace {

namespace echo = cmhost_::values::echo;
namespace types = cmhost_::values::types;
using cmhost::abi::typed::Result;

// Answers every call with its argument, counting the calls.
class EchoHost final : public echo::Host {
 public:
  int calls = 0;
  std::string last_note;

  types::Scalars echo_scalars(cmhost::Caller&, types::Scalars s) override { return seen(std::move(s)); }
  std::vector<uint16_t> echo_list(cmhost::Caller&, std::vector<uint16_t> l) override { return seen(std::move(l)); }
  std::vector<std::string> echo_strings(cmhost::Caller&, std::vector<std::string> l) override { return seen(std::move(l)); }
  std::array<uint8_t, 4> echo_fixed(cmhost::Caller&, std::array<uint8_t, 4> a) override { return seen(a); }
  types::Shape echo_shape(cmhost::Caller&, types::Shape s) override { return seen(std::move(s)); }
  std::vector<types::Shape> echo_shapes(cmhost::Caller&, std::vector<types::Shape> l) override { return seen(std::move(l)); }
  types::Color echo_color(cmhost::Caller&, types::Color c) override { return seen(c); }
  types::Perms echo_perms(cmhost::Caller&, types::Perms p) override { return seen(p); }
  std::optional<types::Point> echo_option(cmhost::Caller&, std::optional<types::Point> o) override { return seen(o); }
  Result<types::Id, std::string> echo_result(cmhost::Caller&, Result<types::Id, std::string> r) override { return seen(std::move(r)); }
  Result<void, void> echo_unit_result(cmhost::Caller&, Result<void, void> r) override { return seen(r); }
  std::tuple<uint8_t, std::string, double> echo_tuple(cmhost::Caller&, std::tuple<uint8_t, std::string, double> t) override {
    return seen(std::move(t));
  }
  std::map<std::string, uint32_t> echo_map(cmhost::Caller&, std::map<std::string, uint32_t> m) override { return seen(std::move(m)); }
  types::Points echo_points(cmhost::Caller&, types::Points p) override { return seen(std::move(p)); }
  types::Id echo_id(cmhost::Caller&, types::Id i) override { return seen(i); }
  std::vector<bool> echo_bools(cmhost::Caller&, std::vector<bool> l) override { return seen(std::move(l)); }
  types::Switches echo_switches(cmhost::Caller&, types::Switches s) override { return seen(std::move(s)); }
  std::optional<std::vector<bool>> echo_maybe_bools(cmhost::Caller&, std::optional<std::vector<bool>> o) override {
    return seen(std::move(o));
  }
  cmhost::abi::typed::ErrorContext echo_error(cmhost::Caller&, cmhost::abi::typed::ErrorContext e) override {
    return seen(e);
  }
  void note(cmhost::Caller&, uint32_t a, std::string b, std::optional<types::Color> c) override {
    ++calls;
    last_note = std::to_string(a) + " " + b + " " + (c ? std::to_string(static_cast<int>(*c)) : "none");
  }

 private:
  template <class T>
  T seen(T value) {
    ++calls;
    return value;
  }
};

class BindgenRoundTrip : public ::testing::Test {
 protected:
  BindgenRoundTrip() {
    echo::add_to_linker(linker, host);
    instance.emplace(cmhost_::values::values::Values::instantiate(
        store,
        cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/bindgen-values.wasm"),
        linker));
  }
  const echo::Guest& guest() const { return instance->echo(); }

  // `value` through the guest and the host and back.
  template <class T, class Call>
  void round_trip(const T& value, Call call) {
    const int before = host->calls;
    EXPECT_EQ(call(value), value);
    EXPECT_EQ(host->calls, before + 1) << "the host did not see the value";
  }

  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  cmhost::Store store{engine};
  cmhost::Linker linker;
  std::shared_ptr<EchoHost> host = std::make_shared<EchoHost>();
  std::optional<cmhost_::values::values::Values> instance;
};

TEST_F(BindgenRoundTrip, Scalars) {
  types::Scalars s{true, -8, 250, -30000, 65000, -2000000000, 4000000000u, int64_t{-1} << 62, ~uint64_t{0},
                   1.25f, -1e300, U'\U0001F600', "h\xC3\xA9llo"};
  round_trip(s, [&](const auto& v) { return guest().echo_scalars(store, v); });
  s.text.clear();
  s.letter = U'a';
  round_trip(s, [&](const auto& v) { return guest().echo_scalars(store, v); });
}

TEST_F(BindgenRoundTrip, ListsStringsFixedListsAndMaps) {
  round_trip(std::vector<uint16_t>{1, 0, 65535}, [&](const auto& v) { return guest().echo_list(store, v); });
  round_trip(std::vector<uint16_t>{}, [&](const auto& v) { return guest().echo_list(store, v); });
  round_trip(std::vector<std::string>{"a", "", "\xE2\x98\x83", std::string(1000, 'x')},
             [&](const auto& v) { return guest().echo_strings(store, v); });
  round_trip(std::array<uint8_t, 4>{1, 2, 254, 255}, [&](const auto& v) { return guest().echo_fixed(store, v); });
  round_trip(std::map<std::string, uint32_t>{{"one", 1}, {"two", 2}, {"", 0}},
             [&](const auto& v) { return guest().echo_map(store, v); });
  round_trip(types::Points{{1, -1}, {0, 0}, {INT32_MIN, INT32_MAX}},
             [&](const auto& v) { return guest().echo_points(store, v); });
}

// std::vector<bool> packs its bits: it crosses a byte per bool both ways,
// alone, inside a record and inside an option.
TEST_F(BindgenRoundTrip, BoolLists) {
  std::vector<bool> many(1000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = i % 3 == 0;
  for (const std::vector<bool>& l : {std::vector<bool>{true, false, true}, std::vector<bool>{}, many})
    round_trip(l, [&](const auto& v) { return guest().echo_bools(store, v); });
  round_trip(types::Switches{"lamps", {false, true, true}}, [&](const auto& v) { return guest().echo_switches(store, v); });
  round_trip(types::Switches{"", {}}, [&](const auto& v) { return guest().echo_switches(store, v); });
  round_trip(std::optional<std::vector<bool>>(std::vector<bool>{false, true}),
             [&](const auto& v) { return guest().echo_maybe_bools(store, v); });
  round_trip(std::optional<std::vector<bool>>(), [&](const auto& v) { return guest().echo_maybe_bools(store, v); });
}

TEST_F(BindgenRoundTrip, VariantsWithNamedCases) {
  namespace shape = types::shape;
  for (const types::Shape& s : {types::Shape(shape::Circle{1.5f}), types::Shape(shape::Square{1.5f}),
                                types::Shape(shape::At{types::Point{3, -4}}), types::Shape(shape::Label{"a label"}),
                                types::Shape(shape::None{})})
    round_trip(s, [&](const auto& v) { return guest().echo_shape(store, v); });
  // Circle and Square carry one payload type: the case, not the type, tells them apart.
  const types::Shape back = guest().echo_shape(store, shape::Square{2.0f});
  ASSERT_TRUE(std::holds_alternative<shape::Square>(back));
  EXPECT_EQ(std::get<shape::Square>(back).value, 2.0f);
  round_trip(std::vector<types::Shape>{shape::None{}, shape::At{types::Point{1, 2}}, shape::Label{""}, shape::Circle{-0.5f}},
             [&](const auto& v) { return guest().echo_shapes(store, v); });
}

TEST_F(BindgenRoundTrip, EnumsFlagsOptionsResultsTuplesAndAliases) {
  round_trip(types::Color::blue, [&](const auto& v) { return guest().echo_color(store, v); });
  round_trip(types::Perms::read | types::Perms::exec, [&](const auto& v) { return guest().echo_perms(store, v); });
  round_trip(types::Perms{}, [&](const auto& v) { return guest().echo_perms(store, v); });
  round_trip(std::optional<types::Point>(types::Point{7, 8}), [&](const auto& v) { return guest().echo_option(store, v); });
  round_trip(std::optional<types::Point>(), [&](const auto& v) { return guest().echo_option(store, v); });
  using IdResult = Result<types::Id, std::string>;
  round_trip(IdResult::ok(42u), [&](const auto& v) { return guest().echo_result(store, v); });
  round_trip(IdResult::err("no such id"), [&](const auto& v) { return guest().echo_result(store, v); });
  round_trip(Result<void, void>::ok(), [&](const auto& v) { return guest().echo_unit_result(store, v); });
  round_trip(Result<void, void>::err(), [&](const auto& v) { return guest().echo_unit_result(store, v); });
  round_trip(std::tuple<uint8_t, std::string, double>{9, "nine", 9.5},
             [&](const auto& v) { return guest().echo_tuple(store, v); });
  round_trip(types::Id{123456}, [&](const auto& v) { return guest().echo_id(store, v); });
}

TEST_F(BindgenRoundTrip, SeveralParametersAndNoResult) {
  guest().note(store, 5, "five", types::Color::green);
  EXPECT_EQ(host->last_note, "5 five 1");
  guest().note(store, 0, "", std::nullopt);
  EXPECT_EQ(host->last_note, "0  none");
}

// An error context the guest made goes to the host, back through the guest
// to the host's import and out again, and still carries its message.
TEST_F(BindgenRoundTrip, ErrorContexts) {
  const cmhost::abi::typed::ErrorContext made = instance->make_error(store, "disk on fire");
  const int before = host->calls;
  const cmhost::abi::typed::ErrorContext echoed = guest().echo_error(store, made);
  EXPECT_EQ(host->calls, before + 1) << "the host did not see the error context";
  EXPECT_EQ(instance->error_message(store, echoed), "disk on fire");
}

TEST_F(BindgenRoundTrip, BadValuesAreRefusedBeforeTheCall) {
  types::Scalars s{};
  s.text = "\xFF";  // not UTF-8
  EXPECT_ERROR(guest().echo_scalars(store, s), cmhost::ErrorKind::InvalidValue);
  EXPECT_ERROR(guest().echo_color(store, static_cast<types::Color>(3)), cmhost::ErrorKind::InvalidValue);
  EXPECT_EQ(host->calls, 0);
}

TEST_F(BindgenRoundTrip, ASignatureThatDoesNotFitIsRefusedOnce) {
  // The generated class checks every export when it is made: an instance of
  // another component does not fit it.
  cmhost::Linker empty;
  const auto other = empty.instantiate(
      store, cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/basics.wasm"));
  EXPECT_ERROR(echo::Guest{other}, cmhost::ErrorKind::Usage);
}

}  // namespace
