// Async host functions (Linker::define_async_func) and the event loop the
// embedder drives, against tests/components/host-async.wat: a stackful and
// a callback guest see the subtask protocol of an async lower, completions
// in another order than the calls, during the call, from other threads; a
// synchronous lower waits while the loop waits for the completion.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/host_async_types.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"
#include "cmhost/streams.hpp"

namespace cmhost {
namespace {

using abi::Type;

using testing_support::count_bytes_type;
using testing_support::slow_double_type;

// count-bytes: reads the stream it is given, one read after another from
// the event loop (the host function has returned by then), and completes
// with the byte count when the guest drops its end.
class ByteCounter : public std::enable_shared_from_this<ByteCounter> {
 public:
  ByteCounter(Store& store, const Val& stream, Completion done)
      : store_(store), reader_(store, stream), done_(std::move(done)) {}
  void next() {
    auto self = shared_from_this();
    reader_.start_in_place(
        store_, std::numeric_limits<uint64_t>::max(),
        [self](abi::AbiContext&, uint64_t, uint64_t n) {
          self->total_ += n;
          return n;
        },
        [self](CopyOutcome outcome) {
          if (outcome.status == CopyStatus::Dropped)
            self->done_.complete({Val::u32(static_cast<uint32_t>(self->total_))});
          else
            self->next();
        });
  }

 private:
  Store& store_;
  StreamReader<uint8_t> reader_;
  Completion done_;
  uint64_t total_ = 0;
};

class AsyncHost : public ::testing::Test {
 protected:
  struct Call {
    uint32_t x;
    Completion completion;
  };

  AsyncHost() : component(Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-async.wasm")) {
    linker.define_async_func("slow-double", slow_double_type(), [this](Caller& caller, std::span<const Val> args, Completion c) {
      const uint32_t x = args[0].as_u32();
      if (mode == Mode::AtOnce) return c.complete({Val::u32(2 * x)});
      if (mode == Mode::OnAThread) {
        threads.emplace_back([c, x]() mutable {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          c.complete({Val::u32(2 * x)});
        });
        return;
      }
      if (mode == Mode::OnATimer) {
        caller.store().when_time(std::chrono::steady_clock::now() + std::chrono::milliseconds(20),
                                 [c, x]() mutable { c.complete({Val::u32(2 * x)}); });
        return;
      }
      if (mode == Mode::Dropped) return;
      if (mode == Mode::Failing) return c.fail("no doubling today");
      if (mode == Mode::Throwing) throw std::runtime_error("the host function broke");
      calls.push_back({x, std::move(c)});
    });
    linker.define_async_func("count-bytes", count_bytes_type(), [](Caller& caller, std::span<const Val> args, Completion c) {
      std::make_shared<ByteCounter>(caller.store(), args[0], std::move(c))->next();
    });
  }
  ~AsyncHost() override {
    for (auto& t : threads) t.join();
  }
  Instance& instance() {
    if (!instance_) instance_ = linker.instantiate(store, component);
    return *instance_;
  }
  PendingCall start(const char* name, uint32_t a, uint32_t b) {
    const std::vector<Val> args{Val::u32(a), Val::u32(b)};
    return instance().func(name).call_async(store, args);
  }

  enum class Mode { Later, AtOnce, OnAThread, OnATimer, Dropped, Failing, Throwing };
  Mode mode = Mode::Later;
  std::vector<Call> calls;
  std::vector<std::thread> threads;
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Component component;
  Linker linker;
  std::optional<Instance> instance_;
};

TEST_F(AsyncHost, AStackfulGuestSeesCompletionsInAnotherOrderThanItsCalls) {
  PendingCall pair = start("stackful-pair", 3, 5);
  store.run_until_idle();
  ASSERT_EQ(calls.size(), 2u) << "both calls started before either completed";
  EXPECT_FALSE(pair.done());
  EXPECT_EQ(calls[1].x, 5u);
  calls[1].completion.complete({Val::u32(10)});
  store.run_until_idle();
  EXPECT_FALSE(pair.done()) << "one of two returned";
  calls[0].completion.complete({Val::u32(6)});
  EXPECT_EQ(pair.wait(store).at(0), Val::u32(2'006'010)) << "b returned first";
}

TEST_F(AsyncHost, ACallbackGuestToo) {
  PendingCall pair = start("callback-pair", 3, 5);
  store.run_until_idle();
  ASSERT_EQ(calls.size(), 2u);
  calls[1].completion.complete({Val::u32(10)});
  store.run_until_idle();  // the guest's callback sees b's return before a's completes
  calls[0].completion.complete({Val::u32(6)});
  EXPECT_EQ(pair.wait(store).at(0), Val::u32(2'006'010));

  calls.clear();
  PendingCall in_order = start("callback-pair", 1, 2);
  store.run_until_idle();
  ASSERT_EQ(calls.size(), 2u);
  calls[0].completion.complete({Val::u32(2)});
  store.run_until_idle();
  calls[1].completion.complete({Val::u32(4)});
  EXPECT_EQ(in_order.wait(store).at(0), Val::u32(1'002'004));
}

TEST_F(AsyncHost, CompletedDuringTheCallReturnsAtOnce) {
  mode = Mode::AtOnce;
  EXPECT_EQ(start("stackful-pair", 4, 7).wait(store).at(0), Val::u32(1'008'014));
  EXPECT_EQ(start("callback-pair", 4, 7).wait(store).at(0), Val::u32(1'008'014));
}

TEST_F(AsyncHost, CompletionsFromOtherThreadsWakeTheLoop) {
  mode = Mode::OnAThread;
  EXPECT_EQ(start("stackful-pair", 10, 20).wait(store).at(0).as_u32() % 1'000'000, 20'040u);
  // A synchronous lower: the synchronous task waits, the loop waits for the thread.
  const std::vector<Val> args{Val::u32(21)};
  EXPECT_EQ(instance().func("sync-double").call(store, args).at(0), Val::u32(42));
}

// The same completions from the store's own timers (Store::when_time): no
// thread, and the loop sleeps until they are due, in a synchronous lower too.
TEST_F(AsyncHost, CompletionsFromTheStoresTimersNeedNoThread) {
  mode = Mode::OnATimer;
  const auto start_time = std::chrono::steady_clock::now();
  EXPECT_EQ(start("stackful-pair", 10, 20).wait(store).at(0).as_u32() % 1'000'000, 20'040u);
  EXPECT_EQ(start("callback-pair", 1, 2).wait(store).at(0), Val::u32(1'002'004));
  const std::vector<Val> args{Val::u32(21)};
  EXPECT_EQ(instance().func("sync-double").call(store, args).at(0), Val::u32(42));
  EXPECT_GE(std::chrono::steady_clock::now() - start_time, std::chrono::milliseconds(60)) << "three waits of 20 ms";
  EXPECT_TRUE(threads.empty());
}

// Store::drive: one thread, several stores. The driven store's guests and
// its completions (its own timers, other threads) go on while the driver's
// loop runs, and wake the driver when it sleeps.
TEST_F(AsyncHost, ADrivenStoresGuestsRunInTheDriversLoop) {
  Store driver{engine};
  std::vector<std::string> traps;
  driver.drive(store, [&](const Error& trap) { traps.push_back(trap.what()); });
  // One call at a time: the guest keeps a call's state in globals.
  mode = Mode::OnATimer;
  PendingCall stackful = start("stackful-pair", 10, 20);
  driver.run_until([&] { return stackful.done(); });
  EXPECT_EQ(stackful.wait(store).at(0).as_u32() % 1'000'000, 20'040u);
  PendingCall callback = start("callback-pair", 1, 2);
  driver.run_until([&] { return callback.done(); });
  EXPECT_EQ(callback.wait(store).at(0), Val::u32(1'002'004));
  mode = Mode::OnAThread;
  PendingCall threaded = start("stackful-pair", 1, 2);
  driver.run_until([&] { return threaded.done(); });
  EXPECT_EQ(threaded.wait(store).at(0).as_u32() % 1'000'000, 2'004u);
  EXPECT_TRUE(traps.empty());
}

TEST_F(AsyncHost, ADrivenStoresTrapGoesToItsCallbackAndTheDriverGoesOn) {
  Store driver{engine};
  std::vector<std::string> traps;
  driver.drive(store, [&](const Error& trap) { traps.push_back(trap.what()); });
  PendingCall failing = start("stackful-pair", 1, 2);
  ASSERT_EQ(calls.size(), 2u);
  bool timer_fired = false;
  driver.when_time(std::chrono::steady_clock::now() + std::chrono::milliseconds(5), [&] {
    timer_fired = true;
    calls[0].completion.fail("no doubling today");
  });
  driver.run_until([&] { return !traps.empty() && timer_fired; });
  ASSERT_EQ(traps.size(), 1u);
  EXPECT_NE(traps[0].find("no doubling today"), std::string::npos) << traps[0];
}

TEST_F(AsyncHost, DrivingIsOneWayAndEndsWithEitherStore) {
  Store driver{engine};
  const auto ignore = [](const Error&) {};
  EXPECT_ERROR_SAYING(driver.drive(driver, ignore), ErrorKind::Usage, "its own loop");
  driver.drive(store, ignore);
  EXPECT_ERROR_SAYING(store.drive(driver, ignore), ErrorKind::Usage, "cannot drive each other");
  Store other{engine};
  EXPECT_ERROR_SAYING(other.drive(store, ignore), ErrorKind::Usage, "driven by another");
  {
    Store short_lived{engine};
    driver.drive(short_lived, ignore);
    bool fired = false;
    short_lived.when_time(std::chrono::steady_clock::now(), [&] { fired = true; });
    driver.run_until([&] { return fired; });
  }
  EXPECT_NO_THROW(driver.run_until_idle()) << "a driven store that went is forgotten";
  driver.stop_driving(store);
  EXPECT_NO_THROW(other.drive(store, ignore)) << "stopped: another may drive it";
  mode = Mode::AtOnce;
  EXPECT_EQ(start("callback-pair", 1, 2).wait(store).at(0), Val::u32(1'002'004)) << "its own loop runs it alone too";
}

TEST_F(AsyncHost, AHostFunctionReadsAStreamItsGuestWritesMeanwhile) {
  EXPECT_EQ(start("send-bytes", 1000, 64).wait(store).at(0), Val::u32(1000));
  EXPECT_EQ(start("send-bytes", 0, 64).wait(store).at(0), Val::u32(0));
}

TEST_F(AsyncHost, ACompletionDroppedUncompletedTrapsTheCall) {
  mode = Mode::Dropped;
  PendingCall pair = start("stackful-pair", 1, 1);
  EXPECT_ERROR_SAYING(pair.wait(store), ErrorKind::Trap, "dropped its completion without completing");
}

TEST_F(AsyncHost, ASynchronousCallerTrapsWhenItsHostCallFails) {
  mode = Mode::Failing;
  const std::vector<Val> args{Val::u32(2)};
  EXPECT_ERROR_SAYING(instance().func("sync-double").call(store, args), ErrorKind::Trap,
                      "the host function `slow-double` failed: no doubling today");
  EXPECT_ERROR_SAYING(instance().func("sync-double").call(store, args), ErrorKind::Trap, "cannot enter")
      << "the caller's instance is poisoned";
  EXPECT_NO_THROW(store.run_until_idle()) << "nothing is left for the loop to report";
}

TEST_F(AsyncHost, ACallableThatThrowsFailsItsCallOnce) {
  mode = Mode::Throwing;
  const std::vector<Val> args{Val::u32(2)};
  EXPECT_THROW(instance().func("sync-double").call(store, args), std::runtime_error);
  EXPECT_NO_THROW(store.run_until_idle()) << "its dropped completion raises nothing later";
}

TEST_F(AsyncHost, FailingACallTrapsIt) {
  PendingCall pair = start("stackful-pair", 1, 2);
  store.run_until_idle();
  ASSERT_EQ(calls.size(), 2u);
  calls[0].completion.fail("the disk is on fire");
  EXPECT_ERROR_SAYING(pair.wait(store), ErrorKind::Trap, "the disk is on fire");
  EXPECT_ERROR_SAYING(calls[0].completion.complete({Val::u32(1)}), ErrorKind::Usage, "completed before");
}

TEST_F(AsyncHost, ResultsAreCheckedWhenDelivered) {
  PendingCall pair = start("stackful-pair", 1, 2);
  store.run_until_idle();
  ASSERT_EQ(calls.size(), 2u);
  calls[0].completion.complete({});
  EXPECT_ERROR_SAYING(pair.wait(store), ErrorKind::InvalidValue, "completed with 0 results, its type has 1");
}

TEST_F(AsyncHost, APendingCallsResultsOnceDone) {
  PendingCall pair = start("stackful-pair", 1, 2);
  EXPECT_ERROR_SAYING(pair.results(), ErrorKind::Usage, "not returned yet");
  store.run_until_idle();
  for (auto& c : calls) c.completion.complete({Val::u32(c.x * 2)});
  EXPECT_EQ(pair.wait(store).at(0), Val::u32(1'002'004));
  EXPECT_ERROR_SAYING(pair.results(), ErrorKind::Usage, "taken already");
}

// The same imports from C++ callables (Linker::func_wrap_async): arguments
// and results as C++ types, a typed stream handle read with StreamReader,
// and the signature checked against the import at instantiation.
class TypedAsyncHost : public ::testing::Test {
 protected:
  TypedAsyncHost() : component(Component::from_file(engine, std::string(CMHOST_TEST_COMPONENTS) + "/host-async.wasm")) {}
  Instance instantiate() { return linker.instantiate(store, component); }
  static std::vector<Val> args(uint32_t a, uint32_t b) { return {Val::u32(a), Val::u32(b)}; }

  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
  Component component;
  Linker linker;
};

// Counts what a typed stream reader sees until the guest drops its end.
class TypedByteCounter : public std::enable_shared_from_this<TypedByteCounter> {
 public:
  TypedByteCounter(Store& store, abi::typed::Stream<uint8_t> stream, TypedCompletion<uint32_t> done)
      : store_(store), reader_(store, stream), done_(std::move(done)) {}
  void next() {
    reader_.start_read(store_, 4096, [self = shared_from_this()](std::vector<uint8_t> bytes, CopyOutcome outcome) {
      self->total_ += static_cast<uint32_t>(bytes.size());
      if (outcome.status == CopyStatus::Dropped) return self->done_.complete(self->total_);
      self->next();
    });
  }

 private:
  Store& store_;
  StreamReader<uint8_t> reader_;
  TypedCompletion<uint32_t> done_;
  uint32_t total_ = 0;
};

TEST_F(TypedAsyncHost, CallablesCompleteWithCppValues) {
  std::vector<std::pair<uint32_t, TypedCompletion<uint32_t>>> pending;
  linker.func_wrap_async("slow-double", [&](Caller&, uint32_t x, TypedCompletion<uint32_t> done) {
    pending.emplace_back(x, std::move(done));
  });
  linker.func_wrap_async("count-bytes", [](Caller& caller, abi::typed::Stream<uint8_t> s, TypedCompletion<uint32_t> done) {
    std::make_shared<TypedByteCounter>(caller.store(), s, std::move(done))->next();
  });
  Instance instance = instantiate();
  const auto a = args(3, 5);
  PendingCall pair = instance.func("stackful-pair").call_async(store, a);
  store.run_until_idle();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[1].first, 5u);
  pending[1].second.complete(10);
  store.run_until_idle();  // b returns first
  pending[0].second.complete(6);
  EXPECT_EQ(pair.wait(store).at(0), Val::u32(2'006'010));

  const auto b = args(1000, 64);
  EXPECT_EQ(instance.func("send-bytes").call_async(store, b).wait(store).at(0), Val::u32(1000));
}

TEST_F(TypedAsyncHost, ACompletionFromAnotherThread) {
  std::vector<std::thread> threads;
  linker.func_wrap_async("slow-double", [&](Caller&, uint32_t x, TypedCompletion<uint32_t> done) {
    threads.emplace_back([x, done]() mutable { done.complete(2 * x); });
  });
  linker.func_wrap_async("count-bytes", [](Caller&, abi::typed::Stream<uint8_t>, TypedCompletion<uint32_t> done) {
    done.fail("not counting");
  });
  Instance instance = instantiate();
  const std::vector<Val> x{Val::u32(21)};
  EXPECT_EQ(instance.func("sync-double").call(store, x).at(0), Val::u32(42));
  for (auto& t : threads) t.join();
}

TEST_F(TypedAsyncHost, ASignatureThatDoesNotFitIsALinkError) {
  linker.func_wrap_async("slow-double", [](Caller&, std::string, TypedCompletion<uint32_t>) {});
  linker.func_wrap_async("count-bytes", [](Caller&, abi::typed::Stream<uint8_t>, TypedCompletion<uint32_t>) {});
  EXPECT_ERROR_SAYING(instantiate(), ErrorKind::Link, "import `slow-double`");
}

TEST_F(TypedAsyncHost, AStreamOfAnotherElementTypeDoesNotFit) {
  linker.func_wrap_async("slow-double", [](Caller&, uint32_t, TypedCompletion<uint32_t>) {});
  linker.func_wrap_async("count-bytes", [](Caller&, abi::typed::Stream<uint32_t>, TypedCompletion<uint32_t>) {});
  EXPECT_ERROR_SAYING(instantiate(), ErrorKind::Link, "import `count-bytes`");
}

// A guest cancelling its call of an async host function: the host hears of
// it (Completion::on_cancel) and ends the call as cancelled, or completes
// it anyway.
TEST_F(TypedAsyncHost, AHostCallTheGuestCancels) {
  bool honour = true;
  int asked = 0;
  linker.func_wrap_async("slow-double", [&](Caller&, uint32_t x, TypedCompletion<uint32_t> done) {
    done.on_cancel([&asked, &honour, done, x]() mutable {
      ++asked;
      if (honour)
        done.cancel();
      else
        done.complete(2 * x);
    });
    EXPECT_ERROR_SAYING(done.cancel(), ErrorKind::Usage, "may be cancelled only once its caller asked");
  });
  linker.func_wrap_async("count-bytes", [](Caller&, abi::typed::Stream<uint8_t>, TypedCompletion<uint32_t> done) {
    done.complete(0);
  });
  Instance instance = instantiate();
  const std::vector<Val> x{Val::u32(21)};
  EXPECT_EQ(instance.func("cancel-double").call(store, x).at(0), Val::u32(4000)) << "cancelled before returning";
  honour = false;
  EXPECT_EQ(instance.func("cancel-double").call(store, x).at(0), Val::u32(2042)) << "returned despite the request";
  EXPECT_EQ(asked, 2);
}

}  // namespace
}  // namespace cmhost
