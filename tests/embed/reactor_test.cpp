// The store's waits on descriptors, timers and idleness (Store::when_ready,
// when_time, when_idle, cancel_wait) and its blocking work (run_blocking):
// callbacks run from the event loop on the store's thread, the loop sleeps
// in one epoll_wait(2) for all of them with no thread per wait, a pending wait is not a
// deadlock, a cancelled one is gone, and blocking work stays on a bounded pool.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/expect_error.hpp"
#include "../support/test_engine.hpp"
#include "cmhost/cmhost.hpp"

namespace cmhost {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Both ends of a pipe, closed after.
struct Pipe {
  Pipe() { EXPECT_EQ(::pipe(fds.data()), 0); }
  ~Pipe() {
    for (int fd : fds) ::close(fd);
  }
  int read_end() const { return fds[0]; }
  int write_end() const { return fds[1]; }
  std::array<int, 2> fds{-1, -1};
};

int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}

class Reactor : public ::testing::Test {
 protected:
  Engine engine{testing_support::test_engine_config()};
  Store store{engine};
};

TEST_F(Reactor, ADescriptorWaitFiresOnceTheDescriptorIsReady) {
  Pipe pipe;
  short seen = 0;
  bool fired = false;
  store.when_ready(pipe.read_end(), POLLIN, [&](short revents) {
    seen = revents;
    fired = true;
  });
  store.run_until_idle();
  EXPECT_FALSE(fired) << "nothing to read yet";
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(::write(pipe.write_end(), "x", 1), 1);
  });
  store.run_until([&] { return fired; });  // sleeps in poll, not a deadlock
  writer.join();
  EXPECT_TRUE(seen & POLLIN);
}

TEST_F(Reactor, TimersFireInDeadlineOrderAndNotBefore) {
  const auto start = Clock::now();
  std::vector<int> order;
  // Far enough apart that a loaded machine still sees them one by one.
  store.when_time(start + 300ms, [&] { order.push_back(3); });
  store.when_time(start + 150ms, [&] { order.push_back(2); });
  // Both already due: they fire in deadline order, not in the order made.
  store.when_time(start - 1s, [&] { order.push_back(1); });
  store.when_time(start - 2s, [&] { order.push_back(0); });
  store.run_until_idle();
  EXPECT_EQ(order, (std::vector<int>{0, 1}));
  store.run_until([&] { return order.size() == 4; });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_GE(Clock::now() - start, 300ms);
}

TEST_F(Reactor, ACancelledWaitNeverFiresAndTheLoopThenSeesADeadlock) {
  Pipe pipe;
  bool fired = false;
  const Store::WaitId timer = store.when_time(Clock::now() + 5ms, [&] { fired = true; });
  const Store::WaitId watch = store.when_ready(pipe.read_end(), POLLIN, [&](short) { fired = true; });
  EXPECT_TRUE(store.cancel_wait(timer));
  EXPECT_TRUE(store.cancel_wait(watch));
  EXPECT_FALSE(store.cancel_wait(timer)) << "cancelled already";
  EXPECT_ERROR_SAYING(store.run_until([&] { return fired; }), ErrorKind::Trap, "deadlock detected");
  EXPECT_FALSE(fired);
}

TEST_F(Reactor, ACallbackMayWaitAgain) {
  int ticks = 0;
  std::function<void()> tick = [&] {
    if (++ticks < 5) store.when_time(Clock::now() + 1ms, tick);
  };
  store.when_time(Clock::now(), tick);
  store.run_until([&] { return ticks == 5; });
  EXPECT_EQ(ticks, 5);
}

TEST_F(Reactor, AFiredWaitCannotBeCancelled) {
  bool fired = false;
  const Store::WaitId id = store.when_time(Clock::now(), [&] { fired = true; });
  store.run_until([&] { return fired; });
  EXPECT_FALSE(store.cancel_wait(id));
}

TEST_F(Reactor, HundredsOfWaitsAddNoThread) {
  const int before = thread_count();
  std::vector<Pipe> pipes(200);
  int fired = 0;
  for (const Pipe& p : pipes) store.when_ready(p.read_end(), POLLIN, [&](short) { ++fired; });
  for (int i = 0; i < 200; ++i) store.when_time(Clock::now() + std::chrono::milliseconds(i % 7), [&] { ++fired; });
  for (const Pipe& p : pipes) ASSERT_EQ(::write(p.write_end(), "y", 1), 1);
  store.run_until([&] { return fired == 400; });
  EXPECT_EQ(thread_count(), before);
}

// Blocking work on the pool: the loop waits for it (no deadlock), runs its
// continuation on the store's thread, hands over what the work threw, and
// the pool's threads stay bounded however much work there is.
TEST_F(Reactor, BlockingWorkRunsOnTheBoundedPoolAndContinuesOnTheLoop) {
  const std::thread::id loop_thread = std::this_thread::get_id();
  int done = 0;
  std::vector<std::thread::id> workers;
  std::mutex workers_mutex;
  const int before = thread_count();
  for (int i = 0; i < 40; ++i)
    store.run_blocking(
        [&] {
          std::this_thread::sleep_for(2ms);
          const std::lock_guard<std::mutex> lock(workers_mutex);
          workers.push_back(std::this_thread::get_id());
        },
        [&](std::exception_ptr failure) {
          EXPECT_FALSE(failure);
          EXPECT_EQ(std::this_thread::get_id(), loop_thread);
          ++done;
        });
  store.run_until([&] { return done == 40; });
  EXPECT_LE(thread_count(), before + 4) << "at most four pool threads";
  for (const auto& id : workers) EXPECT_NE(id, loop_thread);
  std::exception_ptr seen;
  store.run_blocking([] { throw std::runtime_error("the disk is gone"); }, [&](std::exception_ptr f) { seen = f; });
  store.run_until([&] { return seen != nullptr; });
  EXPECT_THROW(std::rethrow_exception(seen), std::runtime_error);
  EXPECT_ERROR_SAYING(store.run_blocking(nullptr, [](std::exception_ptr) {}), ErrorKind::Usage, "needs the work");
}

TEST_F(Reactor, BadWaitsAreUsageErrors) {
  EXPECT_ERROR_SAYING(store.when_ready(-1, POLLIN, [](short) {}), ErrorKind::Usage, "descriptor -1, which is none");
  EXPECT_ERROR_SAYING(store.when_ready(0, POLLIN, nullptr), ErrorKind::Usage, "no callback");
  EXPECT_ERROR_SAYING(store.when_time(Clock::now(), nullptr), ErrorKind::Usage, "no callback");
  EXPECT_ERROR_SAYING(store.when_idle(nullptr), ErrorKind::Usage, "no callback");
}

// Two waits on one descriptor for different events: each fires on its own.
TEST_F(Reactor, WaitsForReadingAndWritingOneDescriptorFireApart) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  bool readable = false, writable = false;
  store.when_ready(fds[0], POLLIN, [&](short revents) { readable = revents & POLLIN; });
  store.when_ready(fds[0], POLLOUT, [&](short revents) { writable = revents & POLLOUT; });
  store.run_until([&] { return writable; });
  EXPECT_FALSE(readable) << "nothing was sent";
  ASSERT_EQ(::write(fds[1], "z", 1), 1);
  store.run_until([&] { return readable; });
  ::close(fds[0]);
  ::close(fds[1]);
}

// Two waits ready at once, the first cancelling the second: it never fires.
TEST_F(Reactor, AReadyWaitCancelledByAnEarlierCallbackNeverFires) {
  Pipe first, second;
  ASSERT_EQ(::write(first.write_end(), "a", 1), 1);
  ASSERT_EQ(::write(second.write_end(), "b", 1), 1);
  int fired = 0;
  std::optional<Store::WaitId> a, b;
  bool cancelled = false;
  a = store.when_ready(first.read_end(), POLLIN, [&](short) {
    ++fired;
    cancelled = store.cancel_wait(*b);
  });
  b = store.when_ready(second.read_end(), POLLIN, [&](short) {
    ++fired;
    if (!cancelled) cancelled = store.cancel_wait(*a);
  });
  store.run_until_idle();
  EXPECT_EQ(fired, 1);
  EXPECT_TRUE(cancelled);
  // The descriptors serve new waits as before.
  bool again = false;
  store.when_ready(second.read_end(), POLLIN, [&](short) { again = true; });
  store.run_until([&] { return again; });
}

// A callback that fails (a guest's trap) leaves the loop; a wait that was
// ready with it still fires, on the loop's next run.
TEST_F(Reactor, AWaitReadyBesideOneThatFailsStillFires) {
  Pipe first, second;
  ASSERT_EQ(::write(first.write_end(), "a", 1), 1);
  ASSERT_EQ(::write(second.write_end(), "b", 1), 1);
  int fired = 0;
  const auto fail = [&](short) {
    ++fired;
    throw Error(ErrorKind::Trap, "a callback failed");
  };
  store.when_ready(first.read_end(), POLLIN, fail);
  store.when_ready(second.read_end(), POLLIN, fail);
  EXPECT_ERROR_SAYING(store.run_until_idle(), ErrorKind::Trap, "a callback failed");
  EXPECT_EQ(fired, 1);
  bool gave_up = false;
  store.when_time(Clock::now() + 2s, [&] { gave_up = true; });
  EXPECT_ERROR_SAYING(store.run_until([&] { return gave_up; }), ErrorKind::Trap, "a callback failed");
  EXPECT_EQ(fired, 2) << "the other ready wait was lost";
}

// A descriptor waited on, its wait cancelled, then closed: the number's next
// owner is waited on afresh (the loop keeps descriptors registered between
// waits, and closing one removes it behind the loop's back).
TEST_F(Reactor, ADescriptorNumberReusedAfterCloseIsWaitedOnAfresh) {
  Pipe first;
  const int number = first.read_end();
  const Store::WaitId old = store.when_ready(number, POLLIN, [](short) { ADD_FAILURE() << "a cancelled wait fired"; });
  store.run_until_idle();  // registered now
  EXPECT_TRUE(store.cancel_wait(old));
  ::close(first.fds[0]);
  ::close(first.fds[1]);
  first.fds = {-1, -1};
  Pipe second;
  ASSERT_EQ(second.read_end(), number) << "the lowest free number is reused";
  bool fired = false;
  store.when_ready(second.read_end(), POLLIN, [&](short) { fired = true; });
  store.run_until_idle();
  EXPECT_FALSE(fired);
  ASSERT_EQ(::write(second.write_end(), "w", 1), 1);
  bool gave_up = false;  // a wait lost to the loop fails the test, not hangs it
  store.when_time(Clock::now() + 2s, [&] { gave_up = true; });
  store.run_until([&] { return fired || gave_up; });
  EXPECT_TRUE(fired);
}

// A regular file cannot be watched by epoll; as poll(2) has it, it is ready.
TEST_F(Reactor, ARegularFileIsReadyAtOnce) {
  char path[] = "/tmp/cmhost-reactor-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  short seen = 0;
  store.when_ready(fd, POLLIN, [&](short revents) { seen = revents; });
  store.run_until([&] { return seen != 0; });
  EXPECT_TRUE(seen & POLLIN);
  ::close(fd);
}

// An idle wait runs once nothing else is ready, after what is.
TEST_F(Reactor, AnIdleWaitRunsOnceNothingElseIsReady) {
  std::vector<std::string> order;
  store.when_idle([&] { order.push_back("idle"); });
  store.when_time(Clock::now(), [&] { order.push_back("timer"); });
  store.run_until_idle();
  EXPECT_EQ(order, (std::vector<std::string>{"timer", "idle"}));
  const Store::WaitId cancelled = store.when_idle([&] { order.push_back("cancelled"); });
  EXPECT_TRUE(store.cancel_wait(cancelled));
  store.run_until_idle();
  EXPECT_EQ(order.size(), 2u);
}

// A loop that never runs out of work still runs idle waits, a few turns late.
TEST_F(Reactor, AnIdleWaitRunsWhileTheLoopStaysBusy) {
  bool idle_ran = false;
  int turns = 0;
  std::function<void()> busy = [&] {
    ++turns;
    if (!idle_ran && turns < 1000) store.when_time(Clock::now(), busy);
  };
  store.when_idle([&] { idle_ran = true; });
  store.when_time(Clock::now(), busy);
  store.run_until([&] { return idle_ran; });
  EXPECT_LT(turns, 100) << "the idle wait waited for the busy loop to end";
}

}  // namespace
}  // namespace cmhost
