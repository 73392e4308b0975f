// The host's end of a stream or future (CanonicalABI.md "Stream State",
// "Future State", with the host as one side).
//
// A host end never parks a buffer of its own: a host copy waits until the
// guest's copy is parked in the shared state, then reads or writes the
// elements in place in the guest's memory (lifted, visited or viewed by the
// caller's step), so the only copy is the one the host makes. The rules
// are the spec's: a guest's write meeting a host read that takes fewer
// elements stays parked for the next read; a zero-length copy only says
// the other side is ready; one copy in flight per end.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cmhost/abi.hpp"
#include "cmhost/function_ref.hpp"
#include "event_loop.hpp"
#include "runtime/runtime.hpp"
#include "runtime/streams.hpp"

namespace cmhost::host {

using abi::CopyOutcome;
using abi::CopyStatus;

// One step of a copy: the guest's elements [ptr, ptr + n * size) in `cx`
// (the guest's memory and options); returns how many it took (a read) or
// wrote (a write), at most n.
using CopyStep = FunctionRef<uint64_t(abi::AbiContext& cx, uint64_t ptr, uint64_t n)>;

class HostEnd {
 public:
  enum class Kind : uint8_t { StreamReader, StreamWriter, FutureReader, FutureWriter };

  HostEnd(runtime::Store& store, HostLoop& loop, Kind kind, std::shared_ptr<runtime::SharedChannel> channel);
  // Drops the end (the guest's parked copy, if any, sees DROPPED).
  ~HostEnd();
  HostEnd(const HostEnd&) = delete;
  HostEnd& operator=(const HostEnd&) = delete;

  // A readable end the host received (`host_handle` in the store's host
  // table, taken out of it), or a new stream or future whose readable end
  // goes into the host table for the host to pass to a guest.
  // `accepts` checks the element type first (and throws), so a refused end
  // stays where it was.
  using ElementCheck = FunctionRef<void(const abi::TypeRef& element)>;
  static std::unique_ptr<HostEnd> take_readable(runtime::Store& store, HostLoop& loop, uint32_t host_handle,
                                                bool stream, ElementCheck accepts);
  static std::unique_ptr<HostEnd> make_writable(runtime::Store& store, HostLoop& loop, abi::TypeRef element,
                                                bool stream, uint32_t& readable_handle);

  Kind kind() const { return kind_; }
  bool is_stream() const { return kind_ == Kind::StreamReader || kind_ == Kind::StreamWriter; }
  bool reads() const { return kind_ == Kind::StreamReader || kind_ == Kind::FutureReader; }
  const abi::TypeRef& element() const { return channel_->elem; }
  // Whether the end is done: the other end dropped, the future's value
  // moved, or the host closed it.
  bool ended() const { return ended_; }
  bool busy() const { return copy_.has_value(); }
  bool closed() const { return closed_; }
  // Whether its store still exists.
  bool alive() const { return *alive_; }
  // Elements moved through this end so far.
  uint64_t transferred() const { return transferred_; }

  // Copies up to `count` elements (a read stops after one guest write; a
  // write goes on until all are written), running the store's event loop
  // until the copy ends. Error (Usage) while another copy is in flight, on
  // a closed or ended end, or inside a guest's call; a trap in the loop is
  // rethrown saying how many elements this end moved.
  CopyOutcome run(uint64_t count, CopyStep step);
  // Error (Usage) unless a copy may start now (store alive, none in
  // flight, not inside its own step, not closed or ended).
  void check_startable() const;
  // Starts the copy and returns; `done` runs from the event loop (or at
  // once) when it ends. `step` must live until then.
  void start(uint64_t count, CopyStep step, std::function<void(CopyOutcome)> done);
  // Cancels the copy in flight: its outcome, with the progress made.
  // Error (Usage) when none is in flight.
  CopyOutcome cancel();
  // Drops the end: Error (Usage) while a copy is in flight, or for a
  // future's writable end not yet written.
  void close();

  // Advances the copy in flight (called by the loop): true when it ended
  // or made progress.
  bool try_progress();
  // Forgets the copy in flight without an outcome (it failed).
  void abandon();
  // The store is going: the copy in flight lets go of its callbacks, which
  // may hold this very end (so nothing is touched after).
  void store_gone() {
    const std::optional<Copy> gone = std::move(copy_);
    copy_.reset();
  }

 private:
  struct Copy {
    uint64_t count;
    CopyStep step;
    uint64_t progress = 0;
    std::function<void(CopyOutcome)> done;
    bool in_loop = false;
  };
  // The end of the copy in flight: leaves the loop, runs `done`.
  void finish(CopyStatus status);
  bool try_stream_read(Copy& copy, runtime::PendingCopy& pending);
  bool try_stream_write(Copy& copy, runtime::PendingCopy& pending);
  // Runs the step on the pending guest buffer; Error (Usage) when the step
  // touched this end or the stream (its copy is over then).
  uint64_t step_in_place(Copy& copy, runtime::GuestBuffer& buffer, uint64_t n);
  void check_not_stepping(const char* what) const;
  const char* what() const;  // "the host's read of a stream", ...: a literal

  runtime::Store& store_;
  HostLoop& loop_;
  std::shared_ptr<const bool> alive_;  // false once the store is gone
  Kind kind_;
  std::shared_ptr<runtime::SharedChannel> channel_;
  std::optional<Copy> copy_;
  CopyOutcome last_;
  uint64_t transferred_ = 0;
  bool ended_ = false;
  bool closed_ = false;
  bool stepping_ = false;  // a step runs: the end refuses operations on itself
};

}  // namespace cmhost::host
