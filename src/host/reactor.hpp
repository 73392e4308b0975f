// The store's waits on descriptors and timers, run by its event loop: host
// work that would block (a socket's recv, a sleep, a read of stdin) asks to
// be called back once a descriptor is ready or a time has come, and the
// loop sleeps in one epoll_wait(2) over all of them and the post box's
// wake-up descriptor, on the store's thread: no thread per wait.
//
// Descriptors stay registered with the epoll set between waits (one-shot,
// re-armed with one epoll_ctl per new wait), so a connection that waits
// for its next request costs one system call besides the wait itself,
// however many others are open, where poll(2) looked at every descriptor
// on every turn.
#pragma once

#include <poll.h>
#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace cmhost::host {

class Reactor {
 public:
  using Id = uint64_t;

  Reactor();
  ~Reactor();
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // `ready(revents)` runs from the loop once `fd` has one of `events`
  // (POLLIN, POLLOUT; an error or a hang-up counts as ready), once. A
  // descriptor epoll cannot watch (a regular file) is ready at once, as
  // poll(2) says it is.
  Id when_ready(int fd, short events, std::function<void(short revents)> ready);
  // `due()` runs from the loop once the monotonic clock reaches
  // `deadline_ns` (steady_clock, nanoseconds since its epoch), once.
  Id when_time(uint64_t deadline_ns, std::function<void()> due);
  // `idle()` runs from the loop once nothing else is ready (before it
  // would sleep), or after kBusyTurns turns of a loop that stays busy, once:
  // work that gains from batching (a connection's sends) without waiting
  // for long.
  Id when_idle(std::function<void()> idle);
  // Forgets a wait that has not fired: false when it fired or never was.
  bool cancel(Id id);

  bool empty() const { return watches_.empty() && timers_.empty() && idle_.empty(); }
  size_t size() const { return watches_.size() + timers_.size() + idle_.size(); }
  bool has_idle_waits() const { return !idle_.empty(); }
  // Runs the idle waits (and those they add, on the next call); true when any ran.
  bool fire_idle();
  // What is waited for, for a deadlock's or an interruption's message.
  std::string describe() const;

  // Runs the callbacks of what is ready now; true when any ran. Callbacks
  // may add and cancel waits.
  bool fire_ready();
  // Sleeps until a watched descriptor is ready, a timer is due, `wake_fd`
  // is readable (something was posted), a descriptor given to wake_on is,
  // or the clock reaches `until_ns` (another loop's timer) when given.
  void sleep(int wake_fd, std::optional<uint64_t> until_ns);
  // `wake_fd` joins the set for good (level-triggered, never dispatched):
  // what posts to it makes the set itself readable, for a loop that sleeps
  // on this one's descriptor instead.
  void set_wake_fd(int wake_fd);
  // Another descriptor whose readiness only wakes sleep (another loop's
  // set), until stop_waking_on.
  void wake_on(int fd);
  void stop_waking_on(int fd);
  // The epoll set: readable once a wait is ready, or the wake descriptor.
  int fd() const { return epoll_fd_; }
  // When the earliest timer is due (steady_clock nanoseconds), if any.
  std::optional<uint64_t> next_deadline_ns() const {
    if (timers_.empty()) return std::nullopt;
    return timers_.begin()->first.first;
  }

  static uint64_t now_ns();

 private:
  struct Watch {
    int fd;
    short events;
    std::function<void(short)> ready;
  };
  // A descriptor's state in the epoll set.
  struct Descriptor {
    std::vector<Id> waits;
    uint32_t armed = 0;       // the events of a one-shot registration not yet fired
    bool registered = false;  // added to the set (closing the descriptor removes it unseen)
    uint32_t generation = 0;  // of its latest addition: events of an older one are stale
  };
  using TimerKey = std::pair<uint64_t, Id>;  // deadline, then the earlier wait first

  // Brings the epoll set in line with the waits of descriptors changed since.
  void rearm();
  void arm(int fd, Descriptor& descriptor, uint32_t events);
  // epoll_wait into `ready_`, retried when interrupted.
  void wait_events(int timeout_ms);

  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // registered level-triggered, never dispatched
  Id next_id_ = 1;
  uint32_t next_generation_ = 1;
  std::unordered_map<Id, Watch> watches_;
  std::unordered_map<int, Descriptor> descriptors_;
  std::unordered_set<int> changed_;
  // Readiness epoll cannot report: descriptors it refuses, told at once.
  std::vector<std::pair<int, short>> immediate_;
  std::vector<epoll_event> ready_;  // collected by sleep, dispatched by fire_ready
  size_t ready_count_ = 0;
  std::map<TimerKey, std::function<void()>> timers_;
  static constexpr unsigned kBusyTurns = 16;
  std::map<Id, std::function<void()>> idle_;
  unsigned busy_turns_ = 0;  // fire_ready calls since idle waits last ran
  std::unordered_map<Id, uint64_t> timer_deadlines_;
};

}  // namespace cmhost::host
