// Linker::define_instance: one component's instance supplies another's
// instance import, in the same store; definitions of compatible versions
// supply versioned imports; a name is defined once unless shadowing is
// allowed.
#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

class DefineInstance : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Component provider_component = Component::from_file(engine, fixture("linking-provider"));
  Component client_component = Component::from_file(engine, fixture("linking-client"));
  Instance provider = Linker().instantiate(store, provider_component);
};

TEST_F(DefineInstance, ImporterSharesTheSuppliedInstance) {
  Linker linker;
  linker.define_instance("provider", provider);
  const Instance client = linker.instantiate(store, client_component);
  EXPECT_EQ(provider.func("bump").call(store, std::vector<Val>{Val::u32(1)})[0].as_u32(), 1u);
  EXPECT_EQ(client.func("bump-ten").call(store, {})[0].as_u32(), 11u);
  EXPECT_EQ(provider.func("bump").call(store, std::vector<Val>{Val::u32(1)})[0].as_u32(), 12u);
}

TEST_F(DefineInstance, StringsCrossBothMemories) {
  Linker linker;
  linker.define_instance("provider", provider);
  const Instance client = linker.instantiate(store, client_component);
  const auto result = client.func("relay").call(store, std::vector<Val>{Val::string("h\xC3\xA9llo")});
  EXPECT_EQ(result.at(0).as_string(), "h\xC3\xA9llo");
}

// An exported interface as the supply (cmhost serve --next-hop links a
// handler so; tests/http/serve_test.mjs runs it): refused up front when the
// instance exports no instance of that name.
TEST_F(DefineInstance, AnExportedInstanceMustExist) {
  Linker linker;
  expect_error(ErrorKind::Usage, [&] { linker.define_instance("provider", provider, "no-such-interface"); },
               "exports no instance `no-such-interface`");
  expect_error(ErrorKind::Usage, [&] { linker.define_instance("provider", provider, "bump"); },
               "exports no instance `bump`");
}

TEST_F(DefineInstance, LatestDefinitionOfANameWins) {
  const Instance second = Linker().instantiate(store, provider_component);
  Linker linker;
  linker.allow_shadowing(true);
  linker.define_instance("provider", provider);
  linker.define_instance("provider", second);
  const Instance client = linker.instantiate(store, client_component);
  EXPECT_EQ(client.func("bump-ten").call(store, {})[0].as_u32(), 10u);
  EXPECT_EQ(provider.func("bump").call(store, std::vector<Val>{Val::u32(0)})[0].as_u32(), 0u);
}

TEST_F(DefineInstance, AnInstanceLackingAnExportIsALinkError) {
  // The client supplies itself: it has no `bump` or `echo` export.
  Linker first;
  first.define_instance("provider", provider);
  const Instance client = first.instantiate(store, client_component);
  Linker linker;
  linker.define_instance("provider", client);
  try {
    linker.instantiate(store, client_component);
    FAIL() << "expected a link error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Link);
    const std::string message = e.what();
    // The one link check: the import, why, and both types.
    EXPECT_NE(message.find("import `provider` has the wrong type: missing expected export `bump`"), std::string::npos)
        << message;
    EXPECT_NE(message.find("\n  expected: (instance"), std::string::npos) << message;
    EXPECT_NE(message.find("\n  supplied: (instance"), std::string::npos) << message;
  }
}

TEST_F(DefineInstance, WithoutTheInstanceTheImportIsMissing) {
  try {
    Linker().instantiate(store, client_component);
    FAIL() << "expected a link error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Link);
    EXPECT_NE(std::string(e.what()).find("provider#bump"), std::string::npos) << e.what();
  }
}

// An import is supplied by a definition of a semver-compatible version of
// its interface (one WASI 0.2 implementation serves every 0.2.x import);
// the exact name wins over a compatible one, and an incompatible version
// supplies nothing.
TEST(VersionedImports, CompatibleVersionsLink) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Component component = Component::from_file(engine, fixture("versioned-imports"));
  Linker linker;
  linker.func_wrap("cmhost:test/v2@0.2.12#two", [] { return 2u; });
  linker.func_wrap("cmhost:test/v1@1.4.2#one", [] { return 100u; });
  linker.func_wrap("cmhost:test/v1@1.0.0#one", [] { return 1u; });  // the exact name
  linker.define_resource<int>("cmhost:test/v1@1.4.2#thing");
  EXPECT_EQ(linker.instantiate(store, component).typed_func<uint32_t()>("sum").call(store), 3u);
}

TEST(VersionedImports, IncompatibleVersionsDoNot) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Component component = Component::from_file(engine, fixture("versioned-imports"));
  Linker linker;
  linker.func_wrap("cmhost:test/v2@0.3.0#two", [] { return 2u; });  // 0.3 is not 0.2
  linker.func_wrap("cmhost:test/v1@2.0.0#one", [] { return 1u; });  // 2 is not 1
  linker.define_resource<int>("cmhost:test/v1@1.0.0-rc1#thing");   // pre-releases match only exactly
  expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); },
               "missing imports:\n  cmhost:test/v2@0.2.6#two\n  cmhost:test/v1@1.0.0#one\n  "
               "cmhost:test/v1@1.0.0#thing (resource)");
}

// ---- Redefining a name ----

class LinkerRedefinition : public ::testing::Test {
 protected:
  static constexpr const char* one = "cmhost:test/v1@1.0.0#one";
  static constexpr const char* two = "cmhost:test/v2@0.2.6#two";
  static constexpr const char* thing = "cmhost:test/v1@1.0.0#thing";
  static FuncType returns_u32() { return FuncType{false, {}, {}, abi::Type::u32()}; }
  static std::function<std::vector<Val>(std::span<const Val>)> returning(uint32_t value) {
    return [value](std::span<const Val>) { return std::vector<Val>{Val::u32(value)}; };
  }
  // The fixture's `sum`: one() + two(), with `thing` defined.
  uint32_t sum(Linker& linker) {
    linker.func_wrap(two, [] { return 2u; });
    return linker.instantiate(store, component).typed_func<uint32_t()>("sum").call(store);
  }
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Component component = Component::from_file(engine, fixture("versioned-imports"));
  Linker linker;
};

TEST_F(LinkerRedefinition, AFunctionDefinedTwiceIsAnErrorNamingIt) {
  linker.define_func(one, returns_u32(), returning(1));
  expect_error(ErrorKind::Usage, [&] { linker.define_func(one, returns_u32(), returning(5)); },
               "`cmhost:test/v1@1.0.0#one` is already defined in this linker");
  linker.define_resource<int>(thing);
  EXPECT_EQ(sum(linker), 3u);  // the first definition stays
}

TEST_F(LinkerRedefinition, AShadowingFunctionReplacesTheEarlier) {
  linker.allow_shadowing(true);
  linker.define_func(one, returns_u32(), returning(1));
  linker.define_func(one, returns_u32(), returning(5));
  linker.define_resource<int>(thing);
  EXPECT_EQ(sum(linker), 7u);
}

TEST_F(LinkerRedefinition, AnAsyncFunctionDefinedTwiceIsAnError) {
  auto completes = [](uint32_t value) {
    return [value](Caller&, std::span<const Val>, Completion done) { done.complete({Val::u32(value)}); };
  };
  linker.define_async_func(one, returns_u32(), completes(1));
  expect_error(ErrorKind::Usage, [&] { linker.define_async_func(one, returns_u32(), completes(5)); },
               "`cmhost:test/v1@1.0.0#one` is already defined in this linker");
  linker.allow_shadowing(true);
  linker.define_async_func(one, returns_u32(), completes(5));
  linker.define_resource<int>(thing);
  EXPECT_EQ(sum(linker), 7u);
}

TEST_F(LinkerRedefinition, AWrappedCallableDefinedTwiceIsAnError) {
  linker.func_wrap(one, [] { return 1u; });
  expect_error(ErrorKind::Usage, [&] { linker.func_wrap(one, [] { return 5u; }); },
               "`cmhost:test/v1@1.0.0#one` is already defined in this linker");
  linker.define_resource<int>(thing);
  EXPECT_EQ(sum(linker), 3u);
}

TEST_F(LinkerRedefinition, AShadowingWrappedCallableReplacesTheEarlier) {
  linker.allow_shadowing(true);
  linker.func_wrap(one, [] { return 1u; });
  linker.func_wrap(one, [] { return 5u; });
  linker.define_resource<int>(thing);
  EXPECT_EQ(sum(linker), 7u);
}

TEST_F(LinkerRedefinition, AResourceDefinedTwiceIsAnError) {
  const auto first = linker.define_resource<int>(thing);
  expect_error(ErrorKind::Usage, [&] { linker.define_resource<int>(thing); },
               "`cmhost:test/v1@1.0.0#thing` is already defined in this linker");
  expect_error(ErrorKind::Usage, [&] { linker.define_resource(thing, first); },
               "`cmhost:test/v1@1.0.0#thing` is already defined in this linker");
  EXPECT_EQ(linker.resource<int>(thing).type(), first.type());
}

TEST_F(LinkerRedefinition, AShadowingResourceReplacesTheEarlier) {
  linker.allow_shadowing(true);
  const auto first = linker.define_resource<int>(thing);
  const auto second = linker.define_resource<int>(thing);
  EXPECT_NE(first.type(), second.type());
  EXPECT_EQ(linker.resource<int>(thing).type(), second.type());
  const auto other = linker.define_resource<int>("cmhost:test/v1@1.0.0#other");
  linker.define_resource(thing, other);  // an alias shadows too
  EXPECT_EQ(linker.resource<int>(thing).type(), other.type());
}

TEST_F(LinkerRedefinition, AnInstanceDefinedTwiceIsAnError) {
  const Component provider_component = Component::from_file(engine, fixture("linking-provider"));
  const Instance provider = Linker().instantiate(store, provider_component);
  linker.define_instance("provider", provider);
  expect_error(ErrorKind::Usage, [&] { linker.define_instance("provider", provider); },
               "`provider` is already defined in this linker");
}

TEST_F(LinkerRedefinition, OneNameHasOneDefinitionWhateverItsKind) {
  linker.func_wrap(one, [] { return 1u; });
  expect_error(ErrorKind::Usage, [&] { linker.define_resource<int>(one); },
               "`cmhost:test/v1@1.0.0#one` is already defined in this linker");
  expect_error(ErrorKind::Usage, [&] { linker.define_func(one, returns_u32(), returning(5)); },
               "`cmhost:test/v1@1.0.0#one` is already defined in this linker");
  // Shadowed by a resource type, the function is gone.
  linker.allow_shadowing(true);
  linker.define_resource<int>(one);
  linker.define_resource<int>(thing);
  linker.func_wrap(two, [] { return 2u; });
  expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); },
               "missing imports:\n  cmhost:test/v1@1.0.0#one");
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

TEST(DefineInstanceStores, AnInstanceOfAnotherStoreIsALinkError) {
  Engine engine{testing_support::test_engine_config()};
  Store first(engine), second(engine);
  const Component provider = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/linking-provider.wasm");
  const Component client = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/linking-client.wasm");
  Linker linker;
  linker.define_instance("provider", Linker().instantiate(first, provider));
  expect_error(ErrorKind::Link, [&] { linker.instantiate(second, client); }, "lives in another store");
  // An unrelated component in the other store does not care.
  Linker().instantiate(second, provider);
  (void)linker.instantiate(first, client);
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// Resources exported under an ascribed type are told apart by instance:
// `b` must take the very resource `a` makes.
TEST(DefineInstanceResources, EachInstanceHasItsOwnResourceType) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Component counters = Component::from_file(engine, fixture("linking-counters"));
  const Component user = Component::from_file(engine, fixture("linking-counters-user"));
  const Instance first = Linker().instantiate(store, counters);
  const Instance second = Linker().instantiate(store, counters);
  Linker same;
  same.define_instance("a", first);
  same.define_instance("b", first);
  EXPECT_EQ(same.instantiate(store, user).func("round").call(store, std::vector<Val>{Val::u32(5)}).at(0), Val::u32(5));
  Linker mixed;
  mixed.define_instance("a", first);
  mixed.define_instance("b", second);
  expect_error(ErrorKind::Link, [&] { mixed.instantiate(store, user); }, "import `b` has the wrong type");
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// What versioned-imports imports (`sum` adds one and two), shadowing allowed.
Linker versioned_imports_linker() {
  Linker linker;
  linker.allow_shadowing(true);
  linker.func_wrap("cmhost:test/v2@0.2.12#two", [] { return 2u; });
  linker.func_wrap("cmhost:test/v1@1.0.0#one", [] { return 1u; });
  linker.define_resource<int>("cmhost:test/v1@1.0.0#thing");
  return linker;
}

// Linker::instantiate_pre: imports resolved and checked once; each
// instance of it is a fresh one, in any store; it keeps the definitions it
// resolved, whatever the linker does afterwards; link errors come from
// instantiate_pre itself.
TEST(InstancePreTest, InstancesOfOnePreAreFreshAndKeepTheirDefinitions) {
  Engine engine{testing_support::test_engine_config()};
  const Component component = Component::from_file(engine, fixture("versioned-imports"));
  Linker linker = versioned_imports_linker();
  const InstancePre pre = linker.instantiate_pre(component);
  linker.func_wrap("cmhost:test/v1@1.0.0#one", [] { return 40u; });  // after: for the linker's own instances only
  Store first(engine), second(engine);
  EXPECT_EQ(pre.instantiate(first).typed_func<uint32_t()>("sum").call(first), 3u);
  EXPECT_EQ(pre.instantiate(first).typed_func<uint32_t()>("sum").call(first), 3u);
  EXPECT_EQ(pre.instantiate(second).typed_func<uint32_t()>("sum").call(second), 3u);
  EXPECT_EQ(linker.instantiate(second, component).typed_func<uint32_t()>("sum").call(second), 42u);
  EXPECT_EQ(&pre.component().type(), &component.type());

  Linker missing;
  missing.func_wrap("cmhost:test/v2@0.2.12#two", [] { return 2u; });
  expect_error(ErrorKind::Link, [&] { missing.instantiate_pre(component); },
               "missing imports:\n  cmhost:test/v1@1.0.0#one\n  cmhost:test/v1@1.0.0#thing (resource)");
}

// InstancePre::typed_func: the signature is checked once for the pre's
// instances; a misfit is said on every use; an instance the pre did not
// make is checked on its own.
TEST(InstancePreTest, ATypedExportIsCheckedOnceForItsInstances) {
  Engine engine{testing_support::test_engine_config()};
  const Component component = Component::from_file(engine, fixture("versioned-imports"));
  Linker linker = versioned_imports_linker();
  const InstancePre pre = linker.instantiate_pre(component);
  const auto sum = pre.typed_func<uint32_t()>("sum");
  Store first(engine), second(engine);
  EXPECT_EQ(sum.in(pre.instantiate(first)).call(first), 3u);
  EXPECT_EQ(sum.in(pre.instantiate(second)).call(second), 3u);
  const auto copy = sum;  // shares the check
  EXPECT_EQ(copy.in(pre.instantiate(first)).call(first), 3u);

  const auto wrong = pre.typed_func<uint64_t()>("sum");
  for (int use = 0; use < 2; ++use)
    expect_error(ErrorKind::Usage, [&] { wrong.in(pre.instantiate(first)); }, "does not match it");
  expect_error(ErrorKind::Usage, [&] { pre.typed_func<uint32_t()>("none").in(pre.instantiate(first)); },
               "no exported function `none`");

  // Another pre's instance, the linker's definitions since: checked and called.
  linker.func_wrap("cmhost:test/v1@1.0.0#one", [] { return 40u; });
  EXPECT_EQ(sum.in(linker.instantiate(second, component)).call(second), 42u);
  // Another component's instance, without a `sum`: checked, refused.
  const Instance provider = Linker().instantiate(second, Component::from_file(engine, fixture("linking-provider")));
  expect_error(ErrorKind::Usage, [&] { sum.in(provider); }, "no exported function `sum`");
}

TEST(InstancePreTest, AnInstanceItLinksToStaysInItsStore) {
  Engine engine{testing_support::test_engine_config()};
  Store first(engine), second(engine);
  const Component client = Component::from_file(engine, fixture("linking-client"));
  Linker linker;
  linker.define_instance("provider", Linker().instantiate(first, Component::from_file(engine, fixture("linking-provider"))));
  const InstancePre pre = linker.instantiate_pre(client);
  expect_error(ErrorKind::Link, [&] { pre.instantiate(second); }, "the instance supplied for `provider` lives in another store");
  EXPECT_EQ(pre.instantiate(first).func("bump-ten").call(first, {})[0].as_u32(), 10u);
}

// A root function is found by its name; a name that is no function's
// lists the exports.
TEST(InstancePreTest, ExportsAreFoundByNameWithOrWithoutTheirVersion) {
  Engine engine{testing_support::test_engine_config()};
  Store store(engine);
  const Instance instance = Linker().instantiate(store, Component::from_file(engine, fixture("linking-provider")));
  EXPECT_EQ(instance.func("bump").name(), "bump");
  expect_error(ErrorKind::Usage, [&] { instance.func("bump#x"); }, "no exported function `bump#x`");
  expect_error(ErrorKind::Usage, [&] { instance.func("nothing"); }, "no exported function `nothing` (exports: ");
}

}  // namespace
}  // namespace cmhost
