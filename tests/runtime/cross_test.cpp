// Cross-component calls (tests/components/cross.wat): a caller component
// lowers a callee component's lifted functions, so values are copied from
// one component's memory straight into the other's.
#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"
#include "test_support.hpp"

namespace cmhost {
namespace {

class Cross : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/cross.wasm");
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);

  Val call1(const char* name, std::vector<Val> args) {
    auto r = instance.func(name).call(store, args);
    EXPECT_EQ(r.size(), 1u) << name;
    return r.empty() ? Val() : r[0];
  }
  std::string trap(const char* name, std::vector<Val> args) {
    return test::trap_message(store, instance.func(name), std::move(args));
  }
  uint32_t heap_top() { return call1("heap-top", {}).as_u32(); }
};

const char* const kTexts[] = {"", "ascii only", "h\xC3\xA9llo", "snow \xE2\x98\x83", "grin \xF0\x9F\x98\x80",
                              "\xC3\xBF\xC3\xBF\xC3\xBF"};

TEST_F(Cross, StringsAreTranscodedIntoTheCalleesEncodingAndBack) {
  for (const char* s : kTexts) {
    EXPECT_EQ(call1("echo16", {Val::string(s)}).as_string(), s);
    EXPECT_EQ(call1("echo-latin1", {Val::string(s)}).as_string(), s);
  }
}

TEST_F(Cross, ResultsUseTheSpecsStoreAlgorithmForTheSourceEncoding) {
  // "é" comes back from a UTF-16 callee: store_string_to_utf8 allocates 1
  // byte, grows to the worst case 3, shrinks to 2 (this bump allocator never
  // reuses: 6 bytes). The host's own lowering of the argument took 2. A
  // detour through host strings would have allocated 2 + 2.
  const uint32_t before = heap_top();
  EXPECT_EQ(call1("echo16", {Val::string("\xC3\xA9")}).as_string(), "\xC3\xA9");
  const uint32_t after = heap_top();
  EXPECT_EQ(after - before, 2u + 6u) << before << " " << after;
}

TEST_F(Cross, ListsOfStringsAndPostReturn) {
  std::vector<Val> items;
  for (int i = 0; i < 500; ++i) items.push_back(Val::string(std::string(kTexts[i % 6]) + std::to_string(i)));
  const Val list = Val::list(items);
  EXPECT_EQ(call1("echo-list", {list}), list);
  EXPECT_EQ(call1("echo-list", {Val::list({})}), Val::list({}));
  EXPECT_EQ(call1("posts", {}).as_u32(), 2u) << "the callee's post-return ran after each copy";
}

TEST_F(Cross, ResultsCanBeReadInPlaceWithoutVals) {
  const Val list = Val::list({Val::string("one"), Val::string("tw\xC3\xB6")});
  std::vector<std::string> seen;
  instance.func("echo-list").call_reading(store, {&list, 1}, [&](const abi::typed::CallResult& result) {
    abi::typed::Reader reader(result.cx);
    for (std::string_view s : abi::typed::load_result<abi::typed::ListView<std::string_view>>(reader, result))
      seen.emplace_back(s);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "tw\xC3\xB6"}));
  bool flat = false;
  instance.func("heap-top").call_reading(store, {}, [&](const abi::typed::CallResult& result) {
    flat = !result.spilled && result.core.size() == 1;
    abi::typed::Reader reader(result.cx);
    EXPECT_ERROR(abi::typed::load_result<uint32_t>(reader, result), ErrorKind::Usage) << "a flat u32 result is not in memory";
  });
  EXPECT_TRUE(flat);
}

TEST_F(Cross, TuplesWithOptionsAndSpilledResults) {
  const Val t = Val::tuple({Val::string("x\xE2\x98\x83"), Val::list({Val::string("p"), Val::string("")}),
                            Val::some(Val::u16(65535))});
  EXPECT_EQ(call1("echo-tuple", {t}), t);
  const Val none = Val::tuple({Val::string(""), Val::list({}), Val::none()});
  EXPECT_EQ(call1("echo-tuple", {none}), none);
}

TEST_F(Cross, SpilledParametersAreAllocatedInTheCallee) {
  std::vector<Val> args;
  for (uint32_t i = 1; i <= 17; ++i) args.push_back(Val::u32(i * 1000));
  EXPECT_EQ(call1("sum17", args).as_u32(), 153000u);
}

TEST_F(Cross, OwnAndBorrowHandlesMoveBetweenTables) {
  EXPECT_EQ(call1("thing-roundtrip", {Val::u32(42)}).as_u32(), 42042u);
  EXPECT_EQ(call1("thing-roundtrip", {Val::u32(7)}).as_u32(), 7007u);
  EXPECT_NE(trap("use-after-consume", {Val::u32(1)}).find("unknown handle"), std::string::npos);
}

TEST_F(Cross, TrapInTheCalleeReachesTheHost) {
  EXPECT_NE(trap("fail", {Val::string("x")}).find("unreachable"), std::string::npos);
}

TEST_F(Cross, BadValueFromTheCalleeTrapsInTheCopy) {
  EXPECT_NE(trap("bad-char", {}).find("surrogate"), std::string::npos);
}

}  // namespace
}  // namespace cmhost
