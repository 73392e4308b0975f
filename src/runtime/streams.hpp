// Streams, futures and error-contexts (CanonicalABI.md "Buffer State",
// "Stream State", "Future State" and the stream/future built-ins).
//
// A stream or future is one shared state with a readable and a writable
// end, each end an entry of some instance's table. A copy (read or write)
// that finds no partner parks its buffer in the shared state; the partner's
// copy moves the elements straight from one guest memory to the other
// (compiled ValueCopy programs between components, a byte copy of numbers
// within one) and notifies the parked end through its pending event.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cmhost/abi.hpp"
#include "cmhost/abi/copy.hpp"
#include "runtime/runtime.hpp"
#include "guest_memory.hpp"
#include "waitables.hpp"

namespace cmhost::runtime {

// How a copy ended; its value is the code the copy's event carries.
using abi::CopyStatus;

// The canonical options of a stream or future built-in.
struct CopyOptions {
  std::optional<engine::Extern> memory;
  std::optional<engine::Extern> realloc;
  abi::CanonOptions abi;
  bool async = false;
};

// One side's elements of a copy, in its guest memory.
class GuestBuffer {
 public:
  // Traps unless `ptr` is aligned and the `length` elements fit in memory.
  // `may_leave` is the instance's flag, cleared while its realloc runs.
  GuestBuffer(Store& store, ComponentInstance& inst, bool* may_leave, abi::TypeRef elem, const CopyOptions& options,
              uint64_t ptr, uint64_t length);
  uint64_t remain() const { return length_ - progress_; }
  bool zero_length() const { return length_ == 0; }
  uint64_t progress() const { return progress_; }
  ComponentInstance& inst() const { return inst_; }

  // Moves `n` elements from `src` (a writer's buffer) to `dst` (a reader's).
  static void copy(GuestBuffer& src, GuestBuffer& dst, uint64_t n);

  // For a host end meeting this buffer: where the next element lives, with
  // what options, and `n` elements read or written there in place.
  uint64_t address() const { return ptr_; }
  const CopyOptions& options() const { return options_; }
  Store& store() const { return store_; }
  bool* may_leave() const { return may_leave_; }
  void advance(uint64_t n);

 private:
  Store& store_;
  ComponentInstance& inst_;
  bool* may_leave_;
  abi::TypeRef elem_;
  CopyOptions options_;
  uint64_t ptr_;
  uint64_t length_;
  uint64_t progress_ = 0;
};

class SharedChannel;
class SharedStream;
class SharedFuture;

// A readable or writable end of a stream or future.
class CopyEnd final : public Waitable {
 public:
  enum class State : uint8_t { Idle, Copying, CancellingCopy, Done };
  enum class Kind : uint8_t { StreamReadable, StreamWritable, FutureReadable, FutureWritable };

  CopyEnd(Kind kind, std::shared_ptr<HandleObject> shared) : kind_(kind), shared_(std::move(shared)) {}

  Kind kind() const { return kind_; }
  bool is_stream() const { return kind_ == Kind::StreamReadable || kind_ == Kind::StreamWritable; }
  bool readable() const { return kind_ == Kind::StreamReadable || kind_ == Kind::FutureReadable; }
  HandleKind handle_kind() const;
  const std::shared_ptr<HandleObject>& shared() const { return shared_; }
  SharedChannel& channel() const;
  SharedStream& stream() const;
  SharedFuture& future() const;
  const abi::TypeRef& element_type() const;

  State state = State::Idle;
  bool copying() const { return state == State::Copying || state == State::CancellingCopy; }

  // The copy in progress: its buffer and the table index events name.
  void start_copy(uint32_t index, std::unique_ptr<GuestBuffer> buffer);
  GuestBuffer& buffer() { return *buffer_; }
  // The reference's on_copy (elements moved; the partner's parked buffer
  // is reclaimed when the event is delivered) and on_copy_done.
  void on_copy();
  void on_copy_done(CopyStatus result);
  // CopyEnd.drop: traps while copying; tells the shared state.
  void drop();
  // Its table is going away: a copy it parked must not outlive it (the host
  // may hold the other end longer).
  void detach() override;

 protected:
  Event deliver() override;

 private:
  Kind kind_;
  std::shared_ptr<HandleObject> shared_;
  std::unique_ptr<GuestBuffer> buffer_;
  uint32_t index_ = 0;
  CopyStatus result_ = CopyStatus::Completed;
  bool reclaim_ = false;
};

// What a copy finds parked in the shared state.
struct PendingCopy {
  ComponentInstance* inst = nullptr;
  GuestBuffer* buffer = nullptr;
  CopyEnd* end = nullptr;
  explicit operator bool() const { return buffer != nullptr; }
};

// The host's end of a channel, told when a guest's copy parks there, so
// that a host copy in flight meets it at once, inside the guest's call, as
// a guest peer would (a socket's data lands in the guest's read before it
// returns), rather than on the next turn of the event loop.
class HostSide {
 public:
  virtual void guest_copy_parked() = 0;
  // The guest dropped its end: a host copy in flight ends now, so what it
  // holds (a listening socket, say) goes before the guest's next step.
  virtual void guest_dropped() = 0;

 protected:
  ~HostSide() = default;
};

// What a stream and a future share: the element type, whether the other
// end is gone, and the copy parked while waiting for its partner.
class SharedChannel : public HandleObject {
 public:
  explicit SharedChannel(abi::TypeRef elem) : elem(std::move(elem)) {}
  abi::TypeRef elem;  // as its stream.new / future.new saw it; null without one
  bool dropped = false;
  PendingCopy pending;
  HostSide* host_side = nullptr;  // the host's end, when the host holds one

  void reset_pending() { pending = {}; }
  void reset_and_notify_pending(CopyStatus result);
  void cancel() { reset_and_notify_pending(CopyStatus::Cancelled); }
  void drop();

 protected:
  // The start of every read and write: reports Dropped when the other end
  // is gone, or parks this copy when nothing waits (both: true, done);
  // otherwise checks that the parked copy may meet this one.
  bool finish_or_park(ComponentInstance& inst, GuestBuffer& buffer, CopyEnd& end, const char* what);
  // Parks a guest's copy to wait for its partner, telling the host's end.
  void park(ComponentInstance& inst, GuestBuffer& buffer, CopyEnd& end);
};

class SharedStream final : public SharedChannel {
 public:
  using SharedChannel::SharedChannel;
  void read(ComponentInstance& inst, GuestBuffer& dst, CopyEnd& end);
  void write(ComponentInstance& inst, GuestBuffer& src, CopyEnd& end);
};

class SharedFuture final : public SharedChannel {
 public:
  using SharedChannel::SharedChannel;
  void read(ComponentInstance& inst, GuestBuffer& dst, CopyEnd& end);
  void write(ComponentInstance& inst, GuestBuffer& src, CopyEnd& end);
};

class ErrorContext final : public HandleObject, public std::enable_shared_from_this<ErrorContext> {
 public:
  explicit ErrorContext(std::string message) : debug_message(std::move(message)) {}
  uint64_t held_bytes() const override { return debug_message.size(); }
  std::string debug_message;
};

// Moving readable ends across a call (CallHandles) and the stream/future
// built-ins that need an instance's internals.
class Streams {
 public:
  // lift_async_value: takes the readable end at `index` out of `inst`'s
  // table; returns the shared state for the host table.
  static std::pair<HandleKind, std::shared_ptr<HandleObject>> lift_end(ComponentInstance& inst, const abi::Type& type,
                                                                       uint32_t index);
  // lower_stream / lower_future: a new readable end in `inst`'s table.
  static uint32_t lower_end(ComponentInstance& inst, const abi::Type& type, std::shared_ptr<HandleObject> shared);
};

// Element types of a stream or future seen by two components: equal up to
// the identity of resource types.
bool same_element_type(const abi::TypeRef& a, const abi::TypeRef& b);

}  // namespace cmhost::runtime
