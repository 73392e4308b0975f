// End-to-end on components built the way wit-bindgen-based toolchains build
// them: the C guests in tests/guests (clang, wasi-libc reactor) made
// components by wit-component through jco. `strings` exports an interface
// (`cmhost:test/text@0.1.0#name`) with `cabi_realloc`, `cabi_post_*`
// functions, return areas, a resource with a destructor, a start function
// (`_initialize`, run by wit-component's fixup module) and name sections;
// `greeter` exports root functions and imports an interface whose results
// the host writes into guest memory through `cabi_realloc`.
//
// The guests count their live heap blocks (and `strings` the post-return
// calls it has seen), so the tests check that the host ran every
// post-return function and destructor and allocated import results as the
// guest frees them: after each call nothing the call allocated is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "binary/binary.hpp"
#include "cmhost/cmhost.hpp"
#include "test_support.hpp"

namespace cmhost {
namespace {

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

constexpr const char* kText = "cmhost:test/text@0.1.0#";

class StringsGuest : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("strings"));
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);

  Func func(std::string_view name) const { return instance.func(kText + std::string(name)); }
  Val call(std::string_view name, std::vector<Val> args) {
    auto results = func(name).call(store, args);
    EXPECT_EQ(results.size(), 1u) << name;
    return results.empty() ? Val() : std::move(results[0]);
  }
  void call_void(std::string_view name, std::vector<Val> args) {
    EXPECT_TRUE(func(name).call(store, args).empty()) << name;
  }
  std::string wave(std::string_view name, std::vector<Val> args) {
    return to_wave(*func(name).type().result, call(name, std::move(args)));
  }
  uint32_t live() { return call("live-allocations", {}).as_u32(); }
  uint32_t post_returns() { return call("post-returns", {}).as_u32(); }
};

Val strings(const std::vector<std::string>& items) {
  std::vector<Val> vals;
  vals.reserve(items.size());
  for (const auto& s : items) vals.push_back(Val::string(s));
  return Val::list(std::move(vals));
}

std::vector<std::string> as_strings(const Val& list) {
  std::vector<std::string> out;
  for (size_t i = 0; i < list.list_size(); ++i) out.emplace_back(list.list_element(i).as_string());
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The custom section names of a core module (the fixture is meant to keep
// its `name` section: clang links with --strip-debug only).
std::vector<std::string> custom_sections(std::span<const uint8_t> module) {
  std::vector<std::string> names;
  size_t at = 8;  // magic and version
  auto leb = [&] {
    uint32_t v = 0;
    for (int shift = 0; at < module.size(); shift += 7) {
      const uint8_t b = module[at++];
      v |= uint32_t(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  };
  while (at < module.size()) {
    const uint8_t id = module[at++];
    const uint32_t size = leb();
    const size_t end = at + size;
    if (id == 0) {
      const uint32_t n = leb();
      names.emplace_back(reinterpret_cast<const char*>(module.data() + at), n);
    }
    at = end;
  }
  return names;
}

TEST(StringsGuestBinary, NameSectionsAreDecoded) {
  const auto bytes = read_file(fixture("strings"));
  const auto c = binary::decode_component(bytes);
  // wit-component names the component's items (the `component-name` section).
  ASSERT_TRUE(c.names.has_value());
  const auto& names = c.names->names;
  ASSERT_TRUE(names.count(binary::Sort::CoreModule));
  EXPECT_EQ(names.at(binary::Sort::CoreModule).at(0), "main");
  ASSERT_TRUE(names.count(binary::Sort::Func));
  std::vector<std::string> funcs;
  for (const auto& [index, name] : names.at(binary::Sort::Func)) funcs.push_back(name);
  EXPECT_NE(std::find(funcs.begin(), funcs.end(), "convert"), funcs.end());
  EXPECT_NE(std::find(funcs.begin(), funcs.end(), "[constructor]buffer"), funcs.end());
  // The guest's own module keeps its `name` section.
  const binary::CoreModule* main = nullptr;
  for (const auto& d : c.definitions)
    if (const auto* m = std::get_if<binary::CoreModule>(&d.item); m && !main) main = m;
  ASSERT_NE(main, nullptr);
  const auto sections = custom_sections(std::span<const uint8_t>(bytes).subspan(main->bytes.offset, main->bytes.size));
  EXPECT_NE(std::find(sections.begin(), sections.end(), "name"), sections.end());
}

TEST_F(StringsGuest, ExportsAreInterfaceFunctionsWithAndWithoutVersion) {
  std::vector<std::string> names;
  for (const auto& f : instance.funcs()) names.push_back(f.name());
  for (const char* name : {"convert", "join", "split", "sum", "measure", "tokenize", "parse", "find", "fail",
                           "[constructor]buffer", "[method]buffer.append", "[method]buffer.contents",
                           "[method]buffer.len"})
    EXPECT_NE(std::find(names.begin(), names.end(), kText + std::string(name)), names.end()) << name;
  // No core-level names leak out: no cabi_* exports, no mangled names.
  for (const auto& name : names) {
    EXPECT_EQ(name.find("cabi_"), std::string::npos) << name;
    EXPECT_EQ(name.rfind("cmhost:test/text@0.1.0#", 0), 0u) << name;
  }
  const auto versionless = instance.func("cmhost:test/text#convert");
  EXPECT_EQ(versionless.name(), "cmhost:test/text@0.1.0#convert");
  EXPECT_EQ(versionless.type().param_names, (std::vector<std::string>{"s", "to"}));
  EXPECT_EQ(versionless.call(store, std::vector<Val>{Val::string("MiXeD"), Val::enum_(0)})[0].as_string(), "mixed");
  EXPECT_ERROR((void)instance.func("cmhost:test/text@0.2.0#convert"), ErrorKind::Usage);
}

TEST_F(StringsGuest, StartFunctionRanAndNothingIsLiveAtFirst) {
  EXPECT_EQ(live(), 0u);
  EXPECT_EQ(post_returns(), 0u);
}

TEST_F(StringsGuest, StringResultIsFreedByPostReturn) {
  EXPECT_EQ(call("convert", {Val::string("Hello, Wörld ☃"), Val::enum_(1)}).as_string(), "HELLO, WöRLD ☃");
  EXPECT_EQ(post_returns(), 1u);
  EXPECT_EQ(live(), 0u);
  EXPECT_EQ(call("join", {strings({"a", "é", "☃"}), Val::string(", ")}).as_string(), "a, é, ☃");
  EXPECT_EQ(post_returns(), 2u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, FunctionsWithoutPostReturnLeaveTheCountAlone) {
  EXPECT_EQ(call("sum", {Val::list({Val::u32(1), Val::u32(2), Val::u32(0xFFFFFFFF)})}).as_u64(), 0x100000002u);
  EXPECT_EQ(call("parse", {Val::string("17")}), Val::ok(Val::u32(17)));
  EXPECT_EQ(call("find", {strings({"x", "y"}), Val::string("y")}), Val::some(Val::u32(1)));
  EXPECT_EQ(post_returns(), 0u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, ListOfStringsBothWays) {
  const Val pieces = call("split", {Val::string("a,b,,c,"), Val::char_(U',')});
  EXPECT_EQ(as_strings(pieces), (std::vector<std::string>{"a", "b", "", "c", ""}));
  // A multi-byte separator.
  EXPECT_EQ(as_strings(call("split", {Val::string("x☃y☃☃"), Val::char_(U'☃')})),
            (std::vector<std::string>{"x", "y", "", ""}));
  EXPECT_EQ(post_returns(), 2u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, TenThousandStrings) {
  std::vector<std::string> items;
  std::string joined;
  for (int i = 0; i < 10000; ++i) {
    items.push_back("item-" + std::to_string(i) + (i % 7 == 0 ? "-☃" : ""));
    joined += (i ? "/" : "") + items.back();
  }
  EXPECT_EQ(call("join", {strings(items), Val::string("/")}).as_string(), joined);
  EXPECT_EQ(live(), 0u);
  const Val back = call("split", {Val::string(joined), Val::char_(U'/')});
  ASSERT_EQ(back.list_size(), 10000u);
  EXPECT_EQ(as_strings(back), items);
  EXPECT_EQ(live(), 0u);
  EXPECT_EQ(call("find", {strings(items), Val::string("item-9999")}), Val::some(Val::u32(9999)));
  EXPECT_EQ(call("find", {strings(items), Val::string("item-10000")}), Val::none());
  EXPECT_EQ(post_returns(), 2u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, BigListOfNumbers) {
  std::vector<uint32_t> values(100000);
  uint64_t expected = 0;
  for (uint32_t i = 0; i < values.size(); ++i) expected += values[i] = i * 2654435761u;
  EXPECT_EQ(call("sum", {Val::packed_list(abi::ValKind::U32, values.data(), values.size())}).as_u64(), expected);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, EmptyValues) {
  EXPECT_EQ(call("convert", {Val::string(""), Val::enum_(0)}).as_string(), "");
  EXPECT_EQ(call("join", {Val::list({}), Val::string("")}).as_string(), "");
  EXPECT_EQ(call("join", {strings({"", ""}), Val::string("")}).as_string(), "");
  EXPECT_EQ(as_strings(call("split", {Val::string(""), Val::char_(U',')})), std::vector<std::string>{""});
  EXPECT_EQ(call("sum", {Val::list({})}).as_u64(), 0u);
  EXPECT_EQ(call("sum", {Val::packed_list(abi::ValKind::U32, nullptr, 0)}).as_u64(), 0u);
  EXPECT_EQ(call("tokenize", {Val::string("   ")}).list_size(), 0u);
  EXPECT_EQ(call("find", {Val::list({}), Val::string("")}), Val::none());
  EXPECT_EQ(call("find", {strings({"a", ""}), Val::string("")}), Val::some(Val::u32(1)));
  EXPECT_EQ(call("measure", {Val::string("")}), Val::record({Val::u32(0), Val::u32(0), Val::none()}));
  EXPECT_EQ(post_returns(), 6u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, RecordWithOption) {
  EXPECT_EQ(call("measure", {Val::string(" the quick\tbrown  fox ")}),
            Val::record({Val::u32(22), Val::u32(4), Val::some(Val::string("quick"))}));
  EXPECT_EQ(post_returns(), 1u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, ListOfVariants) {
  EXPECT_EQ(wave("tokenize", {Val::string("héllo 42, ☃ 18446744073709551615")}),
            "[word(\"h\"), punct('é'), word(\"llo\"), number(42), punct(','), punct('☃'), "
            "number(18446744073709551615)]");
  const Val tokens = call("tokenize", {Val::string("ab 7")});
  ASSERT_EQ(tokens.list_size(), 2u);
  EXPECT_EQ(tokens.list_element(0), Val::variant(0, Val::string("ab")));
  EXPECT_EQ(tokens.list_element(1), Val::variant(1, Val::u64(7)));
  EXPECT_EQ(post_returns(), 2u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, ResultWithVariantError) {
  EXPECT_EQ(call("parse", {Val::string("4294967295")}), Val::ok(Val::u32(4294967295u)));
  EXPECT_EQ(call("parse", {Val::string("4294967296")}), Val::err(Val::variant(2)));
  EXPECT_EQ(call("parse", {Val::string("12x4")}), Val::err(Val::variant(1, Val::u32(2))));
  EXPECT_EQ(call("parse", {Val::string("")}), Val::err(Val::variant(0)));
  EXPECT_EQ(wave("parse", {Val::string("0")}), "ok(0)");
  EXPECT_EQ(wave("parse", {Val::string("-1")}), "err(bad-digit(0))");
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, ResourceMethodsAndDestructor) {
  const Val buffer = call("[constructor]buffer", {Val::string("ab")});
  ASSERT_EQ(buffer.kind(), abi::ValKind::Own);
  const uint32_t handle = buffer.as_handle();
  EXPECT_EQ(live(), 2u);  // the buffer and its text
  call_void("[method]buffer.append", {Val::borrow(handle), Val::string("cd☃")});
  call_void("[method]buffer.append", {Val::borrow(handle), Val::string("")});
  EXPECT_EQ(call("[method]buffer.len", {Val::borrow(handle)}).as_u32(), 7u);
  EXPECT_EQ(call("[method]buffer.contents", {Val::borrow(handle)}).as_string(), "abcd☃");
  EXPECT_EQ(post_returns(), 1u);
  EXPECT_EQ(live(), 2u);
  // Dropping the host's own handle runs the guest's destructor.
  store.drop(Val::own(handle));
  EXPECT_EQ(live(), 0u);
  EXPECT_ERROR(call("[method]buffer.len", {Val::borrow(handle)}), ErrorKind::InvalidValue);
}

TEST_F(StringsGuest, EmptyResource) {
  const uint32_t handle = call("[constructor]buffer", {Val::string("")}).as_handle();
  EXPECT_EQ(live(), 1u);
  EXPECT_EQ(call("[method]buffer.contents", {Val::borrow(handle)}).as_string(), "");
  EXPECT_EQ(call("[method]buffer.len", {Val::borrow(handle)}).as_u32(), 0u);
  store.drop(Val::own(handle));
  EXPECT_EQ(live(), 0u);
}

TEST_F(StringsGuest, TrapIsReportedAndPoisonsTheInstance) {
  try {
    call_void("fail", {Val::string("boom")});
    ADD_FAILURE() << "fail did not trap";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
    EXPECT_NE(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
  }
  try {
    (void)live();
    ADD_FAILURE() << "a poisoned instance was entered";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
  }
}

TEST_F(StringsGuest, InstancesAreIndependent) {
  Store other_store(engine);
  const Instance other = Linker().instantiate(other_store, component);
  (void)call("convert", {Val::string("x"), Val::enum_(0)});
  EXPECT_EQ(post_returns(), 1u);
  EXPECT_EQ(other.func("cmhost:test/text#post-returns").call(other_store, std::vector<Val>{})[0].as_u32(), 0u);
}

// ---- greeter: root exports, an imported interface ----

using test::func_type;

// The host side of cmhost:test/env: a list of keys, some with values.
class GreeterGuest : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("greeter"));
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  std::vector<std::pair<uint32_t, std::string>> logged;
  Store store{engine};
  Instance instance = instantiate();

  Instance instantiate() {
    using abi::Type;
    Linker linker;
    linker.define_func("cmhost:test/env@0.1.0#log",
                       func_type({{"level", Type::enum_({"info", "warn"})}, {"msg", Type::string()}}, nullptr),
                       [this](std::span<const Val> args) {
                         logged.emplace_back(args[0].case_index(), args[1].as_string());
                         return std::vector<Val>{};
                       });
    linker.define_func("cmhost:test/env@0.1.0#get", func_type({{"key", Type::string()}}, Type::option(Type::string())),
                       [this](std::span<const Val> args) {
                         for (const auto& [key, value] : env)
                           if (key == args[0].as_string() && value) return std::vector<Val>{Val::some(Val::string(*value))};
                         return std::vector<Val>{Val::none()};
                       });
    linker.define_func("cmhost:test/env@0.1.0#keys", func_type({}, Type::list(Type::string())),
                       [this](std::span<const Val>) {
                         std::vector<Val> keys;
                         for (const auto& [key, value] : env) keys.push_back(Val::string(key));
                         return std::vector<Val>{Val::list(std::move(keys))};
                       });
    return linker.instantiate(store, component);
  }

  Val call(const char* name, std::vector<Val> args) { return instance.func(name).call(store, args).at(0); }
  uint32_t live() { return call("live-allocations", {}).as_u32(); }
};

TEST_F(GreeterGuest, RootExportsAreNamedAsInTheWorld) {
  std::vector<std::string> names;
  for (const auto& f : instance.funcs()) names.push_back(f.name());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"describe", "greet", "live-allocations"}));
}

TEST_F(GreeterGuest, ImportResultsAreWrittenIntoGuestMemory) {
  EXPECT_EQ(call("greet", {Val::string("world")}).as_string(), "Hello, world!");
  EXPECT_EQ(logged, (std::vector<std::pair<uint32_t, std::string>>{{1, "no greeting set"}, {0, "Hello, world!"}}));
  EXPECT_EQ(live(), 0u);
  env = {{"greeting", "Grüß dich"}};
  EXPECT_EQ(call("greet", {Val::string("☃")}).as_string(), "Grüß dich, ☃!");
  EXPECT_EQ(live(), 0u);
}

TEST_F(GreeterGuest, ListOfStringsFromTheHost) {
  env = {{"a", "1"}, {"empty", ""}, {"unset", std::nullopt}, {"", "no name"}};
  EXPECT_EQ(as_strings(call("describe", {})), (std::vector<std::string>{"a=1", "empty=", "unset", "=no name"}));
  EXPECT_EQ(live(), 0u);
  env.clear();
  EXPECT_EQ(call("describe", {}).list_size(), 0u);
  EXPECT_EQ(live(), 0u);
}

TEST_F(GreeterGuest, TenThousandKeys) {
  for (int i = 0; i < 10000; ++i)
    env.emplace_back("k" + std::to_string(i), i % 2 ? std::optional<std::string>("v" + std::to_string(i)) : std::nullopt);
  const Val all = call("describe", {});
  ASSERT_EQ(all.list_size(), 10000u);
  EXPECT_EQ(all.list_element(0).as_string(), "k0");
  EXPECT_EQ(all.list_element(9999).as_string(), "k9999=v9999");
  EXPECT_EQ(live(), 0u);
}

TEST(GreeterGuestLinking, MissingImportsAreListed) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("greeter"));
  Store store(engine);
  try {
    Linker().instantiate(store, component);
    ADD_FAILURE() << "instantiated without its imports";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Link);
    for (const char* name : {"cmhost:test/env@0.1.0#log", "cmhost:test/env@0.1.0#get", "cmhost:test/env@0.1.0#keys"})
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cmhost
