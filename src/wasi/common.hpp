// What the WASI interfaces share (src/wasi): the streams' errors and
// pollables, and the handles they make in the store.
#pragma once

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "bindings.hpp"

namespace cmhost::wasi::detail {

namespace io = ::wasi::io;

inline uint64_t monotonic_now() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

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
// a socket connected.
class FdPollable final : public io::poll::Pollable {
 public:
  FdPollable(int fd, short events) : fd_(fd), events_(events) {}
  bool ready(Caller&) override { return wait(0); }
  void block(Caller&) override { wait(-1); }
  int fd() const { return fd_; }
  short events() const { return events_; }

 private:
  bool wait(int timeout_ms) const {
    pollfd p{fd_, events_, 0};
    int n;
    do n = ::poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    return n != 0;  // an error counts as ready: the next operation reports it
  }
  int fd_;
  short events_;
};

// The host resource types whose handles the implementations make.
struct Handles {
  std::optional<io::error::Resources> errors;
  std::optional<io::poll::Resources> pollables;
  std::optional<io::streams::Resources> streams;
  std::optional<::wasi::filesystem::types::Resources> files;
  std::optional<::wasi::cli::terminal_input::Resources> terminal_inputs;
  std::optional<::wasi::cli::terminal_output::Resources> terminal_outputs;
};

inline io::streams::StreamError failed(Caller& caller, const Handles& handles, int code) {
  return io::streams::stream_error::LastOperationFailed{
      handles.errors->error.make_own(caller.store(), std::make_unique<OsError>(code))};
}

}  // namespace cmhost::wasi::detail
