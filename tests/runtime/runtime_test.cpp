// End-to-end: components assembled from tests/components/*.wat by jco at
// build time, instantiated and called through the embedder API.
#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"
#include "test_support.hpp"

namespace cmhost {
namespace {

using abi::Type;

std::string fixture(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

// One fixture component instantiated without imports.
template <const char* Name>
class InstanceTest : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture(Name));
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);

  std::vector<Val> call(const char* name, std::vector<Val> args) {
    return instance.func(name).call(store, args);
  }
};

constexpr char kBasics[] = "basics";
using Basics = InstanceTest<kBasics>;

TEST_F(Basics, NumbersRoundTrip) {
  auto r = call("add", {Val::u32(2), Val::u32(40)});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].as_u32(), 42u);
  EXPECT_EQ(call("add", {Val::u32(0xFFFFFFFF), Val::u32(2)})[0].as_u32(), 1u);
}

TEST_F(Basics, StringsGoThroughReallocAndComeBack) {
  EXPECT_EQ(call("echo", {Val::string("héllo wörld ☃")})[0].as_string(), "héllo wörld ☃");
  EXPECT_EQ(call("echo", {Val::string("")})[0].as_string(), "");
  // UTF-16 option: the core function sees code units.
  EXPECT_EQ(call("len16", {Val::string("a☃𝄞")})[0].as_u32(), 4u);
}

TEST_F(Basics, Latin1OrUtf16StringsRoundTrip) {
  EXPECT_EQ(call("echo-latin1", {Val::string("héllo")})[0].as_string(), "héllo");  // stays Latin-1
  EXPECT_EQ(call("echo-latin1", {Val::string("a☃b")})[0].as_string(), "a☃b");      // tagged UTF-16
  EXPECT_EQ(call("echo-latin1", {Val::string("")})[0].as_string(), "");
}

TEST_F(Basics, SeventeenParametersAreSpilled) {
  std::vector<Val> args;
  for (uint32_t i = 1; i <= 17; ++i) args.push_back(Val::u32(i));
  EXPECT_EQ(call("sum17", args)[0].as_u32(), 153u);
}

TEST_F(Basics, SpilledResultAndPostReturn) {
  EXPECT_EQ(call("post-returns", {})[0].as_u32(), 0u);
  auto r = call("pair", {Val::u32(21)});
  EXPECT_EQ(r[0], Val::tuple({Val::u32(21), Val::u64(42)}));
  EXPECT_EQ(call("post-returns", {})[0].as_u32(), 1u);
}

TEST_F(Basics, TrapPoisonsTheInstance) {
  const Error e = expect_error(ErrorKind::Trap, [&] { call("boom", {}); });
  EXPECT_NE(std::string(e.what()).find("unreachable"), std::string::npos) << e.what();
  const Error again = expect_error(ErrorKind::Trap, [&] { call("add", {Val::u32(1), Val::u32(2)}); });
  EXPECT_NE(std::string(again.what()).find("trapped earlier"), std::string::npos) << again.what();
}

TEST_F(Basics, LiftTrapNamesTheReason) {
  const Error e = expect_error(ErrorKind::Trap, [&] { call("bad-char", {}); });
  EXPECT_NE(std::string(e.what()).find("surrogate"), std::string::npos) << e.what();
}

TEST_F(Basics, InvalidDiscriminantTraps) {
  const Error e = expect_error(ErrorKind::Trap, [&] { call("bad-option", {}); });
  EXPECT_NE(std::string(e.what()).find("discriminant 5"), std::string::npos) << e.what();
}

TEST_F(Basics, OutOfBoundsStringTraps) {
  const Error e = expect_error(ErrorKind::Trap, [&] { call("bad-string", {}); });
  EXPECT_NE(std::string(e.what()).find("out of bounds"), std::string::npos) << e.what();
}

TEST_F(Basics, BadArgumentsAreInvalidValuesNotTraps) {
  expect_error(ErrorKind::InvalidValue, [&] { call("add", {Val::u32(1)}); });
  expect_error(ErrorKind::InvalidValue, [&] { call("add", {Val::u32(1), Val::string("x")}); });
  // The instance is still usable: nothing trapped.
  EXPECT_EQ(call("add", {Val::u32(1), Val::u32(2)})[0].as_u32(), 3u);
}

TEST_F(Basics, UnknownExportIsAUsageErrorListingExports) {
  const Error e = expect_error(ErrorKind::Usage, [&] { (void)instance.func("nope"); });
  EXPECT_NE(std::string(e.what()).find("echo"), std::string::npos) << e.what();
}

using test::func_type;

TEST(Imports, HostFunctionsAtTheRootAndInAnInterface) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("imports"));
  std::vector<std::string> logged;
  Linker linker;
  linker.define_func("log", func_type({{"msg", Type::string()}}, nullptr), [&](std::span<const Val> args) {
    logged.emplace_back(args[0].as_string());
    return std::vector<Val>{};
  });
  linker.define_func("cmhost:test/host@0.1.0#double", func_type({{"x", Type::u32()}}, Type::u32()),
                     [](std::span<const Val> args) { return std::vector<Val>{Val::u32(2 * args[0].as_u32())}; });
  Store store(engine);
  const auto instance = linker.instantiate(store, component);
  EXPECT_EQ(instance.func("run").call(store, std::vector<Val>{Val::string("hi there")})[0].as_u32(), 42u);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0], "hi there");
}

TEST(Imports, MissingImportsAreListedByName) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("imports"));
  Store store(engine);
  const Error e = expect_error(ErrorKind::Link, [&] { Linker().instantiate(store, component); });
  EXPECT_NE(std::string(e.what()).find("log"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("cmhost:test/host@0.1.0#double"), std::string::npos) << e.what();
}

TEST(Imports, WrongHostSignatureIsALinkError) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("imports"));
  Linker linker;
  linker.define_func("log", func_type({{"msg", Type::u32()}}, nullptr),
                     [](std::span<const Val>) { return std::vector<Val>{}; });
  linker.allow_stub_imports(true);
  Store store(engine);
  const Error e = expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); });
  EXPECT_NE(std::string(e.what()).find("msg"), std::string::npos) << e.what();
}

TEST(Imports, StubsTrapOnlyWhenCalled) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("imports"));
  Linker linker;
  linker.allow_stub_imports(true);
  Store store(engine);
  const auto instance = linker.instantiate(store, component);
  const Error e = expect_error(ErrorKind::Trap, [&] {
    instance.func("run").call(store, std::vector<Val>{Val::string("x")});
  });
  EXPECT_NE(std::string(e.what()).find("stub"), std::string::npos) << e.what();
}

TEST(Nested, CrossComponentCall) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("nested"));
  Store store(engine);
  const auto instance = Linker().instantiate(store, component);
  EXPECT_EQ(instance.func("square").call(store, std::vector<Val>{Val::u32(12)})[0].as_u32(), 144u);
}

TEST(Malformed, DecodeErrorsNameTheOffset) {
  Engine engine{testing_support::test_engine_config()};
  const Error e = expect_error(ErrorKind::Decode, [&] {
    Component::from_bytes(engine, {0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x07, 0x05});
  });
  EXPECT_NE(std::string(e.what()).find("byte"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

constexpr char kResources[] = "resources";
using Resources = InstanceTest<kResources>;

TEST_F(Resources, OwnBorrowAndDestructor) {
  const Val counter = call("make", {Val::u32(5)})[0];
  ASSERT_EQ(counter.kind(), abi::ValKind::Own);
  EXPECT_EQ(call("value", {Val::borrow(counter.as_handle())})[0].as_u32(), 5u);
  EXPECT_EQ(call("value", {Val::borrow(counter.as_handle())})[0].as_u32(), 5u);
  EXPECT_EQ(call("drops", {})[0].as_u32(), 0u);
  call("consume", {counter});
  EXPECT_EQ(call("drops", {})[0].as_u32(), 1u);
  // The host gave its handle away: using it again is the host's error.
  expect_error(ErrorKind::InvalidValue, [&] { call("consume", {counter}); });
  EXPECT_EQ(call("drops", {})[0].as_u32(), 1u);  // and the instance was not poisoned
}

TEST_F(Resources, OwnRoundTripThroughTheGuest) {
  const Val first = call("make", {Val::u32(1)})[0];
  const Val second = call("bump", {first})[0];
  EXPECT_EQ(call("value", {Val::borrow(second.as_handle())})[0].as_u32(), 2u);
  EXPECT_EQ(call("drops", {})[0].as_u32(), 1u);
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// The host side of cmhost:test/files: a file is a size, which it records as
// dropped when its object is destroyed.
struct HostFiles {
  struct File {
    uint32_t size;
    std::vector<uint32_t>* dropped;
    ~File() { dropped->push_back(size); }
  };
  Linker linker;
  std::vector<uint32_t> dropped;
  HostResource<File> file = linker.define_resource<File>("cmhost:test/files@0.1.0#file");
  Store* store = nullptr;

  HostFiles() {
    const auto own = Type::own(file.type());
    const auto borrow = Type::borrow(file.type());
    linker.define_func("cmhost:test/files@0.1.0#[constructor]file", func_type({{"size", Type::u32()}}, own),
                       [this](std::span<const Val> args) { return std::vector<Val>{make(args[0].as_u32())}; });
    linker.define_func("cmhost:test/files@0.1.0#[method]file.size", func_type({{"self", borrow}}, Type::u32()),
                       [this](std::span<const Val> args) {
                         return std::vector<Val>{Val::u32(file.get(*store, args[0]).size)};
                       });
  }
  Val make(uint32_t size) { return file.make(*store, std::unique_ptr<File>(new File{size, &dropped})); }
};

// The host-resources component instantiated against HostFiles.
class HostResources : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, fixture("host-resources"));
  HostFiles host;
  Store store{engine};
  Instance instance = instantiate();

  Instance instantiate() {
    host.store = &store;
    return host.linker.instantiate(store, component);
  }
};

TEST_F(HostResources, GuestMakesUsesAndDropsAHostResource) {
  EXPECT_EQ(instance.func("run").call(store, std::vector<Val>{})[0].as_u32(), 7u);
  EXPECT_EQ(host.dropped, std::vector<uint32_t>{7});
}

TEST_F(HostResources, HostPassesAnOwnHandleIn) {
  const Val handle = host.make(42);
  EXPECT_EQ(instance.func("take").call(store, std::vector<Val>{handle})[0].as_u32(), 42u);
  EXPECT_EQ(host.dropped, std::vector<uint32_t>{42});
  // The guest owned and dropped it: the host no longer holds that handle.
  expect_error(ErrorKind::InvalidValue, [&] { host.file.get(store, handle); });
  expect_error(ErrorKind::InvalidValue, [&] { store.drop(handle); });
}

TEST(HostResourcesLinking, MissingResourceDefinitionIsListed) {
  Engine engine{testing_support::test_engine_config()};
  const auto component = Component::from_file(engine, fixture("host-resources"));
  Store store(engine);
  Linker linker;
  linker.allow_stub_imports(true);
  const Error e = expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); });
  EXPECT_NE(std::string(e.what()).find("cmhost:test/files@0.1.0#file"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace cmhost
