// WASI 0.2 on the classes `cmhost bindgen` generated from jco's WASI WIT
// (bindings.hpp, scripts/wasi-bindings): one object implements every Host,
// the resources are the streams, pollables and errors below. Stdio, the
// clocks, random and the preopens' checks are the core's (src/wasi/core).
#include "cmhost/wasi.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bindings.hpp"
#include "common.hpp"
#include "filesystem.hpp"
#include "p2.hpp"
#include "sockets.hpp"
#include "wasi/core/clocks.hpp"
#include "wasi/core/confine.hpp"
#include "wasi/core/stdio.hpp"

namespace cmhost::wasi {

namespace {

namespace io = ::cmhost::wasi::bindings::wasi::io;
namespace cli = ::cmhost::wasi::bindings::wasi::cli;
namespace clocks = ::cmhost::wasi::bindings::wasi::clocks;
namespace fs = ::cmhost::wasi::bindings::wasi::filesystem;
namespace rnd = ::cmhost::wasi::bindings::wasi::random;
using abi::typed::Result;
using StreamResult = Result<void, io::streams::StreamError>;
using detail::failed;
using detail::Handles;
using detail::Pollable;
using detail::monotonic_now;
using core::StdioFd;

// stdin: a file descriptor (the process's, or a file), or fixed bytes.
class Stdin final : public io::streams::InputStream {
 public:
  Stdin(std::shared_ptr<const Handles> handles, std::shared_ptr<StdioFd> fd, const std::optional<std::string>& bytes)
      : handles_(std::move(handles)), fd_(std::move(fd)), bytes_(bytes) {}

  Result<std::vector<uint8_t>, io::streams::StreamError> read(Caller& caller, uint64_t len) override {
    return take(caller, len, /*block=*/false);
  }
  Result<std::vector<uint8_t>, io::streams::StreamError> blocking_read(Caller& caller, uint64_t len) override {
    return take(caller, len, /*block=*/true);
  }
  Result<uint64_t, io::streams::StreamError> skip(Caller& caller, uint64_t len) override {
    return skipped(read(caller, len));
  }
  Result<uint64_t, io::streams::StreamError> blocking_skip(Caller& caller, uint64_t len) override {
    return skipped(blocking_read(caller, len));
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    if (bytes_) return std::make_unique<Pollable>();
    return std::make_unique<detail::FdPollable>(fd_->get(), POLLIN);
  }

 private:
  static Result<uint64_t, io::streams::StreamError> skipped(Result<std::vector<uint8_t>, io::streams::StreamError> r) {
    if (r.is_err()) return Result<uint64_t, io::streams::StreamError>::err(std::move(r.error()));
    return Result<uint64_t, io::streams::StreamError>::ok(r.value().size());
  }

  Result<std::vector<uint8_t>, io::streams::StreamError> take(Caller& caller, uint64_t len, bool block) {
    using R = Result<std::vector<uint8_t>, io::streams::StreamError>;
    len = std::min<uint64_t>(len, 64 * 1024);
    if (bytes_) {
      if (at_ >= bytes_->size()) return R::err(io::streams::stream_error::Closed{});
      const size_t n = std::min<size_t>(len, bytes_->size() - at_);
      std::vector<uint8_t> out(bytes_->begin() + at_, bytes_->begin() + at_ + n);
      at_ += n;
      return R::ok(std::move(out));
    }
    if (!block) {
      pollfd p{fd_->get(), POLLIN, 0};
      if (::poll(&p, 1, 0) == 0) return R::ok();  // nothing yet
    }
    // A read may return fewer bytes than asked for: at most 1 MiB, whatever
    // the guest asks (as file streams).
    std::vector<uint8_t> out(std::min<uint64_t>(len, 1 << 20));
    const ssize_t n = core::read_some(fd_->get(), out.data(), out.size());
    if (n < 0) return R::err(failed(caller, *handles_, errno));
    if (n == 0 && len > 0) return R::err(io::streams::stream_error::Closed{});
    out.resize(static_cast<size_t>(n));
    return R::ok(std::move(out));
  }

  std::shared_ptr<const Handles> handles_;
  std::shared_ptr<StdioFd> fd_;
  std::optional<std::string> bytes_;
  size_t at_ = 0;
};

// stdout and stderr: the process's file descriptor, a file, or a buffer.
class Output final : public detail::ImmediateOutput {
 public:
  Output(std::shared_ptr<const Handles> handles, core::OutputTarget target)
      : ImmediateOutput(4096), handles_(std::move(handles)), target_(std::move(target)) {}

 private:
  StreamResult put(Caller& caller, const uint8_t* data, size_t n) override {
    const int error = target_.write(data, n);
    if (error == EPIPE) return StreamResult::err(io::streams::stream_error::Closed{});
    if (error) return StreamResult::err(failed(caller, *handles_, error));
    return StreamResult::ok();
  }

  std::shared_ptr<const Handles> handles_;
  core::OutputTarget target_;
};

// wasi:clocks: the two interfaces' functions share names, so each has a
// Host of its own.
class MonotonicClock final : public clocks::monotonic_clock::Host {
 public:
  clocks::monotonic_clock::Instant now(Caller&) override { return monotonic_now(); }
  clocks::monotonic_clock::Duration resolution(Caller&) override { return core::kMonotonicResolutionNs; }
  std::unique_ptr<io::poll::Pollable> subscribe_instant(Caller&, clocks::monotonic_clock::Instant when) override {
    return std::make_unique<Pollable>(when);
  }
  std::unique_ptr<io::poll::Pollable> subscribe_duration(Caller&, clocks::monotonic_clock::Duration when) override {
    return std::make_unique<Pollable>(core::deadline_after(when));
  }
};

class WallClock final : public clocks::wall_clock::Host {
 public:
  explicit WallClock(std::optional<uint64_t> fixed_ns) : clock_(fixed_ns) {}
  clocks::wall_clock::Datetime now(Caller&) override { return datetime(clock_.now()); }
  clocks::wall_clock::Datetime resolution(Caller&) override { return datetime(core::WallClock::kResolutionNs); }

 private:
  static clocks::wall_clock::Datetime datetime(uint64_t ns) {
    return {ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)};
  }
  core::WallClock clock_;
};

// A terminal the guest's stdin, stdout or stderr is: the resources have no
// methods in WASI 0.2.
class Terminal final : public cli::terminal_input::TerminalInput, public cli::terminal_output::TerminalOutput {};

// Every other Host of the interfaces supplied, over one configuration.
class Wasi final : public cli::environment::Host,
                   public cli::exit::Host,
                   public io::error::Host,
                   public io::poll::Host,
                   public io::streams::Host,
                   public cli::stdin::Host,
                   public cli::stdout::Host,
                   public cli::stderr::Host,
                   public cli::terminal_input::Host,
                   public cli::terminal_output::Host,
                   public cli::terminal_stdin::Host,
                   public cli::terminal_stdout::Host,
                   public cli::terminal_stderr::Host,
                   public fs::types::Host,
                   public fs::preopens::Host,
                   public rnd::random::Host,
                   public rnd::insecure::Host,
                   public rnd::insecure_seed::Host {
 public:
  Wasi(WasiConfig config, std::shared_ptr<const core::StdioFds> stdio)
      : config_(std::move(config)), random_(config_.random_seed), stdio_(std::move(stdio)) {}

  std::shared_ptr<Handles> handles = std::make_shared<Handles>();

  // wasi:cli/environment
  std::vector<std::tuple<std::string, std::string>> get_environment(Caller&) override {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& [k, v] : config_.env) out.emplace_back(k, v);
    return out;
  }
  std::vector<std::string> get_arguments(Caller&) override { return config_.args; }
  std::optional<std::string> initial_cwd(Caller&) override { return std::nullopt; }

  // wasi:cli/exit
  void exit(Caller&, Result<void, void> status) override { throw Exit(status.is_ok() ? 0 : 1); }
  void exit_with_code(Caller&, uint8_t status_code) override { throw Exit(status_code); }

  // wasi:io/poll: the indices of the ready pollables, after blocking until
  // at least one is.
  static constexpr int kPollSliceMs = 100;
  std::vector<uint32_t> poll(Caller& caller, std::vector<abi::typed::Borrow<io::poll::Pollable>> in) override {
    if (in.empty()) throw_trap("wasi:io/poll: poll of an empty list");
    if (in.size() > UINT32_MAX) throw_trap("wasi:io/poll: poll of more than 2^32 pollables");
    std::vector<io::poll::Pollable*> pollables;
    for (const auto& b : in) pollables.push_back(&handles->pollables->pollable.get(caller.store(), b));
    for (;;) {
      std::vector<uint32_t> ready;
      for (uint32_t i = 0; i < pollables.size(); ++i)
        if (pollables[i]->ready(caller)) ready.push_back(i);
      if (!ready.empty()) return ready;
      // Wait for any descriptor, or until the earliest timer.
      uint64_t earliest = UINT64_MAX;
      std::vector<pollfd> fds;
      for (io::poll::Pollable* p : pollables) {
        if (auto* timer = dynamic_cast<Pollable*>(p)) earliest = std::min(earliest, timer->deadline());
        if (auto* fd = dynamic_cast<detail::FdPollable*>(p))
          if (const short events = fd->events()) fds.push_back({fd->fd(), events, 0});
      }
      const uint64_t now = monotonic_now();
      const int timeout = earliest == UINT64_MAX ? -1
                          : earliest <= now      ? 0
                                                 : static_cast<int>(std::min<uint64_t>((earliest - now + 999999) / 1000000,
                                                                                        INT32_MAX));
      if (fds.empty() && timeout < 0) throw_trap("wasi:io/poll: waiting on pollables that can never be ready");
      // In slices, so that a store's epoch deadline ends the wait.
      ::poll(fds.data(), fds.size(), timeout < 0 ? kPollSliceMs : std::min(timeout, kPollSliceMs));
      if (caller.store().interrupted())
        throw_trap("interrupted: the store's epoch deadline passed while wasi:io/poll waited");
    }
  }

  // wasi:cli/stdin, stdout, stderr; no terminals.
  std::unique_ptr<io::streams::InputStream> get_stdin(Caller&) override {
    return std::make_unique<Stdin>(handles, stdio_->in, config_.stdin_bytes);
  }
  std::unique_ptr<io::streams::OutputStream> get_stdout(Caller&) override {
    return std::make_unique<Output>(handles, core::OutputTarget{stdio_->out, config_.stdout_buffer});
  }
  std::unique_ptr<io::streams::OutputStream> get_stderr(Caller&) override {
    return std::make_unique<Output>(handles, core::OutputTarget{stdio_->err, config_.stderr_buffer});
  }
  // A terminal only when the stream is the process's and a terminal.
  std::optional<abi::typed::Own<cli::terminal_input::TerminalInput>> get_terminal_stdin(Caller& caller) override {
    if (config_.stdin_bytes || !::isatty(stdio_->in->get())) return std::nullopt;
    return handles->terminal_inputs->terminal_input.make_own(caller.store(), std::make_unique<Terminal>());
  }
  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> get_terminal_stdout(Caller& caller) override {
    return terminal_output(caller, stdio_->out->get(), config_.stdout_buffer != nullptr);
  }
  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> get_terminal_stderr(Caller& caller) override {
    return terminal_output(caller, stdio_->err->get(), config_.stderr_buffer != nullptr);
  }

  // wasi:filesystem (filesystem.cpp)
  std::optional<fs::types::ErrorCode> filesystem_error_code(Caller&, io::error::Error& error) override {
    return detail::filesystem_error_code(error);
  }
  std::vector<std::tuple<abi::typed::Own<fs::types::Descriptor>, std::string>> get_directories(
      Caller& caller) override {
    return detail::open_preopens(caller, config_.preopens, handles);
  }

  // wasi:random: the secure interface from the kernel, the insecure ones
  // from a generator (both the seed's generator when WasiConfig fixes one).
  std::vector<uint8_t> get_random_bytes(Caller&, uint64_t len) override { return random_.secure_bytes(len); }
  uint64_t get_random_u64(Caller&) override { return random_.secure_u64(); }
  std::vector<uint8_t> get_insecure_random_bytes(Caller&, uint64_t len) override { return random_.insecure_bytes(len); }
  uint64_t get_insecure_random_u64(Caller&) override { return random_.insecure_u64(); }
  std::tuple<uint64_t, uint64_t> insecure_seed(Caller&) override { return random_.insecure_seed(); }

 private:

  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> terminal_output(Caller& caller, int fd,
                                                                                      bool buffered) {
    if (buffered || !::isatty(fd)) return std::nullopt;
    return handles->terminal_outputs->terminal_output.make_own(caller.store(), std::make_unique<Terminal>());
  }

  WasiConfig config_;
  core::RandomSource random_;
  std::shared_ptr<const core::StdioFds> stdio_;
};

}  // namespace

void p2::add_to_linker(Linker& linker, const WasiConfig& config, std::shared_ptr<const core::StdioFds> stdio) {
  auto wasi = std::make_shared<Wasi>(config, std::move(stdio));
  cli::environment::add_to_linker(linker, wasi);
  cli::exit::add_to_linker(linker, wasi);
  wasi->handles->errors = io::error::add_to_linker(linker, wasi);
  wasi->handles->pollables = io::poll::add_to_linker(linker, wasi);
  wasi->handles->streams = io::streams::add_to_linker(linker, wasi);
  cli::stdin::add_to_linker(linker, wasi);
  cli::stdout::add_to_linker(linker, wasi);
  cli::stderr::add_to_linker(linker, wasi);
  wasi->handles->terminal_inputs = cli::terminal_input::add_to_linker(linker, wasi);
  wasi->handles->terminal_outputs = cli::terminal_output::add_to_linker(linker, wasi);
  cli::terminal_stdin::add_to_linker(linker, wasi);
  cli::terminal_stdout::add_to_linker(linker, wasi);
  cli::terminal_stderr::add_to_linker(linker, wasi);
  clocks::monotonic_clock::add_to_linker(linker, std::make_shared<MonotonicClock>());
  clocks::wall_clock::add_to_linker(linker, std::make_shared<WallClock>(config.wall_clock_ns));
  wasi->handles->files = fs::types::add_to_linker(linker, wasi);
  fs::preopens::add_to_linker(linker, wasi);
  rnd::random::add_to_linker(linker, wasi);
  rnd::insecure::add_to_linker(linker, wasi);
  rnd::insecure_seed::add_to_linker(linker, wasi);
  detail::add_sockets(linker, wasi->handles, config.allow_network);
}

int p2::run(Store& store, const Instance& instance) {
  const auto command = instance.typed_func<Result<void, void>()>("wasi:cli/run#run");
  try {
    return command.call(store).is_ok() ? 0 : 1;
  } catch (const Exit& exit) {
    return exit.code();
  }
}

}  // namespace cmhost::wasi
