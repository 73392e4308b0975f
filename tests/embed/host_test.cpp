// Host functions with their call's context (cmhost::Caller): the store's
// user data, the calling guest's memory and realloc. The guest is the C
// guest tests/guests/greeter, whose imports pass strings in its memory and
// whose allocator counts live allocations.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "../runtime/test_support.hpp"
#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

using abi::Type;
using test::func_type;

// What a wrapped host function may take: a list as an owning vector, a
// string as a view lifted for the call; not a span into the caller's
// memory, which the call may move (a guest's realloc, memory.grow). The
// signature check would accept a span for a list, so the parameter rule is
// what keeps it out.
static_assert(wrap::is_param_v<std::vector<uint8_t>> && wrap::is_param_v<std::string_view>);
static_assert(!wrap::is_param_v<std::span<const uint8_t>>);

struct Env {
  std::vector<std::string> logged;
  bool message_seen_in_guest_memory = false;
  bool from_guest = false;
  const Store* store_seen = nullptr;
};

class HostContext : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/greeter.wasm");

  Linker linker() {
    Linker linker;
    linker.define_func("cmhost:test/env@0.1.0#log",
                       func_type({{"level", Type::enum_({"info", "warn"})}, {"msg", Type::string()}}, nullptr),
                       [](Caller& caller, std::span<const Val> args) {
                         Env& env = caller.data<Env>();
                         const std::string_view msg = args[1].as_string();
                         env.logged.emplace_back(msg);
                         env.from_guest = caller.from_guest();
                         env.store_seen = &caller.store();
                         // The string was lifted from the caller's memory: its bytes are there.
                         const auto memory = caller.memory();
                         const std::string_view bytes(reinterpret_cast<const char*>(memory.data()), memory.size());
                         env.message_seen_in_guest_memory = bytes.find(msg) != std::string_view::npos;
                         return std::vector<Val>{};
                       });
    linker.define_func("cmhost:test/env@0.1.0#get", func_type({{"key", Type::string()}}, Type::option(Type::string())),
                       [](std::span<const Val>) { return std::vector<Val>{Val::none()}; });
    // Allocates one block with the guest's own realloc and keeps it: the
    // guest's allocation count shows whose allocator ran.
    linker.define_func("cmhost:test/env@0.1.0#keys", func_type({}, Type::list(Type::string())),
                       [](Caller& caller, std::span<const Val>) {
                         const uint64_t block = caller.realloc(0, 0, 4, 16);
                         if (block == 0 || block + 16 > caller.memory().size()) throw_trap("realloc gave a bad block");
                         return std::vector<Val>{Val::list({})};
                       });
    return linker;
  }
};

TEST_F(HostContext, HostFunctionsReadTheStoresDataAndTheCallersMemory) {
  Store store(engine, Env{});
  const Instance instance = linker().instantiate(store, component);
  EXPECT_EQ(instance.func("greet").call(store, std::vector<Val>{Val::string("world")})[0].as_string(), "Hello, world!");
  const Env& env = store.data<Env>();
  EXPECT_EQ(env.logged, (std::vector<std::string>{"no greeting set", "Hello, world!"}));
  EXPECT_TRUE(env.message_seen_in_guest_memory);
  EXPECT_TRUE(env.from_guest);
  EXPECT_EQ(env.store_seen, &store);
}

TEST_F(HostContext, ReallocAllocatesWithTheGuestsAllocator) {
  Store store(engine, Env{});
  const Instance instance = linker().instantiate(store, component);
  const auto live = [&] { return instance.func("live-allocations").call(store, {})[0].as_u32(); };
  ASSERT_EQ(live(), 0u);
  EXPECT_EQ(instance.func("describe").call(store, {})[0].list_size(), 0u);
  EXPECT_EQ(live(), 1u);  // the host's block, which nobody frees
}

TEST_F(HostContext, AMovedStoreIsTheOneHostFunctionsSee) {
  Store first(engine, Env{});
  const Instance instance = linker().instantiate(first, component);
  Store store = std::move(first);
  (void)instance.func("greet").call(store, std::vector<Val>{Val::string("x")});
  EXPECT_EQ(store.data<Env>().store_seen, &store);
  EXPECT_EQ(store.data<Env>().logged.size(), 2u);
}

TEST_F(HostContext, DataOfTheWrongTypeIsAUsageErrorNamingBothTypes) {
  Store store(engine, std::vector<int>{1, 2});
  EXPECT_EQ(store.data<std::vector<int>>().size(), 2u);
  const Error e = expect_error(ErrorKind::Usage, [&] { (void)store.data<Env>(); });
  EXPECT_NE(std::string(e.what()).find("std::vector<int"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("cmhost::(anonymous namespace)::Env"), std::string::npos) << e.what();
  Store empty(engine);
  expect_error(ErrorKind::Usage, [&] { (void)empty.data<int>(); }, "the store has no data (asked for a int)");
  // A host function that reads the wrong type traps the guest's call with that message.
  const Instance instance = linker().instantiate(store, component);
  expect_error(ErrorKind::Trap, [&] { (void)instance.func("greet").call(store, std::vector<Val>{Val::string("x")}); },
               "the store's data is a std::vector<int");
}

// ---- The link check ----

// What the host supplies is checked as instantiation arguments are: a
// function of the wrong type is a link error naming the import, the type
// the component expects and the one supplied.
TEST_F(HostContext, AHostFunctionOfTheWrongTypeIsALinkErrorNamingBothTypes) {
  Linker linker = this->linker();
  Linker wrong;
  wrong.define_func("cmhost:test/env@0.1.0#log", func_type({{"msg", Type::string()}}, nullptr),
                    [](std::span<const Val>) { return std::vector<Val>{}; });
  wrong.define_func("cmhost:test/env@0.1.0#get", func_type({{"key", Type::string()}}, Type::string()),
                    [](std::span<const Val>) { return std::vector<Val>{}; });
  wrong.define_func("cmhost:test/env@0.1.0#keys", func_type({}, Type::list(Type::string())),
                    [](std::span<const Val>) { return std::vector<Val>{}; });
  Store store(engine);
  const Error e = expect_error(ErrorKind::Link, [&] { wrong.instantiate(store, component); });
  const std::string message = e.what();
  EXPECT_NE(message.find("import `cmhost:test/env@0.1.0` has the wrong type: type mismatch in instance export `log`"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("expected 2 parameters, found 1\n  expected: (instance"), std::string::npos) << message;
  EXPECT_NE(message.find("\n  supplied: (instance"), std::string::npos) << message;
  EXPECT_NE(message.find("(export \"log\" (func (param \"level\""), std::string::npos) << message;
  EXPECT_NE(message.find("(export \"log\" (func (param \"msg\" string)))"), std::string::npos)
      << message;
  // The right types link.
  EXPECT_NO_THROW(linker.instantiate(store, component));
}

// ---- Host resources holding C++ objects ----

// A file of the host: its size, and a count of destroyed files.
struct File {
  File(uint32_t size, int* destroyed) : size(size), destroyed(destroyed) {}
  ~File() { ++*destroyed; }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  uint32_t size;
  int* destroyed;
};

// cmhost:test/files as host objects, for tests/components/host-resources.wat.
struct HostFiles {
  Linker linker;
  HostResource<File> file = linker.define_resource<File>("cmhost:test/files@0.1.0#file");
  int destroyed = 0;

  HostFiles() {
    const auto own = Type::own(file.type());
    const auto borrow = Type::borrow(file.type());
    linker.define_func("cmhost:test/files@0.1.0#[constructor]file", func_type({{"size", Type::u32()}}, own),
                       [this](Caller& caller, std::span<const Val> args) {
                         return std::vector<Val>{
                             file.make(caller.store(), std::make_unique<File>(args[0].as_u32(), &destroyed))};
                       });
    linker.define_func("cmhost:test/files@0.1.0#[method]file.size", func_type({{"self", borrow}}, Type::u32()),
                       [this](Caller& caller, std::span<const Val> args) {
                         return std::vector<Val>{Val::u32(file.get(caller.store(), args[0]).size)};
                       });
  }
};

class HostObjects : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Component component = Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources.wasm");
  HostFiles host;
};

TEST_F(HostObjects, GuestMakesUsesAndDropsAHostObject) {
  Store store(engine);
  const Instance instance = host.linker.instantiate(store, component);
  EXPECT_EQ(instance.func("run").call(store, {})[0].as_u32(), 7u);
  EXPECT_EQ(host.destroyed, 1);  // the guest dropped its own handle: the File's destructor ran
  EXPECT_EQ(store.host_objects(), 0u);
}

TEST_F(HostObjects, HostMakesAnObjectAndTheGuestDropsIt) {
  Store store(engine);
  const Instance instance = host.linker.instantiate(store, component);
  const Val handle = host.file.make(store, std::make_unique<File>(42, &host.destroyed));
  EXPECT_EQ(host.file.get(store, handle).size, 42u);
  EXPECT_EQ(store.host_objects(), 1u);
  EXPECT_EQ(instance.func("take").call(store, std::vector<Val>{handle})[0].as_u32(), 42u);
  EXPECT_EQ(host.destroyed, 1);
  EXPECT_EQ(store.host_objects(), 0u);
  // The handle went to the guest: the host no longer holds it.
  expect_error(ErrorKind::InvalidValue, [&] { (void)host.file.get(store, handle); }, "the host holds no handle");
}

TEST_F(HostObjects, HandlesOfAnotherTypeOrNotHandlesAreRefused) {
  Store store(engine);
  const HostResource<File> other = host.linker.define_resource<File>("cmhost:test/other#file");
  const Val handle = other.make(store, std::make_unique<File>(1, &host.destroyed));
  expect_error(ErrorKind::InvalidValue, [&] { (void)host.file.get(store, handle); }, "not a `file`");
  expect_error(ErrorKind::InvalidValue, [&] { (void)host.file.get(store, Val::u32(0)); }, "own or borrow");
  expect_error(ErrorKind::InvalidValue, [&] { (void)host.file.make(store, nullptr); }, "not null");
  EXPECT_EQ(store.host_objects(), 1u);
}

TEST_F(HostObjects, ObjectsTheHostStillHoldsGoWithTheStore) {
  {
    Store store(engine);
    (void)host.file.make(store, std::make_unique<File>(3, &host.destroyed));
    (void)host.file.make(store, std::make_unique<File>(4, &host.destroyed));
    EXPECT_EQ(host.destroyed, 0);
  }
  EXPECT_EQ(host.destroyed, 2);
}

// An async call the host cancels before it starts never gave its arguments
// to the guest: the objects they own are dropped with it, not left behind.
TEST_F(HostObjects, AnObjectPassedToACallCancelledBeforeItStartsIsDropped) {
  const Component held_component =
      Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources-async.wasm");
  Store store(engine);
  const Instance instance = host.linker.instantiate(store, held_component);
  instance.func("hold").call(store, {});
  const std::vector<Val> args{host.file.make(store, std::make_unique<File>(5, &host.destroyed))};
  PendingCall held = instance.func("take").call_async(store, args);
  store.run_until_idle();
  ASSERT_FALSE(held.done()) << "backpressure holds the call";
  held.cancel(store);
  store.run_until_idle();
  EXPECT_TRUE(held.cancelled());
  EXPECT_EQ(host.destroyed, 1);
  EXPECT_EQ(store.host_objects(), 0u);
  // A call that starts takes its object to the guest, which drops it.
  instance.func("release").call(store, {});
  const std::vector<Val> more{host.file.make(store, std::make_unique<File>(6, &host.destroyed))};
  EXPECT_EQ(instance.func("take").call(store, more).at(0).as_u32(), 6u);
  EXPECT_EQ(host.destroyed, 2);
  EXPECT_EQ(store.host_objects(), 0u);
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// The same host resource through wrapped functions: typed handles, no Val.
TEST(HostObjectsTyped, WrappedFunctionsMakeAndReadHostObjects) {
  Engine engine{testing_support::test_engine_config()};
  const Component component =
      Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources.wasm");
  Linker linker;
  int destroyed = 0;
  const HostResource<File> file = linker.define_resource<File>("cmhost:test/files@0.1.0#file");
  linker.func_wrap("cmhost:test/files@0.1.0#[constructor]file", [&](Caller& caller, uint32_t size) {
    return file.make_own(caller.store(), std::make_unique<File>(size, &destroyed));
  });
  linker.func_wrap("cmhost:test/files@0.1.0#[method]file.size",
                   [&](Caller& caller, abi::typed::Borrow<File> self) { return file.get(caller.store(), self).size; });
  Store store(engine);
  const Instance instance = linker.instantiate(store, component);
  EXPECT_EQ(instance.typed_func<uint32_t()>("run").call(store), 7u);
  EXPECT_EQ(destroyed, 1);
  // The host's own handle, typed, into the guest, which drops it.
  const abi::typed::Own<File> mine = file.make_own(store, std::make_unique<File>(9, &destroyed));
  EXPECT_EQ(file.get(store, mine).size, 9u);
  EXPECT_EQ(instance.typed_func<uint32_t(abi::typed::Own<File>)>("take").call(store, mine), 9u);
  EXPECT_EQ(destroyed, 2);
  EXPECT_EQ(store.host_objects(), 0u);
  // A handle the host keeps is freed by Store::drop.
  const abi::typed::Own<File> kept = file.make_own(store, std::make_unique<File>(1, &destroyed));
  store.drop(kept);
  EXPECT_EQ(destroyed, 3);
}

}  // namespace
}  // namespace cmhost

namespace cmhost {
namespace {

// Stubs adopt the import's type; the functions supplied beside them are
// still checked.
TEST(StubImports, AnInstanceWithStubsStillHasItsOtherFunctionsChecked) {
  Engine engine{testing_support::test_engine_config()};
  const Component component =
      Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-resources.wasm");
  Linker linker;
  linker.allow_stub_imports(true);
  (void)linker.define_resource<File>("cmhost:test/files@0.1.0#file");
  Store store(engine);
  // Only stubs beside the resource: links, and traps when a stub is called.
  const Instance stubbed = linker.instantiate(store, component);
  expect_error(ErrorKind::Trap, [&] { stubbed.func("run").call(store, {}); }, "stub of unsupplied import");
  // A wrongly typed constructor next to the stubbed method is a link error.
  linker.func_wrap("cmhost:test/files@0.1.0#[constructor]file", [](uint32_t size) { return size; });
  expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); }, "the result is own<file>");
  linker = Linker();
  linker.allow_stub_imports(true);
  const HostResource<File> file = linker.define_resource<File>("cmhost:test/files@0.1.0#file");
  linker.define_func("cmhost:test/files@0.1.0#[constructor]file", func_type({{"size", Type::u32()}}, Type::u32()),
                     [](std::span<const Val> args) { return std::vector<Val>{args[0]}; });
  expect_error(ErrorKind::Link, [&] { linker.instantiate(store, component); },
               "import `cmhost:test/files@0.1.0` has the wrong type");
}

}  // namespace
}  // namespace cmhost
