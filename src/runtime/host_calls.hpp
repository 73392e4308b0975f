// Async host functions: a host import that completes later (CanonicalABI.md
// "canon lower" with the callee as a subtask the host resolves).
//
// The guest sees the subtask protocol of an async lower: STARTED with a
// subtask handle, then RETURNED through its waitable set once the host
// completes; a synchronous lower waits for the completion. The host may
// complete during the call, later from the event loop, or from another OS
// thread: completing posts the delivery to the loop's thread (PostBox),
// where results are lowered into the caller.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmhost/abi.hpp"
#include "cmhost/error.hpp"
#include "runtime/runtime.hpp"

namespace cmhost::runtime {

// Work handed to an event loop's thread from any thread.
class PostBox {
 public:
  PostBox();
  ~PostBox();
  PostBox(const PostBox&) = delete;
  PostBox& operator=(const PostBox&) = delete;
  struct Posted {
    std::function<void()> work;
    bool ends_call = false;  // the completion of one outstanding host call
  };
  // False (and the work dropped) once the loop is gone.
  bool post(std::function<void()> work, bool ends_call);
  // Moves what was posted into `out` (empty when nothing was).
  void take(std::vector<Posted>& out);
  // Puts back work that did not run, ahead of anything posted since.
  void put_back(std::vector<Posted>& rest);
  // Waits until something is posted.
  void wait();
  // Readable once something was posted since the last drain_wake(): what a
  // loop sleeping in poll(2) on other descriptors too watches.
  int wake_fd() const { return wake_fd_; }
  void drain_wake();
  bool empty();
  void close();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Posted> posted_;
  bool closed_ = false;
  int wake_fd_;  // an eventfd
};

class Subtask;
struct LowerSite;

// The completion of one async host call, shared by the host's callable and
// the loop. complete() may be called from any thread, once.
class HostCompletion : public std::enable_shared_from_this<HostCompletion> {
 public:
  HostCompletion(const LowerSite& site, std::shared_ptr<const validate::FuncType> type,
                 std::span<const uint64_t> params, std::shared_ptr<Subtask> subtask, std::shared_ptr<PostBox> box,
                 std::string name);
  // Never completed: the guest's call traps when the loop sees it.
  ~HostCompletion();

  // Error (Usage) when completed before; results are checked on delivery.
  void complete(std::vector<abi::Val> results);
  void fail(std::string message);
  // On the store's thread: `hook` runs when the caller asks to cancel the
  // call (once; at once when it asked already), and cancel() then resolves
  // it as cancelled before returning (Error Usage unless it was asked).
  void on_cancel(std::function<void()> hook);
  void cancel();

  // Called by the lowered call once the host callable returned: delivers a
  // completion made during the call now; true when it did.
  bool deliver_if_completed();
  // The callable threw: the call failed with it, nothing is delivered.
  void abandon();

 private:
  void deliver();
  void post_delivery();
  // Fails the guest's call: a synchronous caller traps as it wakes; an
  // async caller's instance is poisoned and the embedder's loop reports it.
  static void fail_call(const LowerSite& site, Subtask& subtask, Error error);

  std::shared_ptr<const LowerSite> site_;
  std::shared_ptr<const validate::FuncType> type_;
  std::vector<uint64_t> params_;
  std::weak_ptr<Subtask> subtask_;
  std::shared_ptr<PostBox> box_;
  std::string name_;
  std::mutex mutex_;
  std::optional<std::vector<abi::Val>> results_;
  std::optional<std::string> failure_;
  bool cancelled_ = false;
  bool in_cancel_hook_ = false;  // on the store's thread, inside the guest's subtask.cancel
  bool in_call_ = true;
  bool delivered_ = false;
  bool abandoned_ = false;
};

}  // namespace cmhost::runtime
