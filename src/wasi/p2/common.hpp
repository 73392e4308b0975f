// What the WASI 0.2 interfaces share (src/wasi/p2): the streams' errors and
// pollables, and the handles they make in the store; the clocks and waits
// on descriptors are the core's (src/wasi/core).
#pragma once

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bindings.hpp"
#include "wasi/core/clocks.hpp"
#include "wasi/core/stdio.hpp"

namespace cmhost::wasi::detail {

namespace io = ::cmhost::wasi::bindings::wasi::io;

using core::monotonic_now;
using core::wait_for;

// The host's error behind a stream's `last-operation-failed`: an errno,
// which wasi:filesystem's filesystem-error-code maps.
class OsError final : public io::error::Error {
 public:
  explicit OsError(int code) : code_(code) {}
  std::string to_debug_string(Caller&) override { return std::strerror(code_); }
  int code() const { return code_; }

 private:
  int code_;
};

// Ready now, or once the monotonic clock reaches `deadline`.
class Pollable final : public io::poll::Pollable {
 public:
  explicit Pollable(uint64_t deadline = 0) : deadline_(deadline) {}
  bool ready(Caller&) override { return monotonic_now() >= deadline_; }
  void block(Caller&) override {
    const uint64_t now = monotonic_now();
    if (now < deadline_) std::this_thread::sleep_for(std::chrono::nanoseconds(deadline_ - now));
  }
  uint64_t deadline() const { return deadline_; }

 private:
  uint64_t deadline_;
};

// Ready when a file descriptor is (poll(2) events), e.g. stdin readable or
// a socket connected; `owner` keeps the descriptor open while it is used.
// A subclass may choose the events each time it is polled (a socket's
// depend on its state then, not when the pollable was made).
class FdPollable : public io::poll::Pollable {
 public:
  FdPollable(int fd, short events, std::shared_ptr<const void> owner = {})
      : fd_(fd), events_(events), owner_(std::move(owner)) {}
  bool ready(Caller&) override {
    const short e = events();
    return e == 0 || wait_for(fd_, e, 0);
  }
  void block(Caller&) override {
    if (const short e = events()) wait_for(fd_, e, -1);
  }
  // The descriptor and what to wait for on it now (0: ready at once): a
  // subclass may change both as what it waits for moves on.
  virtual int fd() const { return fd_; }
  virtual short events() const { return events_; }

 private:
  int fd_;
  short events_;
  std::shared_ptr<const void> owner_;
};

// An output stream that writes what it is given at once: subclasses say
// how (put) and how much one write may hold; flushing has nothing to do.
class ImmediateOutput : public io::streams::OutputStream {
 public:
  using StreamResult = abi::typed::Result<void, io::streams::StreamError>;
  using CountResult = abi::typed::Result<uint64_t, io::streams::StreamError>;

  explicit ImmediateOutput(uint64_t budget) : budget_(budget) {}
  CountResult check_write(Caller&) override { return CountResult::ok(budget_); }
  StreamResult write(Caller& caller, std::vector<uint8_t> contents) override {
    if (contents.size() > budget_) throw_trap("wasi:io/streams: write of more than check-write allowed");
    return put(caller, contents.data(), contents.size());
  }
  StreamResult blocking_write_and_flush(Caller& caller, std::vector<uint8_t> contents) override {
    if (contents.size() > 4096) throw_trap("wasi:io/streams: blocking-write-and-flush of more than 4096 bytes");
    return put(caller, contents.data(), contents.size());
  }
  StreamResult flush(Caller&) override { return StreamResult::ok(); }
  StreamResult blocking_flush(Caller&) override { return StreamResult::ok(); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override { return std::make_unique<Pollable>(); }
  StreamResult write_zeroes(Caller& caller, uint64_t len) override {
    if (len > budget_) throw_trap("wasi:io/streams: write-zeroes of more than check-write allowed");
    const std::vector<uint8_t> zeroes(len);
    return put(caller, zeroes.data(), zeroes.size());
  }
  StreamResult blocking_write_zeroes_and_flush(Caller& caller, uint64_t len) override {
    return write_zeroes(caller, len);
  }
  CountResult splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    return copy(caller, src.read(caller, std::min(len, budget_)));
  }
  CountResult blocking_splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    return copy(caller, src.blocking_read(caller, std::min(len, budget_)));
  }

 protected:
  virtual StreamResult put(Caller& caller, const uint8_t* data, size_t n) = 0;

 private:
  CountResult copy(Caller& caller, abi::typed::Result<std::vector<uint8_t>, io::streams::StreamError> read) {
    if (read.is_err()) return CountResult::err(std::move(read.error()));
    const std::vector<uint8_t>& bytes = read.value();
    const StreamResult written = put(caller, bytes.data(), bytes.size());
    if (written.is_err()) return CountResult::err(written.error());
    return CountResult::ok(bytes.size());
  }

  uint64_t budget_;
};

// The host resource types whose handles the implementations make.
struct Handles {
  std::optional<io::error::Resources> errors;
  std::optional<io::poll::Resources> pollables;
  std::optional<io::streams::Resources> streams;
  std::optional<::cmhost::wasi::bindings::wasi::filesystem::types::Resources> files;
  std::optional<::cmhost::wasi::bindings::wasi::cli::terminal_input::Resources> terminal_inputs;
  std::optional<::cmhost::wasi::bindings::wasi::cli::terminal_output::Resources> terminal_outputs;
};

inline io::streams::StreamError failed(Caller& caller, const Handles& handles, int code) {
  return io::streams::stream_error::LastOperationFailed{
      handles.errors->error.make_own(caller.store(), std::make_unique<OsError>(code))};
}

}  // namespace cmhost::wasi::detail
