// Component Model concurrency: tasks in both async lift styles, async and
// synchronous lowers of async functions, waitable sets, context slots,
// may_leave, deadlocks, and the store unwinding suspended fibers
// (tests/components/async-tasks.wat); streams and futures between two
// components (tests/components/async-streams.wat); cancellation,
// backpressure, error-contexts and threads (tests/components/async-control.wat).
#include <gtest/gtest.h>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"
#include "test_support.hpp"

namespace cmhost {
namespace {

std::string component_path(const char* name) { return std::string(CMHOST_TEST_COMPONENTS) + "/" + name + ".wasm"; }

class AsyncTest : public ::testing::Test {
 protected:
  explicit AsyncTest(const char* name = "async-tasks") : component(Component::from_file(engine, component_path(name))) {}

  uint32_t call_u32(const char* name, std::vector<Val> args) {
    auto r = instance.func(name).call(store, args);
    EXPECT_EQ(r.size(), 1u) << name;
    return r.empty() ? 0 : r[0].as_u32();
  }
  std::string trap(const char* name, std::vector<Val> args) {
    return test::trap_message(store, instance.func(name), std::move(args));
  }

  Engine engine{testing_support::test_engine_config()};
  Component component;
  Store store{engine};
  Instance instance = Linker().instantiate(store, component);
};

TEST_F(AsyncTest, HostCallsACallbackExportThatYieldsBeforeReturning) {
  EXPECT_EQ(call_u32("add-one", {Val::u32(41)}), 42u);
  EXPECT_EQ(call_u32("add-one", {Val::u32(0)}), 1u) << "a second task of the same instance";
}

TEST_F(AsyncTest, HostCallsAStackfulExportThatYieldsInTheMiddleOfCoreCode) {
  EXPECT_EQ(call_u32("double", {Val::u32(21)}), 42u);
}

TEST_F(AsyncTest, AsyncLowerReturnsASubtaskThatAWaitableSetReports) {
  EXPECT_EQ(call_u32("add-one-then-100", {Val::u32(1)}), 102u);
}

TEST_F(AsyncTest, ReadyTasksRunInTheOrderTheyStartedWaiting) {
  // The scheduler is FIFO: three subtasks that each yield once return in
  // the order they were started.
  EXPECT_EQ(call_u32("arrival-order", {Val::u32(0)}), 123u);
}

TEST_F(AsyncTest, SynchronousLowerOfAnAsyncFunctionBlocksItsCaller) {
  EXPECT_EQ(call_u32("double-blocking", {Val::u32(5)}), 10u);
}

TEST_F(AsyncTest, ATaskOfASynchronousTypeCannotBlock) {
  EXPECT_NE(trap("double-in-sync-task", {Val::u32(5)}).find("cannot block a synchronous task"), std::string::npos);
}

// On a fiber's stack too: the interpreter counts its frames, compiled code
// checks the fiber's own stack limit (a crash on its guard page otherwise).
TEST_F(AsyncTest, DeepRecursionOnAFiberTraps) {
  EXPECT_NE(trap("recurse-on-fiber", {}).find("call stack exhausted"), std::string::npos);
  // The instance is poisoned by its trap; another store runs as before.
  Store other(engine);
  Instance i = Linker().instantiate(other, component);
  const std::vector<Val> args{Val::u32(4)};
  EXPECT_EQ(i.func("double").call(other, args).at(0), Val::u32(8));
}

TEST_F(AsyncTest, WaitingOnNothingIsADeadlock) {
  EXPECT_NE(trap("wait-forever", {}).find("deadlock"), std::string::npos);
}

TEST_F(AsyncTest, AStoreWithATaskSuspendedInCoreCodeIsDestroyedCleanly) {
  // The fiber of wait-forever-stackful stays suspended inside core wasm;
  // the store unwinds it when it goes (AddressSanitizer checks the rest).
  {
    Store other(engine);
    Instance i = Linker().instantiate(other, component);
    EXPECT_ERROR(i.func("wait-forever-stackful").call(other, {}), ErrorKind::Trap);
  }
  EXPECT_EQ(call_u32("double", {Val::u32(4)}), 8u) << "the engine is still usable";
}

TEST_F(AsyncTest, PostReturnSeesTheContextSlotsOfItsTask) {
  EXPECT_EQ(call_u32("set-context", {}), 7u);
  EXPECT_EQ(call_u32("seen", {}), 42u);
  EXPECT_EQ(call_u32("fresh-context", {}), 0u) << "every task starts with zeroed slots";
}

TEST_F(AsyncTest, BuiltinsThatLeaveTheInstanceTrapInPostReturn) {
  EXPECT_NE(trap("leave-in-post-return", {}).find("cannot leave component instance"), std::string::npos);
  EXPECT_NE(trap("seen", {}).find("cannot enter component instance"), std::string::npos)
      << "the trap poisoned the instance";
}

class StreamsTest : public AsyncTest {
 protected:
  StreamsTest() : AsyncTest("async-streams") {}
};

TEST_F(StreamsTest, StringsStreamFromOneComponentsMemoryIntoAnothers) {
  // Ten strings of 1..10 letters (55 letters), written one at a time while
  // the reader asks for two at a time.
  EXPECT_EQ(call_u32("count-letters", {Val::u32(10)}), 10u * 1000 + 55);
}

TEST_F(StreamsTest, AnEmptyStreamEndsWithTheWritersDrop) {
  EXPECT_EQ(call_u32("count-letters", {Val::u32(0)}), 0u);
}

TEST_F(StreamsTest, AFutureCarriesOneValue) {
  EXPECT_EQ(call_u32("read-triple", {Val::u32(14)}), 42u);
  EXPECT_EQ(call_u32("read-triple", {Val::u32(0)}), 0u);
}

class ControlTest : public AsyncTest {
 protected:
  ControlTest() : AsyncTest("async-control") {}
};

TEST_F(ControlTest, CancellingAWaitingSubtaskDeliversTaskCancelledToItsCallback) {
  // The callee's callback acknowledges with task.cancel.
  EXPECT_EQ(call_u32("cancel-a-subtask", {Val::u32(0)}), 4u) << "CANCELLED_BEFORE_RETURNED";
}

TEST_F(ControlTest, BackpressureHoldsATaskInStartingUntilLifted) {
  // STARTING (0) while held, then RETURNED (2) with the echoed 7.
  EXPECT_EQ(call_u32("backpressure", {Val::u32(0)}), 0u * 1000 + 2 * 100 + 7);
}

TEST_F(ControlTest, AnErrorContextKeepsItsDebugMessageAcrossComponents) {
  EXPECT_EQ(call_u32("error-message-length", {}), 4u) << "\"boom\"";
}

TEST_F(ControlTest, AThreadOfASynchronousTaskRunsWhenSwitchedTo) {
  EXPECT_EQ(call_u32("run-a-thread", {}), 42u);
}

// The host cancels its own calls (PendingCall::cancel) as a caller's
// subtask.cancel does.
TEST_F(ControlTest, TheHostCancelsACallThatWaitsAndItsCallbackAcknowledges) {
  const std::vector<Val> args{Val::u32(1)};
  PendingCall call = instance.func("wait-for-cancel").call_async(store, args);
  store.run_until_idle();
  ASSERT_FALSE(call.done());
  call.cancel(store);
  store.run_until_idle();
  EXPECT_TRUE(call.done());
  EXPECT_TRUE(call.cancelled());
  expect_error(ErrorKind::Usage, [&] { call.results(); }, "cancelled");
  call.cancel(store);  // once done: nothing
}

TEST_F(ControlTest, TheHostCancelsACallBackpressureHoldsBeforeItStarts) {
  instance.func("hold").call(store, {});
  const std::vector<Val> seven{Val::u32(7)};
  PendingCall held = instance.func("echo").call_async(store, seven);
  store.run_until_idle();
  ASSERT_FALSE(held.done());
  held.cancel(store);
  store.run_until_idle();
  EXPECT_TRUE(held.done());
  EXPECT_TRUE(held.cancelled());
  instance.func("release").call(store, {});
  EXPECT_EQ(call_u32("echo", seven), 7u) << "the instance serves on";
}

TEST_F(ControlTest, CancellingACallThatReturnedDoesNothing) {
  const std::vector<Val> seven{Val::u32(7)};
  PendingCall call = instance.func("echo").call_async(store, seven);
  EXPECT_EQ(call.wait(store).at(0), Val::u32(7));
  call.cancel(store);
  EXPECT_FALSE(call.cancelled());
}

}  // namespace
}  // namespace cmhost
