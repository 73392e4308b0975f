// Waits on descriptors and timers for the store's event loop (reactor.hpp).
#include "reactor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include "cmhost/error.hpp"

namespace cmhost::host {

namespace {

// epoll's event bits are poll's on Linux; these are what waits ask for and
// what they are told.
static_assert(EPOLLIN == POLLIN && EPOLLOUT == POLLOUT && EPOLLERR == POLLERR && EPOLLHUP == POLLHUP &&
              EPOLLPRI == POLLPRI && EPOLLRDHUP == POLLRDHUP);
constexpr uint32_t kToldAlways = POLLERR | POLLHUP;
constexpr uint32_t kWakeGeneration = 0;

uint64_t event_key(int fd, uint32_t generation) {
  return (uint64_t{generation} << 32) | static_cast<uint32_t>(fd);
}

[[noreturn]] void loop_failed(const char* what) {
  throw Error(ErrorKind::Trap, std::string("the event loop cannot wait on its descriptors: ") + what + ": " +
                                   std::strerror(errno));
}

}  // namespace

Reactor::Reactor() : epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)), ready_(64) {
  if (epoll_fd_ < 0) loop_failed("epoll_create1");
}

Reactor::~Reactor() {
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

uint64_t Reactor::now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

Reactor::Id Reactor::when_ready(int fd, short events, std::function<void(short)> ready) {
  if (fd < 0) throw Error(ErrorKind::Usage, "a wait on descriptor " + std::to_string(fd) + ", which is none");
  if (!ready) throw Error(ErrorKind::Usage, "a wait on a descriptor with no callback");
  const Id id = next_id_++;
  watches_.emplace(id, Watch{fd, events, std::move(ready)});
  Descriptor& descriptor = descriptors_[fd];
  descriptor.waits.push_back(id);
  // Registered anew: the descriptor may have been closed, and its number
  // reused, since an armed registration was made for it.
  descriptor.armed = 0;
  changed_.insert(fd);
  return id;
}

Reactor::Id Reactor::when_time(uint64_t deadline_ns, std::function<void()> due) {
  if (!due) throw Error(ErrorKind::Usage, "a timer with no callback");
  const Id id = next_id_++;
  timers_.emplace(TimerKey{deadline_ns, id}, std::move(due));
  timer_deadlines_.emplace(id, deadline_ns);
  return id;
}

Reactor::Id Reactor::when_idle(std::function<void()> idle) {
  if (!idle) throw Error(ErrorKind::Usage, "an idle wait with no callback");
  const Id id = next_id_++;
  idle_.emplace(id, std::move(idle));
  return id;
}

bool Reactor::fire_idle() {
  busy_turns_ = 0;
  if (idle_.empty()) return false;
  const Id last = idle_.rbegin()->first;  // those added meanwhile wait for the next time
  while (!idle_.empty() && idle_.begin()->first <= last) {
    auto it = idle_.begin();
    const std::function<void()> callback = std::move(it->second);
    idle_.erase(it);
    callback();
  }
  return true;
}

bool Reactor::cancel(Id id) {
  if (idle_.erase(id)) return true;
  if (auto it = watches_.find(id); it != watches_.end()) {
    // A wait fire_ready collected as ready, cancelled by an earlier
    // callback, has left its descriptor's list already.
    Descriptor& descriptor = descriptors_[it->second.fd];
    if (auto wait = std::find(descriptor.waits.begin(), descriptor.waits.end(), id); wait != descriptor.waits.end())
      descriptor.waits.erase(wait);
    // A registration left armed fires once more at most, for nobody; the
    // next wait re-arms it, as the descriptor may be closed and its number
    // reused by then.
    if (descriptor.waits.empty()) descriptor.armed = 0;
    watches_.erase(it);
    return true;
  }
  if (auto it = timer_deadlines_.find(id); it != timer_deadlines_.end()) {
    timers_.erase(TimerKey{it->second, id});
    timer_deadlines_.erase(it);
    return true;
  }
  return false;
}

std::string Reactor::describe() const {
  std::string out;
  auto add = [&](const std::string& what, size_t n) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  add("descriptor wait", watches_.size());
  add("timer", timers_.size());
  add("idle wait", idle_.size());
  return out;
}

void Reactor::arm(int fd, Descriptor& descriptor, uint32_t events) {
  epoll_event event{};
  event.events = events | EPOLLONESHOT;
  event.data.u64 = event_key(fd, descriptor.generation);
  // A registered descriptor may have been closed (and its number reused)
  // since: modifying then finds nothing, and it is added anew.
  if (descriptor.registered && ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) == 0) {
    descriptor.armed = events;
    return;
  }
  // ENOENT: closed since (and reused); EBADF: closed; EPERM: reused by a
  // file epoll cannot watch. The addition says which.
  if (descriptor.registered && errno != ENOENT && errno != EBADF && errno != EPERM) loop_failed("epoll_ctl");
  uint32_t generation = next_generation_++;
  if (generation == kWakeGeneration) generation = next_generation_++;
  event.data.u64 = event_key(fd, generation);
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) == 0) {
    descriptor.registered = true;
    descriptor.generation = generation;
    descriptor.armed = events;
    return;
  }
  descriptor.registered = false;
  descriptor.armed = 0;
  if (errno == EPERM) {
    // A regular file or a directory: ready to read and write, as poll(2)
    // has it (and never for anything else).
    if (events & (POLLIN | POLLOUT)) immediate_.emplace_back(fd, static_cast<short>(events & (POLLIN | POLLOUT)));
  } else if (errno == EBADF) {
    immediate_.emplace_back(fd, static_cast<short>(POLLNVAL));
  } else {
    loop_failed("epoll_ctl");
  }
}

void Reactor::rearm() {
  std::unordered_set<int> changed;
  changed.swap(changed_);  // a failure below is not met again on every turn
  for (const int fd : changed) {
    auto it = descriptors_.find(fd);
    if (it == descriptors_.end()) continue;
    Descriptor& descriptor = it->second;
    uint32_t wanted = 0;
    for (const Id id : descriptor.waits) wanted |= static_cast<uint16_t>(watches_.at(id).events);
    // Nothing wanted: an armed registration may fire once, for nobody.
    if (wanted == 0) {
      if (!descriptor.registered && descriptor.armed == 0) descriptors_.erase(it);
      continue;
    }
    if (descriptor.armed == wanted) continue;
    arm(fd, descriptor, wanted);
  }
}

void Reactor::wait_events(int timeout_ms) {
  for (;;) {
    const int n = ::epoll_wait(epoll_fd_, ready_.data(), static_cast<int>(ready_.size()), timeout_ms);
    if (n >= 0) {
      ready_count_ = static_cast<size_t>(n);
      return;
    }
    if (errno != EINTR) loop_failed("epoll_wait");
  }
}

bool Reactor::fire_ready() {
  rearm();
  if (ready_count_ == 0 && !descriptors_.empty()) wait_events(0);
  // What is ready is collected first: callbacks may add or cancel waits.
  std::vector<std::pair<Id, short>> ready;
  const auto collect = [&](int fd, uint32_t revents) {
    auto it = descriptors_.find(fd);
    if (it == descriptors_.end()) return;
    Descriptor& descriptor = it->second;
    std::vector<Id>& waits = descriptor.waits;
    for (size_t i = 0; i < waits.size();) {
      const Watch& watch = watches_.at(waits[i]);
      const uint32_t told = revents & (static_cast<uint16_t>(watch.events) | kToldAlways | POLLNVAL);
      if (!told) {
        ++i;
        continue;
      }
      ready.emplace_back(waits[i], static_cast<short>(told));
      waits.erase(waits.begin() + static_cast<ptrdiff_t>(i));
    }
    changed_.insert(fd);
  };
  for (size_t i = 0; i < ready_count_; ++i) {
    const uint64_t key = ready_[i].data.u64;
    const int fd = static_cast<int>(static_cast<uint32_t>(key));
    const uint32_t generation = static_cast<uint32_t>(key >> 32);
    if (generation == kWakeGeneration) continue;
    auto it = descriptors_.find(fd);
    if (it == descriptors_.end() || it->second.generation != generation) continue;  // a closed descriptor's
    it->second.armed = 0;  // one-shot: fired
    collect(fd, ready_[i].events);
  }
  if (ready_count_ == ready_.size()) ready_.resize(ready_.size() * 2);  // a busier loop next time
  ready_count_ = 0;
  std::vector<std::pair<int, short>> immediate;
  immediate.swap(immediate_);
  for (const auto& [fd, revents] : immediate) collect(fd, static_cast<uint16_t>(revents));

  // Due timers in deadline order.
  std::vector<Id> due;
  const uint64_t now = timers_.empty() ? 0 : now_ns();
  for (const auto& [key, callback] : timers_) {
    if (key.first > now) break;
    due.push_back(key.second);
  }
  bool ran = false;
  size_t next = 0;
  try {
    for (; next < ready.size(); ++next) {
      auto it = watches_.find(ready[next].first);
      if (it == watches_.end()) continue;  // cancelled by an earlier callback
      const std::function<void(short)> callback = std::move(it->second.ready);
      watches_.erase(it);
      ran = true;
      callback(ready[next].second);
    }
  } catch (...) {
    // A callback's failure (a guest's trap) goes to the loop's caller; the
    // waits collected after it wait on, their descriptors asked again.
    for (size_t j = next + 1; j < ready.size(); ++j) {
      auto it = watches_.find(ready[j].first);
      if (it == watches_.end()) continue;
      descriptors_[it->second.fd].waits.push_back(ready[j].first);
      changed_.insert(it->second.fd);
    }
    throw;
  }
  if (!idle_.empty() && ++busy_turns_ >= kBusyTurns) ran = fire_idle() || ran;
  for (const Id id : due) {
    auto deadline = timer_deadlines_.find(id);
    if (deadline == timer_deadlines_.end()) continue;
    auto it = timers_.find(TimerKey{deadline->second, id});
    const std::function<void()> callback = std::move(it->second);
    timers_.erase(it);
    timer_deadlines_.erase(deadline);
    ran = true;
    callback();
  }
  return ran;
}

void Reactor::set_wake_fd(int wake_fd) {
  if (wake_fd == wake_fd_) return;
  if (wake_fd_ >= 0) ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, wake_fd_, nullptr);
  wake_on(wake_fd);
  wake_fd_ = wake_fd;
}

void Reactor::wake_on(int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = event_key(fd, kWakeGeneration);
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0 && errno != EEXIST) loop_failed("epoll_ctl");
}

void Reactor::stop_waking_on(int fd) { ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

void Reactor::sleep(int wake_fd, std::optional<uint64_t> until_ns) {
  set_wake_fd(wake_fd);
  rearm();
  if (ready_count_ > 0 || !immediate_.empty()) return;  // fire_ready has work already
  if (const auto own = next_deadline_ns(); own && (!until_ns || *own < *until_ns)) until_ns = own;
  int timeout = -1;
  if (until_ns) {
    const uint64_t now = now_ns();
    // Rounded up to whole milliseconds: waking early would only spin.
    const uint64_t until = *until_ns <= now ? 0 : (*until_ns - now + 999'999) / 1'000'000;
    timeout = static_cast<int>(std::min<uint64_t>(until, INT_MAX));
  }
  wait_events(timeout);
}

}  // namespace cmhost::host
