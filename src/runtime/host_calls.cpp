#include "host_calls.hpp"

#include <fmt/core.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "call_context.hpp"
#include "cmhost/error.hpp"
#include "canon_lower.hpp"
#include "scheduler.hpp"
#include "waitables.hpp"

namespace cmhost::runtime {

// ---- the post box ----

PostBox::PostBox() : wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0) throw Error(ErrorKind::Usage, std::string("cannot make the event loop's eventfd: ") + std::strerror(errno));
}

PostBox::~PostBox() { ::close(wake_fd_); }

bool PostBox::post(std::function<void()> work, bool ends_call) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    posted_.push_back({std::move(work), ends_call});
  }
  cv_.notify_one();
  const uint64_t one = 1;
  // Only fails when the counter is full, when the loop has a wake-up already.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof one);
  return true;
}

void PostBox::drain_wake() {
  uint64_t count;
  [[maybe_unused]] const ssize_t got = ::read(wake_fd_, &count, sizeof count);  // EAGAIN: nothing to drain
}

void PostBox::take(std::vector<Posted>& out) {
  const std::lock_guard<std::mutex> lock(mutex_);
  out.swap(posted_);
}

void PostBox::put_back(std::vector<Posted>& rest) {
  const std::lock_guard<std::mutex> lock(mutex_);
  posted_.insert(posted_.begin(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
  rest.clear();
}

void PostBox::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [this] { return !posted_.empty(); });
}

bool PostBox::empty() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return posted_.empty();
}

void PostBox::close() {
  std::vector<Posted> dropped;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    dropped.swap(posted_);
  }
  // Destroyed unlocked: work may hold completions whose destructors post.
}

// ---- completions ----

HostCompletion::HostCompletion(const LowerSite& site, std::shared_ptr<const validate::FuncType> type,
                               std::span<const uint64_t> params, std::shared_ptr<Subtask> subtask,
                               std::shared_ptr<PostBox> box, std::string name)
    : site_(std::make_shared<const LowerSite>(site)),
      type_(std::move(type)),
      params_(params.begin(), params.end()),
      subtask_(std::move(subtask)),
      box_(std::move(box)),
      name_(std::move(name)) {}

HostCompletion::~HostCompletion() {
  bool never = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    never = !results_ && !failure_ && !cancelled_;
  }
  if (!never) return;
  if (abandoned_) {  // the call failed as the callable threw: only the count ends
    box_->post([] {}, true);
    return;
  }
  // Dropped uncompleted: the guest's call fails when the loop sees it.
  box_->post(
      [site = site_, weak = subtask_, name = name_] {
        if (std::shared_ptr<Subtask> subtask = weak.lock())
          fail_call(*site, *subtask,
                    Error(ErrorKind::Trap, "the host function `" + name + "` dropped its completion without completing"));
      },
      true);
}

void HostCompletion::complete(std::vector<abi::Val> results) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (results_ || failure_ || cancelled_) throw Error(ErrorKind::Usage, "the call of `" + name_ + "` was completed before");
    results_ = std::move(results);
    if (in_call_) return;  // delivered when the callable returns
  }
  post_delivery();
}

void HostCompletion::fail(std::string message) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (results_ || failure_ || cancelled_) throw Error(ErrorKind::Usage, "the call of `" + name_ + "` was completed before");
    failure_ = std::move(message);
    if (in_call_) return;
  }
  post_delivery();
}

void HostCompletion::on_cancel(std::function<void()> hook) {
  std::shared_ptr<Subtask> subtask = subtask_.lock();
  if (!subtask || subtask->resolved()) return;
  // Run inside the guest's subtask.cancel: a cancel() there resolves the
  // subtask before the built-in returns.
  auto run = [self = weak_from_this(), hook = std::move(hook)] {
    const std::shared_ptr<HostCompletion> completion = self.lock();
    if (!completion) return;
    completion->in_cancel_hook_ = true;
    try {
      hook();
    } catch (...) {
      completion->in_cancel_hook_ = false;
      throw;
    }
    completion->in_cancel_hook_ = false;
  };
  if (subtask->cancellation_requested) return run();
  subtask->on_cancel = std::move(run);
}

void HostCompletion::cancel() {
  std::shared_ptr<Subtask> subtask = subtask_.lock();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (results_ || failure_ || cancelled_)
      throw Error(ErrorKind::Usage, "the call of `" + name_ + "` was completed before");
    if (subtask && !subtask->cancellation_requested)
      throw Error(ErrorKind::Usage, "the call of `" + name_ + "` may be cancelled only once its caller asked");
    cancelled_ = true;
    if (in_call_) return;
  }
  if (in_cancel_hook_) {
    box_->post([] {}, true);  // its outstanding count ends here, not with a delivery
    return deliver();
  }
  post_delivery();
}

void HostCompletion::abandon() {
  const std::lock_guard<std::mutex> lock(mutex_);
  abandoned_ = true;
  in_call_ = false;
}

void HostCompletion::post_delivery() {
  box_->post([self = shared_from_this()] { self->deliver(); }, true);
}

bool HostCompletion::deliver_if_completed() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    in_call_ = false;
    if (!results_ && !failure_ && !cancelled_) return false;
  }
  // Completed during the call: its outstanding count ends with this post,
  // delivered now rather than through the loop.
  box_->post([] {}, true);
  deliver();
  return true;
}

void HostCompletion::fail_call(const LowerSite& site, Subtask& subtask, Error error) {
  if (!site.async) {
    subtask.host_failure = std::move(error);
    return;
  }
  site.inst->state().poisoned = true;
  throw error;
}

void HostCompletion::deliver() {
  if (delivered_) return;
  delivered_ = true;
  std::shared_ptr<Subtask> subtask = subtask_.lock();
  if (!subtask) return;  // the caller is gone
  if (failure_) return fail_call(*site_, *subtask, Error(ErrorKind::Trap, "the host function `" + name_ + "` failed: " + *failure_));
  if (cancelled_) return subtask->resolve(Subtask::State::CancelledBeforeReturned, {});
  const size_t want = type_->result ? 1 : 0;
  if (results_->size() != want)
    return fail_call(*site_, *subtask,
                     Error(ErrorKind::InvalidValue, fmt::format("the host function `{}` completed with {} results, its type has {}",
                                                                name_, results_->size(), want)));
  const LowerSite& site = *site_;
  GuestContext caller(*site.store, *site.inst, site.memory, site.realloc, site.abi->options(), subtask->lenders.get());
  std::vector<uint64_t> out;
  site.abi->lower_results(caller.cx(), *results_, params_, out);
  subtask->resolve(Subtask::State::Returned, std::move(out));
}

}  // namespace cmhost::runtime
