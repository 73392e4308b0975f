// Waits on descriptors and timers for the store's event loop (reactor.hpp).
#include "reactor.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>

#include "cmhost/error.hpp"

namespace cmhost::host {

namespace {

// poll(2), retried when interrupted. Another failure (more descriptors than
// the process may open, no memory) would leave the loop spinning: an error.
int poll_or_throw(std::vector<pollfd>& fds, int timeout) {
  for (;;) {
    const int n = ::poll(fds.data(), fds.size(), timeout);
    if (n >= 0) return n;
    if (errno != EINTR)
      throw Error(ErrorKind::Trap, std::string("the event loop cannot wait on its descriptors: ") + std::strerror(errno));
  }
}

}  // namespace

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
  return id;
}

Reactor::Id Reactor::when_time(uint64_t deadline_ns, std::function<void()> due) {
  if (!due) throw Error(ErrorKind::Usage, "a timer with no callback");
  const Id id = next_id_++;
  timers_.emplace(id, Timer{deadline_ns, std::move(due)});
  return id;
}

bool Reactor::cancel(Id id) { return watches_.erase(id) + timers_.erase(id) > 0; }

std::string Reactor::describe() const {
  std::string out;
  auto add = [&](const std::string& what, size_t n) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  add("descriptor wait", watches_.size());
  add("timer", timers_.size());
  return out;
}

bool Reactor::fire_ready() {
  // What is ready is collected first: callbacks may add or cancel waits.
  std::vector<std::pair<Id, short>> ready;
  if (!watches_.empty()) {
    std::vector<pollfd> fds;
    std::vector<Id> ids;
    for (const auto& [id, watch] : watches_) {
      fds.push_back({watch.fd, watch.events, 0});
      ids.push_back(id);
    }
    const int n = poll_or_throw(fds, 0);
    for (size_t i = 0; n > 0 && i < fds.size(); ++i)
      if (fds[i].revents) ready.emplace_back(ids[i], fds[i].revents);
  }
  // Due timers in deadline order (ids break ties: the earlier wait first).
  std::vector<std::pair<uint64_t, Id>> due;
  const uint64_t now = now_ns();
  for (const auto& [id, timer] : timers_)
    if (timer.deadline <= now) due.emplace_back(timer.deadline, id);
  std::sort(due.begin(), due.end());
  bool ran = false;
  for (const auto& [id, revents] : ready) {
    auto it = watches_.find(id);
    if (it == watches_.end()) continue;  // cancelled by an earlier callback
    const std::function<void(short)> callback = std::move(it->second.ready);
    watches_.erase(it);
    ran = true;
    callback(revents);
  }
  for (const auto& [deadline, id] : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;
    const std::function<void()> callback = std::move(it->second.due);
    timers_.erase(it);
    ran = true;
    callback();
  }
  return ran;
}

void Reactor::sleep(int wake_fd, int max_ms) const {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd, POLLIN, 0});
  for (const auto& [id, watch] : watches_) fds.push_back({watch.fd, watch.events, 0});
  int timeout = max_ms;
  if (!timers_.empty()) {
    uint64_t earliest = UINT64_MAX;
    for (const auto& [id, timer] : timers_) earliest = std::min(earliest, timer.deadline);
    const uint64_t now = now_ns();
    // Rounded up to whole milliseconds: waking early would only spin.
    const uint64_t until = earliest <= now ? 0 : (earliest - now + 999'999) / 1'000'000;
    timeout = timeout < 0 ? static_cast<int>(std::min<uint64_t>(until, INT_MAX))
                          : static_cast<int>(std::min<uint64_t>(until, static_cast<uint64_t>(timeout)));
  }
  poll_or_throw(fds, timeout);
}

}  // namespace cmhost::host
