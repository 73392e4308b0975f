// What the WASI interfaces share (src/wasi): the streams' errors and
// pollables, and the handles they make in the store.
#pragma once

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
