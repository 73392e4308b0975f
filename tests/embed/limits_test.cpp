// A store's limits (StoreLimits), fuel and epoch interruption, against
// tests/components/hostile.wat: every limit trips with a trap naming it, a
// runaway loop is stopped by fuel and by a deadline from another thread,
// memory growth is refused at the limit while the host runs on, and the
// event loop's waits end at the deadline too.
#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/host_async_types.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

using abi::Type;
using namespace std::chrono_literals;

FuncType reenter_type() {
  FuncType t;
  t.param_names = {"n"};
  t.params = {Type::u32()};
  t.result = Type::u32();
  return t;
}

class Limits : public ::testing::Test {
 protected:
  explicit Limits(bool metering = false)
      : engine(testing_support::test_engine_config({.metering = metering})),
        store(engine),
        component(Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/hostile.wasm")) {
    // recurse(n) calls reenter(n), which calls recurse(n - 1) of instance
    // n (an instance cannot be reentered): n + 1 calls into guests, nested.
    linker.define_func("reenter", reenter_type(), [this](std::span<const Val> args) -> std::vector<Val> {
      const uint32_t n = args[0].as_u32();
      if (n == 0) return {Val::u32(0)};
      const std::vector<Val> next{Val::u32(n - 1)};
      return {Val::u32(1 + chain.at(n).func("recurse").call(store, next).at(0).as_u32())};
    });
  }
  void instantiate() { instance = linker.instantiate(store, component); }
  Val call(const char* name, std::vector<Val> args = {}) {
    auto results = instance->func(name).call(store, args);
    return results.empty() ? Val() : results.at(0);
  }

  Engine engine;
  Store store;
  Component component;
  Linker linker;
  std::optional<Instance> instance;
  std::vector<Instance> chain;
};

class Metered : public Limits {
 protected:
  Metered() : Limits(true) {}
};

TEST_F(Limits, DefaultsAreSetAndDocumented) {
  const StoreLimits& limits = store.limits();
  EXPECT_EQ(limits.memory_bytes, std::nullopt);
  EXPECT_EQ(limits.total_memory_bytes, std::optional<uint64_t>(uint64_t{4} << 30));
  EXPECT_EQ(limits.table_elements, std::optional<uint64_t>(uint64_t{1} << 20));
  EXPECT_EQ(limits.instances, 10'000u);
  EXPECT_EQ(limits.table_entries, 1u << 20);
  EXPECT_EQ(limits.waitables, 1u << 17);
  EXPECT_EQ(limits.call_depth, 64u);
  EXPECT_EQ(limits.lift_bytes, uint64_t{1} << 30);
  EXPECT_EQ(limits.host_bytes, uint64_t{256} << 20);
  // Unmetered engines have no fuel or deadline to set.
  EXPECT_ERROR_SAYING(store.set_fuel(10), ErrorKind::Usage, "EngineConfig::metering");
  EXPECT_ERROR_SAYING(store.set_epoch_deadline(1), ErrorKind::Usage, "EngineConfig::metering");
  EXPECT_FALSE(store.interrupted());
}

TEST_F(Limits, MemoryGrowthIsRefusedAtTheLimitAndTheHostRunsOn) {
  store.set_limits({.total_memory_bytes = 4 * 65536});
  instantiate();
  EXPECT_EQ(call("grow", {Val::u32(2)}), Val::s32(1));
  EXPECT_EQ(call("grow", {Val::u32(2)}), Val::s32(-1));  // past the limit: memory.grow fails
  EXPECT_EQ(call("grow", {Val::u32(1)}), Val::s32(3));   // up to it: fine
  EXPECT_EQ(call("grow", {Val::u32(1)}), Val::s32(-1));
  EXPECT_EQ(call("make-resources", {Val::u32(3)}), Val::u32(3));  // the guest runs on
}

TEST_F(Limits, AMemoryStartingAboveTheLimitIsRefused) {
  store.set_limits({.memory_bytes = 65535});
  EXPECT_ERROR_SAYING(instantiate(), ErrorKind::Trap,
                      "memory limit: memory 0 starts at 65536 bytes, above the store's limit of 65535 bytes per memory");
}

TEST_F(Limits, HandleTablesStopAtTheirLimit) {
  store.set_limits({.table_entries = 100});
  instantiate();
  EXPECT_EQ(call("make-resources", {Val::u32(60)}), Val::u32(60));
  EXPECT_ERROR_SAYING(call("make-resources", {Val::u32(60)}), ErrorKind::Trap,
                      "handle limit: an instance's handle table may hold 100 entries (StoreLimits::table_entries)");
}

TEST_F(Limits, WaitablesStopAtTheirLimit) {
  store.set_limits({.waitables = 10});
  instantiate();
  EXPECT_EQ(call("make-streams", {Val::u32(5)}), Val::u32(5));  // two ends each
  EXPECT_ERROR_SAYING(call("make-streams", {Val::u32(1)}), ErrorKind::Trap,
                      "waitable limit: the store's guests may hold 10 streams, futures, subtasks, waitable sets and "
                      "error contexts (StoreLimits::waitables)");
}

// What the host keeps for guests across calls counts against one budget
// for the whole store, however many instances share it.
TEST_F(Limits, HandlesAndErrorContextsShareTheStoresHostBytes) {
  store.set_limits({.host_bytes = 100 * 64});  // a hundred handle entries
  instantiate();
  Instance second = linker.instantiate(store, component);
  EXPECT_EQ(call("make-resources", {Val::u32(60)}), Val::u32(60));
  EXPECT_ERROR_SAYING(second.func("make-resources").call(store, std::vector<Val>{Val::u32(60)}), ErrorKind::Trap,
                      "host memory limit: the store's handle tables may keep 6400 bytes of host memory for its "
                      "guests (StoreLimits::host_bytes); 6400 are held and this entry takes 64");
  // An error context holds its message: 50 000 bytes each.
  store.set_limits({.host_bytes = 200'000});
  Instance third = linker.instantiate(store, component);
  EXPECT_EQ(third.func("make-error-contexts").call(store, std::vector<Val>{Val::u32(2)}).at(0), Val::u32(2));
  EXPECT_ERROR_SAYING(third.func("make-error-contexts").call(store, std::vector<Val>{Val::u32(2)}), ErrorKind::Trap,
                      "this entry takes 50064");
}

TEST_F(Limits, ALiftStopsAtItsHostBytes) {
  instantiate();
  // 800 strings aliasing one of 50 000 bytes: 40 MB lifted from 56 KiB.
  EXPECT_EQ(call("aliased", {Val::u32(800)}).list_size(), 800u);
  store.set_limits({.lift_bytes = 1'000'000});
  EXPECT_EQ(call("aliased", {Val::u32(10)}).list_size(), 10u);
  EXPECT_ERROR_SAYING(call("aliased", {Val::u32(800)}), ErrorKind::Trap,
                      "lift limit: lifting the value would allocate more than the store's limit of 1000000 host bytes");
  // Typed lifts count too (the trap poisoned the instance: a new one).
  instantiate();
  auto typed = instance->typed_func<std::vector<std::string>(uint32_t)>("aliased");
  EXPECT_EQ(typed.call(store, 10).size(), 10u);
  EXPECT_ERROR_SAYING(typed.call(store, 800), ErrorKind::Trap, "lift limit");
}

TEST_F(Limits, NestedCallsStopAtTheCallDepth) {
  store.set_limits({.call_depth = 5});
  for (int i = 0; i < 7; ++i) chain.push_back(linker.instantiate(store, component));
  const std::vector<Val> four{Val::u32(4)}, five{Val::u32(5)};
  EXPECT_EQ(chain[5].func("recurse").call(store, four).at(0), Val::u32(4));  // five calls into guests
  EXPECT_ERROR_SAYING(chain[6].func("recurse").call(store, five), ErrorKind::Trap,
                      "call depth limit: calls into guests nest more than 5 deep (StoreLimits::call_depth)");
}

TEST_F(Limits, InstancesStopAtTheirLimit) {
  store.set_limits({.instances = 3});  // the component, its two core instances
  instantiate();
  EXPECT_ERROR_SAYING(instantiate(), ErrorKind::Trap,
                      "instance limit: the store may make 3 component and core instances (StoreLimits::instances)");
}

TEST_F(Metered, FuelStopsARunawayLoopAndTheStoreStaysUsable) {
  instantiate();
  store.set_fuel(100'000);
  EXPECT_ERROR_SAYING(call("spin"), ErrorKind::Trap, "out of fuel: the store's fuel of 100000 units is spent");
  EXPECT_EQ(store.fuel(), std::optional<uint64_t>(0));
  // The trap poisons the instance that trapped; the store makes new ones.
  store.set_fuel(std::nullopt);
  EXPECT_ERROR_SAYING(call("make-resources", {Val::u32(1)}), ErrorKind::Trap, "it trapped earlier");
  instantiate();
  EXPECT_EQ(call("make-resources", {Val::u32(2)}), Val::u32(2));
}

TEST_F(Metered, ADeadlineFromAnotherThreadStopsARunawayLoop) {
  instantiate();
  store.set_epoch_deadline(1);
  const auto start = std::chrono::steady_clock::now();
  std::thread timer([this] {
    std::this_thread::sleep_for(50ms);
    engine.increment_epoch();
  });
  EXPECT_ERROR_SAYING(call("spin"), ErrorKind::Trap, "interrupted: the engine's epoch reached the store's deadline");
  const auto stopped = std::chrono::steady_clock::now() - start;
  timer.join();
  EXPECT_GE(stopped, 50ms);
  EXPECT_LT(stopped, 150ms) << "within 100 ms of the deadline";
  EXPECT_TRUE(store.interrupted());
}

// An interruption ends one call, not the store: the instance it stopped
// refuses to be entered again, and once the embedder sets a new deadline
// the store's other instances, and new ones, run on (what `serve` does with
// a request that timed out).
TEST_F(Metered, AnInterruptedCallPoisonsItsInstanceAndNotTheStore) {
  instantiate();
  Instance bystander = linker.instantiate(store, component);
  store.set_epoch_deadline(1);
  std::thread timer([this] {
    std::this_thread::sleep_for(20ms);
    engine.increment_epoch();
  });
  EXPECT_ERROR_SAYING(call("spin"), ErrorKind::Trap, "interrupted: the engine's epoch reached the store's deadline");
  timer.join();
  EXPECT_TRUE(store.interrupted());
  // Until the embedder moves the deadline, the store's guests are not
  // entered, but nor are they harmed.
  EXPECT_ERROR_SAYING(bystander.func("make-resources").call(store, std::vector<Val>{Val::u32(1)}), ErrorKind::Trap,
                      "interrupted: the store's epoch deadline has passed, so component instance `component` was "
                      "not entered (Store::set_epoch_deadline sets a new one)");
  EXPECT_ERROR_SAYING((void)bystander.func("make-resources").call_async(store, std::vector<Val>{Val::u32(1)}),
                      ErrorKind::Trap, "was not entered");
  store.set_epoch_deadline(1000);
  EXPECT_FALSE(store.interrupted());
  EXPECT_EQ(bystander.func("make-resources").call(store, std::vector<Val>{Val::u32(2)}).at(0), Val::u32(2));
  EXPECT_ERROR_SAYING(call("make-resources", {Val::u32(1)}), ErrorKind::Trap,
                      "cannot enter component instance `component`: it trapped earlier");
  Instance fresh = linker.instantiate(store, component);
  EXPECT_EQ(fresh.func("make-resources").call(store, std::vector<Val>{Val::u32(3)}).at(0), Val::u32(3));
}

// The event loop waiting for a host completion that never comes ends at
// the deadline.
TEST(MeteredLoop, TheEventLoopsWaitEndsAtTheDeadline) {
  Engine engine(testing_support::test_engine_config({.metering = true}));
  Store store(engine);
  Linker linker;
  std::vector<Completion> held;  // never completed
  linker.define_async_func("slow-double", testing_support::slow_double_type(),
                           [&](Caller&, std::span<const Val>, Completion c) { held.push_back(std::move(c)); });
  linker.define_async_func("count-bytes", testing_support::count_bytes_type(),
                           [](Caller&, std::span<const Val>, Completion) {});
  Instance instance = linker.instantiate(
      store, Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-async.wasm"));
  const std::vector<Val> args{Val::u32(1), Val::u32(2)};
  PendingCall pair = instance.func("stackful-pair").call_async(store, args);
  store.set_epoch_deadline(1);
  const auto start = std::chrono::steady_clock::now();
  std::thread timer([&engine] {
    std::this_thread::sleep_for(50ms);
    engine.increment_epoch();
  });
  EXPECT_ERROR_SAYING(store.run_until([&] { return pair.done(); }), ErrorKind::Trap,
                      "interrupted: the engine's epoch reached the store's deadline while the event loop waited");
  const auto stopped = std::chrono::steady_clock::now() - start;
  timer.join();
  EXPECT_LT(stopped, 150ms);
  EXPECT_EQ(held.size(), 2u);
}

}  // namespace
}  // namespace cmhost
