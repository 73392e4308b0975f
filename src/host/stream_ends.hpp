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

class HostEnd final : public runtime::HostSide {
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
  bool same_channel(const HostEnd& other) const { return channel_ == other.channel_; }

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
  // A descriptor a copy's step also waits on: the step runs only once the
  // guest's side is pending and `fd` has one of `events`. A step returning
  // 0 would have blocked: the copy stays in flight and waits for the
  // descriptor again. kStepEnded ends the copy and drops the end at once
  // (the host's side is over: the guest's pending copy sees DROPPED). Such
  // a copy ends after one step that moved elements.
  struct Gate {
    int fd = -1;
    short events = 0;
  };
  static constexpr uint64_t kStepEnded = ~uint64_t{0};
  void start(uint64_t count, CopyStep step, std::function<void(CopyOutcome)> done, Gate gate);
  // Cancels the copy in flight: its outcome, with the progress made.
  // Error (Usage) when none is in flight.
  CopyOutcome cancel();
  // Drops the end: Error (Usage) while a copy is in flight, or for a
  // future's writable end not yet written.
  void close();
  // Puts a readable end back into the store's host handle table, where a
  // guest can receive it again: its new handle; this end is then closed
  // without dropping the channel. Error (Usage) for a writable end, while
  // a copy is in flight, on a closed end or a future whose value moved.
  uint32_t release_readable();

  // Advances the copy in flight (called by the loop): true when it ended
  // or made progress.
  bool try_progress();
  // A guest's copy parked on the channel, or the guest dropped its end: the
  // copy in flight meets it now, inside the guest's call; its `done` runs
  // before the guest's next host call, or from the loop.
  void guest_copy_parked() override { advance_in_guest_call(); }
  void guest_dropped() override { advance_in_guest_call(); }
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
    std::function<void(CopyOutcome)> done = nullptr;
    bool in_loop = false;
    Gate gate = {};
    bool gate_open = false;     // the descriptor was ready at the last look
    uint64_t gate_watch = 0;    // the reactor's wait for it, while armed
  };
  void advance_in_guest_call();
  // Whether a gated copy may step now; arms the wait for its descriptor
  // when it may not.
  bool gate_open(Copy& copy);
  // Whether a gated copy's descriptor is ready now (a zero-length guest
  // copy, a readiness probe, is answered only then); arms the wait when not.
  bool descriptor_ready(Copy& copy);
  // A step of a gated copy moved `moved`: true when the copy goes on waiting.
  bool gate_closes(Copy& copy, uint64_t moved);
  void disarm(Copy& copy);
  bool end_by_step();
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
  bool in_guest_call_ = false;  // advancing from guest_copy_parked: `done` is deferred
  std::shared_ptr<bool> exists_ = std::make_shared<bool>(true);  // for deferred `done`s
};

}  // namespace cmhost::host
