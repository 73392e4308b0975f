#include "stream_ends.hpp"

#include <fmt/core.h>
#include <poll.h>

#include <cerrno>

#include <algorithm>

#include "cmhost/error.hpp"
#include "runtime/call_context.hpp"
#include "runtime/handles.hpp"
#include "runtime/scheduler.hpp"

namespace cmhost::host {

HostEnd::HostEnd(runtime::Store& store, HostLoop& loop, Kind kind, std::shared_ptr<runtime::SharedChannel> channel)
    : store_(store), loop_(loop), alive_(loop.alive()), kind_(kind), channel_(std::move(channel)) {
  channel_->host_side = this;
}

HostEnd::~HostEnd() {
  *exists_ = false;
  // Before this end's own drop below. (The host may hold both ends of one
  // channel, made by one and handed back by a guest: the later registered.)
  if (channel_->host_side == this) channel_->host_side = nullptr;
  if (!*alive_) return;  // the store went first and took the guest ends with it
  if (copy_) disarm(*copy_);
  loop_.forget(*this);
  if (!closed_) channel_->drop();
}

std::unique_ptr<HostEnd> HostEnd::take_readable(runtime::Store& store, HostLoop& loop, uint32_t host_handle,
                                                bool stream, ElementCheck accepts) {
  runtime::HandleTable& table = store.host_handles();
  const runtime::HandleKind want = stream ? runtime::HandleKind::SharedStream : runtime::HandleKind::SharedFuture;
  const runtime::HandleTable::Entry* entry = table.entry(host_handle);
  if (!entry || entry->kind != want)
    throw_invalid_value(fmt::format("host handle {} is {}, not the readable end of a {}", host_handle,
                                    entry ? std::string("a ") + runtime::to_string(entry->kind) : "unknown",
                                    stream ? "stream" : "future"));
  accepts(static_cast<const runtime::SharedChannel&>(*entry->object).elem);
  auto channel = std::static_pointer_cast<runtime::SharedChannel>(table.remove_entry(host_handle).object);
  return std::make_unique<HostEnd>(store, loop, stream ? Kind::StreamReader : Kind::FutureReader, std::move(channel));
}

std::unique_ptr<HostEnd> HostEnd::make_writable(runtime::Store& store, HostLoop& loop, abi::TypeRef element,
                                                bool stream, uint32_t& readable_handle) {
  std::shared_ptr<runtime::SharedChannel> channel;
  if (stream)
    channel = std::make_shared<runtime::SharedStream>(std::move(element));
  else
    channel = std::make_shared<runtime::SharedFuture>(std::move(element));
  readable_handle = store.host_handles().add(
      stream ? runtime::HandleKind::SharedStream : runtime::HandleKind::SharedFuture, channel);
  return std::make_unique<HostEnd>(store, loop, stream ? Kind::StreamWriter : Kind::FutureWriter, std::move(channel));
}

const char* HostEnd::what() const {
  switch (kind_) {
    case Kind::StreamReader: return "the host's read of a stream";
    case Kind::StreamWriter: return "the host's write to a stream";
    case Kind::FutureReader: return "the host's read of a future";
    case Kind::FutureWriter: return "the host's write to a future";
  }
  return "";
}

void HostEnd::check_not_stepping(const char* what_op) const {
  if (stepping_)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: {} from inside its own step (the guest's buffer is in use)", what(), what_op));
}

void HostEnd::check_startable() const {
  if (!*alive_) throw Error(ErrorKind::Usage, fmt::format("{}: its store is gone", what()));
  check_not_stepping("another copy");
  if (copy_)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: another copy is in flight on this end (one at a time)", what()));
  if (closed_) throw Error(ErrorKind::Usage, fmt::format("{}: the end is closed", what()));
  if (ended_)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: {}", what(), is_stream() ? "the other end is gone" : "the future's value has moved"));
}

CopyOutcome HostEnd::run(uint64_t count, CopyStep step) {
  check_startable();
  if (store_.scheduler().current())
    throw Error(ErrorKind::Usage,
                fmt::format("{} cannot wait inside a guest's call: start it and let the event loop end it", what()));
  copy_.emplace(Copy{.count = count, .step = step});
  try {
    try_progress();  // the guest's copy may be pending already
    if (copy_) {
      copy_->in_loop = true;
      loop_.add(*this);
      store_.scheduler().run_until([this] { return !copy_; }, what());
    }
  } catch (const Error& e) {
    abandon();
    if (e.kind() != ErrorKind::Trap) throw;
    throw Error(ErrorKind::Trap, fmt::format("{}; {} had moved {} element(s) through this end", e.what(), what(),
                                             transferred_));
  } catch (...) {
    abandon();
    throw;
  }
  return last_;
}

void HostEnd::start(uint64_t count, CopyStep step, std::function<void(CopyOutcome)> done) {
  check_startable();
  copy_.emplace(Copy{.count = count, .step = step});
  copy_->done = std::move(done);
  copy_->in_loop = true;
  loop_.add(*this);
}

void HostEnd::start(uint64_t count, CopyStep step, std::function<void(CopyOutcome)> done, Gate gate) {
  start(count, step, std::move(done));
  copy_->gate = gate;
  copy_->gate_open = true;  // tried at once: the descriptor is often ready already
}

bool HostEnd::gate_open(Copy& copy) {
  if (copy.gate.fd < 0 || copy.gate_open) return true;
  if (copy.gate_watch == 0)
    copy.gate_watch = loop_.reactor().when_ready(copy.gate.fd, copy.gate.events, [this](short) {
      // Fired on the loop's thread; the end cancels the wait before it goes.
      if (!copy_) return;
      copy_->gate_watch = 0;
      copy_->gate_open = true;
    });
  return false;
}

bool HostEnd::descriptor_ready(Copy& copy) {
  pollfd p{copy.gate.fd, copy.gate.events, 0};
  int n;
  do n = ::poll(&p, 1, 0);
  while (n < 0 && errno == EINTR);
  if (n != 0) return true;  // an error counts as ready: the next step reports it
  copy.gate_open = false;
  gate_open(copy);
  return false;
}

void HostEnd::advance_in_guest_call() {
  if (!copy_ || stepping_ || in_guest_call_ || closed_ || !*alive_) return;
  in_guest_call_ = true;
  try {
    try_progress();
  } catch (const Error& e) {
    in_guest_call_ = false;
    abandon();  // the copy is over either way, as when the loop steps it
    if (e.kind() == ErrorKind::Trap) throw;  // lifting or lowering the guest's elements: its call traps
    loop_.fail_later(std::current_exception());  // the host's mistake: the loop reports it
  } catch (...) {
    in_guest_call_ = false;
    abandon();
    loop_.fail_later(std::current_exception());
  }
  in_guest_call_ = false;
}

bool HostEnd::gate_closes(Copy& copy, uint64_t moved) {
  if (copy.gate.fd < 0 || moved != 0) return false;
  copy.gate_open = false;  // it would have blocked: wait for the descriptor again
  gate_open(copy);
  return true;
}

// The step said the host's side is over (the end of a socket's input, a
// failure): the end is dropped at once, so the guest's pending copy sees
// DROPPED within the same call, as its peer's end of stream, and only
// then does the copy finish.
bool HostEnd::end_by_step() {
  closed_ = true;
  ended_ = true;
  channel_->drop();
  finish(CopyStatus::Completed);
  return true;
}

void HostEnd::disarm(Copy& copy) {
  if (copy.gate_watch == 0) return;
  if (*alive_) loop_.reactor().cancel(copy.gate_watch);
  copy.gate_watch = 0;
}

CopyOutcome HostEnd::cancel() {
  check_not_stepping("cancel");
  if (!copy_) throw Error(ErrorKind::Usage, fmt::format("{}: no copy in flight to cancel", what()));
  finish(CopyStatus::Cancelled);
  return last_;
}

void HostEnd::close() {
  if (closed_) return;
  check_not_stepping("close");
  if (copy_)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: a copy is in flight; cancel it before closing the end", what()));
  if (kind_ == Kind::FutureWriter && !ended_ && *alive_ && !channel_->dropped)
    throw Error(ErrorKind::Usage, "a future's writable end closes once its value is written (or its reader is gone)");
  closed_ = true;
  ended_ = true;
  if (*alive_) channel_->drop();
}

uint32_t HostEnd::release_readable() {
  if (!reads()) throw Error(ErrorKind::Usage, fmt::format("{}: only a readable end goes back to the store", what()));
  if (!*alive_) throw Error(ErrorKind::Usage, fmt::format("{}: its store is gone", what()));
  check_not_stepping("giving the end back");
  if (copy_) throw Error(ErrorKind::Usage, fmt::format("{}: a copy is in flight on this end", what()));
  if (closed_) throw Error(ErrorKind::Usage, fmt::format("{}: the end is closed", what()));
  if (ended_ && !is_stream()) throw Error(ErrorKind::Usage, fmt::format("{}: the future's value has moved", what()));
  const uint32_t handle = store_.host_handles().add(
      is_stream() ? runtime::HandleKind::SharedStream : runtime::HandleKind::SharedFuture, channel_);
  if (channel_->host_side == this) channel_->host_side = nullptr;
  closed_ = true;
  ended_ = true;
  return handle;
}

void HostEnd::abandon() {
  if (!copy_) return;
  disarm(*copy_);
  if (copy_->in_loop && *alive_) loop_.remove(*this);
  copy_.reset();
}

void HostEnd::finish(CopyStatus status) {
  disarm(*copy_);
  const Copy copy = std::move(*copy_);
  copy_.reset();
  if (copy.in_loop && *alive_) loop_.remove(*this);
  if (status == CopyStatus::Dropped) ended_ = true;
  last_ = {status, copy.progress};
  if (!copy.done) return;
  if (in_guest_call_) {
    // Inside a guest's built-in: the host's callback (which may start the
    // next copy, or call into the store) runs from the loop instead.
    loop_.defer([exists = exists_, done = copy.done, outcome = last_] {
      if (*exists) done(outcome);
    });
    return;
  }
  copy.done(last_);
}

uint64_t HostEnd::step_in_place(Copy& copy, runtime::GuestBuffer& buffer, uint64_t n) {
  const runtime::CopyOptions& options = buffer.options();
  runtime::GuestContext guest(buffer.store(), buffer.inst(), options.memory, options.realloc, options.abi,
                              uint64_t{0});
  stepping_ = true;
  uint64_t moved = 0;
  try {
    moved = copy.step(guest.cx(), buffer.address(), n);
  } catch (...) {
    stepping_ = false;
    throw;
  }
  stepping_ = false;
  // A step that called into the store may have let the guest take its
  // buffer back: nothing of it may be touched then.
  if (channel_->pending.buffer != &buffer)
    throw Error(ErrorKind::Usage,
                fmt::format("{}: the step called into the store, and the guest's copy ended meanwhile", what()));
  if (moved == kStepEnded && copy.gate.fd >= 0) return kStepEnded;
  if (moved > n)
    throw Error(ErrorKind::Usage, fmt::format("{}: a step moved {} elements, given room for {}", what(), moved, n));
  buffer.advance(moved);
  copy.progress += moved;
  transferred_ += moved;
  return moved;
}

bool HostEnd::try_progress() {
  Copy& copy = *copy_;
  runtime::PendingCopy& pending = channel_->pending;
  if (pending) {
    if (is_stream()) return reads() ? try_stream_read(copy, pending) : try_stream_write(copy, pending);
    // A future's one value, straight between the guest's buffer and the host.
    if (step_in_place(copy, *pending.buffer, 1) != 1)
      throw Error(ErrorKind::Usage, fmt::format("{}: the step did not move the future's value", what()));
    channel_->reset_and_notify_pending(CopyStatus::Completed);
    ended_ = true;
    finish(CopyStatus::Completed);
    return true;
  }
  if (channel_->dropped) {
    finish(CopyStatus::Dropped);
    return true;
  }
  return false;
}

// The guest's write is parked: take up to `count` of its elements. What
// is left stays parked for the next read until the guest takes its event.
bool HostEnd::try_stream_read(Copy& copy, runtime::PendingCopy& pending) {
  runtime::GuestBuffer& buffer = *pending.buffer;
  if (buffer.remain() > 0) {
    if (copy.count > 0) {
      if (!gate_open(copy)) return false;
      const uint64_t moved = step_in_place(copy, buffer, std::min(copy.count, buffer.remain()));
      if (gate_closes(copy, moved)) return false;
      if (moved == kStepEnded) return end_by_step();
      if (moved > 0) pending.end->on_copy();
    }
    finish(CopyStatus::Completed);
    return true;
  }
  if (buffer.zero_length()) {  // the writer asked whether a reader is there: it is, once it can take
    if (copy.gate.fd >= 0 && !descriptor_ready(copy)) return false;
    channel_->reset_and_notify_pending(CopyStatus::Completed);
    return true;
  }
  return false;  // read to its end: the writer has yet to take its event
}

// The guest's read is parked: fill it; what does not fit goes into the
// guest's next read.
bool HostEnd::try_stream_write(Copy& copy, runtime::PendingCopy& pending) {
  runtime::GuestBuffer& buffer = *pending.buffer;
  const uint64_t left = copy.count - copy.progress;
  if (buffer.remain() > 0) {
    if (left > 0) {
      if (!gate_open(copy)) return false;
      const uint64_t wrote = step_in_place(copy, buffer, std::min(left, buffer.remain()));
      if (gate_closes(copy, wrote)) return false;
      if (wrote == kStepEnded) return end_by_step();
      if (wrote > 0) pending.end->on_copy();
      if (wrote > 0 && copy.progress < copy.count && copy.gate.fd < 0) return true;
    }
    finish(CopyStatus::Completed);
    return true;
  }
  if (buffer.zero_length()) {
    if (left == 0) {  // both zero-length: the writer is done, the reader stays
      finish(CopyStatus::Completed);
      return true;
    }
    // The reader asked whether anything is there: once the descriptor has it.
    if (copy.gate.fd >= 0 && !descriptor_ready(copy)) return false;
    channel_->reset_and_notify_pending(CopyStatus::Completed);
    return true;
  }
  return false;  // filled: the reader has yet to take its event
}

}  // namespace cmhost::host
