// The views container family (`cmhost bindgen --containers views`) on the
// values world (as package cmhost:viewed): arguments are owning C++ values,
// and every result holding strings or lists is handed to a callback as its
// `View` twin, read in place from the guest's memory before post-return.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/test_engine.hpp"
#include "values-views.hpp"

namespace {

namespace echo = cmhost_::viewed::echo;
namespace types = cmhost_::viewed::types;
using cmhost::abi::typed::ListView;
using cmhost::abi::typed::Result;

// Answers every call with its argument.
class EchoHost final : public echo::Host {
 public:
  types::Scalars echo_scalars(cmhost::Caller&, types::Scalars s) override { return s; }
  std::vector<uint16_t> echo_list(cmhost::Caller&, std::vector<uint16_t> l) override { return l; }
  std::vector<std::string> echo_strings(cmhost::Caller&, std::vector<std::string> l) override { return l; }
  std::array<uint8_t, 4> echo_fixed(cmhost::Caller&, std::array<uint8_t, 4> a) override { return a; }
  types::Shape echo_shape(cmhost::Caller&, types::Shape s) override { return s; }
  std::vector<types::Shape> echo_shapes(cmhost::Caller&, std::vector<types::Shape> l) override { return l; }
  types::Color echo_color(cmhost::Caller&, types::Color c) override { return c; }
  types::Perms echo_perms(cmhost::Caller&, types::Perms p) override { return p; }
  std::optional<types::Point> echo_option(cmhost::Caller&, std::optional<types::Point> o) override { return o; }
  Result<types::Id, std::string> echo_result(cmhost::Caller&, Result<types::Id, std::string> r) override { return r; }
  Result<void, void> echo_unit_result(cmhost::Caller&, Result<void, void> r) override { return r; }
  std::tuple<uint8_t, std::string, double> echo_tuple(cmhost::Caller&, std::tuple<uint8_t, std::string, double> t) override {
    return t;
  }
  std::map<std::string, uint32_t> echo_map(cmhost::Caller&, std::map<std::string, uint32_t> m) override { return m; }
  types::Points echo_points(cmhost::Caller&, types::Points p) override { return p; }
  types::Id echo_id(cmhost::Caller&, types::Id i) override { return i; }
  std::vector<bool> echo_bools(cmhost::Caller&, std::vector<bool> l) override { return l; }
  types::Switches echo_switches(cmhost::Caller&, types::Switches s) override { return s; }
  std::optional<std::vector<bool>> echo_maybe_bools(cmhost::Caller&, std::optional<std::vector<bool>> o) override {
    return o;
  }
  void note(cmhost::Caller&, uint32_t, std::string, std::optional<types::Color>) override {}
  cmhost::abi::typed::ErrorContext echo_error(cmhost::Caller&, cmhost::abi::typed::ErrorContext e) override { return e; }
};

class BindgenViews : public ::testing::Test {
 protected:
  BindgenViews() {
    echo::add_to_linker(linker, std::make_shared<EchoHost>());
    instance.emplace(cmhost_::viewed::values::Values::instantiate(
        store,
        cmhost::Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/bindgen-viewed.wasm"),
        linker));
  }
  const echo::Guest& guest() const { return instance->echo(); }

  cmhost::Engine engine{cmhost::testing_support::test_engine_config()};
  cmhost::Store store{engine};
  cmhost::Linker linker;
  std::optional<cmhost_::viewed::values::Values> instance;
};

template <class T>
std::vector<T> collect(const ListView<T>& list) {
  std::vector<T> out;
  for (const T& element : list) out.push_back(element);
  return out;
}

TEST_F(BindgenViews, StringsAndListsAreReadInPlace) {
  const std::vector<std::string> strings{"a", "", "\xE2\x98\x83", std::string(1000, 'x')};
  int reads = 0;
  guest().echo_strings(store, strings, [&](const ListView<std::string_view>& l) {
    ++reads;
    ASSERT_EQ(l.size(), strings.size());
    for (size_t i = 0; i < strings.size(); ++i) EXPECT_EQ(l[i], strings[i]);
  });
  EXPECT_EQ(reads, 1) << "the result is read once, during the call";
  guest().echo_list(store, {1, 0, 65535}, [&](const ListView<uint16_t>& l) {
    EXPECT_EQ(collect(l), (std::vector<uint16_t>{1, 0, 65535}));
  });
  guest().echo_list(store, {}, [&](const ListView<uint16_t>& l) { EXPECT_TRUE(l.empty()); });
  guest().echo_bools(store, {true, false, true}, [&](const ListView<bool>& l) {
    EXPECT_EQ(collect(l), (std::vector<bool>{true, false, true}));
  });
  guest().echo_switches(store, {"lamps", {false, true}}, [&](const types::SwitchesView& v) {
    EXPECT_EQ(v.label, "lamps");
    EXPECT_EQ(collect(v.states), (std::vector<bool>{false, true}));
  });
}

TEST_F(BindgenViews, RecordsVariantsAndNestedListsHaveViewTwins) {
  const types::Scalars s{true, -8, 250, -30000, 65000, -2000000000, 4000000000u, int64_t{-1} << 62, ~uint64_t{0},
                         1.25f, -1e300, U'\U0001F600', "h\xC3\xA9llo"};
  guest().echo_scalars(store, s, [&](const types::ScalarsView& v) {
    EXPECT_EQ(v.text, s.text);
    EXPECT_EQ(v.ulong, s.ulong);
    EXPECT_EQ(v.letter, s.letter);
    EXPECT_EQ(v.double_, s.double_);
  });
  // A list of records without strings or lists: the record itself has no twin.
  const types::Points points{{1, -1}, {INT32_MIN, INT32_MAX}};
  guest().echo_points(store, points, [&](const ListView<types::Point>& l) { EXPECT_EQ(collect(l), points); });
  guest().echo_tuple(store, {9, "nine", 9.5}, [&](const std::tuple<uint8_t, std::string_view, double>& t) {
    EXPECT_EQ(t, (std::tuple<uint8_t, std::string_view, double>{9, "nine", 9.5}));
  });
  guest().echo_result(store, Result<types::Id, std::string>::err("no such id"),
                      [&](const Result<types::Id, std::string_view>& r) {
                        ASSERT_TRUE(r.is_err());
                        EXPECT_EQ(r.error(), "no such id");
                      });
  guest().echo_map(store, {{"one", 1}, {"two", 2}}, [&](const std::map<std::string_view, uint32_t>& m) {
    EXPECT_EQ(m, (std::map<std::string_view, uint32_t>{{"one", 1}, {"two", 2}}));
  });
  // A variant with a string case has a twin whose cases are the views'.
  namespace shape_view = types::shape_view;
  guest().echo_shape(store, types::shape::Label{"a label"}, [&](const types::ShapeView& v) {
    ASSERT_TRUE(std::holds_alternative<shape_view::Label>(v));
    EXPECT_EQ(std::get<shape_view::Label>(v).value, "a label");
  });
  guest().echo_shapes(store, {types::shape::At{types::Point{1, 2}}, types::shape::Label{"x"}},
                      [&](const ListView<types::ShapeView>& l) {
                        ASSERT_EQ(l.size(), 2u);
                        EXPECT_EQ(std::get<shape_view::At>(l[0]).value, (types::Point{1, 2}));
                        EXPECT_EQ(std::get<shape_view::Label>(l[1]).value, "x");
                      });
}

TEST_F(BindgenViews, ResultsWithoutStringsOrListsAreReturnedAsValues) {
  EXPECT_EQ(guest().echo_color(store, types::Color::blue), types::Color::blue);
  EXPECT_EQ(guest().echo_option(store, types::Point{7, 8}), std::optional<types::Point>(types::Point{7, 8}));
  EXPECT_EQ(guest().echo_fixed(store, {1, 2, 254, 255}), (std::array<uint8_t, 4>{1, 2, 254, 255}));
}

TEST_F(BindgenViews, WorldFunctionsReadTheirStringsInPlace) {
  const auto made = instance->make_error(store, "disk on fire");
  std::string message;
  instance->error_message(store, made, [&](std::string_view m) { message = m; });
  EXPECT_EQ(message, "disk on fire");
}

}  // namespace
