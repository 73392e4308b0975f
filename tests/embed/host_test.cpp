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
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

using abi::Type;
using test::func_type;

struct Env {
  std::vector<std::string> logged;
  bool message_seen_in_guest_memory = false;
  bool from_guest = false;
  const Store* store_seen = nullptr;
};

class HostContext : public ::testing::Test {
 protected:
  Engine engine;
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

}  // namespace
}  // namespace cmhost
