// The store's waits on descriptors and timers, run by its event loop: host
// work that would block (a socket's recv, a sleep, a read of stdin) asks to
// be called back once a descriptor is ready or a time has come, and the
// loop sleeps in one poll(2) over all of them and the post box's wake-up
// descriptor, on the store's thread: no thread per wait.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace cmhost::host {

class Reactor {
 public:
  using Id = uint64_t;

  // `ready(revents)` runs from the loop once `fd` has one of `events`
  // (POLLIN, POLLOUT; an error or a hang-up counts as ready), once.
  Id when_ready(int fd, short events, std::function<void(short revents)> ready);
  // `due()` runs from the loop once the monotonic clock reaches
  // `deadline_ns` (steady_clock, nanoseconds since its epoch), once.
  Id when_time(uint64_t deadline_ns, std::function<void()> due);
  // Forgets a wait that has not fired: false when it fired or never was.
  bool cancel(Id id);

  bool empty() const { return watches_.empty() && timers_.empty(); }
  size_t size() const { return watches_.size() + timers_.size(); }
  // What is waited for, for a deadlock's or an interruption's message.
  std::string describe() const;

  // Runs the callbacks of what is ready now; true when any ran. Callbacks
  // may add and cancel waits.
  bool fire_ready();
  // Sleeps until a watched descriptor is ready, a timer is due, `wake_fd`
  // is readable (something was posted) or `max_ms` passed.
  void sleep(int wake_fd, int max_ms) const;

  static uint64_t now_ns();

 private:
  struct Watch {
    int fd;
    short events;
    std::function<void(short)> ready;
  };
  struct Timer {
    uint64_t deadline;
    std::function<void()> due;
  };
  Id next_id_ = 1;
  std::map<Id, Watch> watches_;
  std::map<Id, Timer> timers_;
};

}  // namespace cmhost::host
