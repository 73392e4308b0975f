// WASI 0.2 on the classes `cmhost bindgen` generated from jco's WASI WIT
// (bindings.hpp, scripts/wasi-bindings): one object implements every Host,
// the resources are the streams, pollables and errors below.
#include "cmhost/wasi.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "bindings.hpp"
#include "common.hpp"
#include "filesystem.hpp"
#include "sockets.hpp"

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

// A file descriptor of stdin, stdout or stderr: the process's own, or a
// file opened for the guest, closed when the last stream using it goes.
class StdioFd {
 public:
  explicit StdioFd(int fd, bool owned = false) : fd_(fd), owned_(owned) {}
  ~StdioFd() {
    if (owned_) ::close(fd_);
  }
  StdioFd(const StdioFd&) = delete;
  StdioFd& operator=(const StdioFd&) = delete;
  int get() const { return fd_; }
  bool owned() const { return owned_; }

  static std::shared_ptr<StdioFd> open(int standard, const std::optional<std::string>& path, int flags) {
    if (!path) return std::make_shared<StdioFd>(standard);
    const int fd = ::open(path->c_str(), flags | O_CLOEXEC, 0666);
    if (fd < 0) throw Error(ErrorKind::Usage, "cannot open " + *path + ": " + std::strerror(errno));
    return std::make_shared<StdioFd>(fd, true);
  }

 private:
  int fd_;
  bool owned_;
};

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
    ssize_t n;
    do n = ::read(fd_->get(), out.data(), out.size());
    while (n < 0 && errno == EINTR);
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
  Output(std::shared_ptr<const Handles> handles, std::shared_ptr<StdioFd> fd, std::shared_ptr<std::string> buffer)
      : ImmediateOutput(4096), handles_(std::move(handles)), fd_(std::move(fd)), buffer_(std::move(buffer)) {}

 private:
  StreamResult put(Caller& caller, const uint8_t* data, size_t n) override {
    if (buffer_) {
      buffer_->append(reinterpret_cast<const char*>(data), n);
      return StreamResult::ok();
    }
    while (n > 0) {
      const ssize_t w = ::write(fd_->get(), data, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EPIPE) return StreamResult::err(io::streams::stream_error::Closed{});
      if (w < 0) return StreamResult::err(failed(caller, *handles_, errno));
      data += w;
      n -= static_cast<size_t>(w);
    }
    return StreamResult::ok();
  }

  std::shared_ptr<const Handles> handles_;
  std::shared_ptr<StdioFd> fd_;
  std::shared_ptr<std::string> buffer_;
};

// wasi:clocks: the two interfaces' functions share names, so each has a
// Host of its own.
class MonotonicClock final : public clocks::monotonic_clock::Host {
 public:
  clocks::monotonic_clock::Instant now(Caller&) override { return monotonic_now(); }
  clocks::monotonic_clock::Duration resolution(Caller&) override { return 1; }
  std::unique_ptr<io::poll::Pollable> subscribe_instant(Caller&, clocks::monotonic_clock::Instant when) override {
    return std::make_unique<Pollable>(when);
  }
  std::unique_ptr<io::poll::Pollable> subscribe_duration(Caller&, clocks::monotonic_clock::Duration when) override {
    const uint64_t now = monotonic_now();
    return std::make_unique<Pollable>(when > UINT64_MAX - now ? UINT64_MAX : now + when);
  }
};

class WallClock final : public clocks::wall_clock::Host {
 public:
  explicit WallClock(std::optional<uint64_t> fixed_ns) : fixed_ns_(fixed_ns) {}
  clocks::wall_clock::Datetime now(Caller&) override {
    const uint64_t ns = fixed_ns_.value_or(static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count()));
    return {ns / 1000000000, static_cast<uint32_t>(ns % 1000000000)};
  }
  clocks::wall_clock::Datetime resolution(Caller&) override { return {0, 1}; }

 private:
  std::optional<uint64_t> fixed_ns_;
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
  explicit Wasi(WasiConfig config)
      : config_(std::move(config)),
        random_(config_.random_seed.value_or(std::random_device{}())),
        stdin_(StdioFd::open(STDIN_FILENO, config_.stdin_bytes ? std::nullopt : config_.stdin_file, O_RDONLY)),
        stdout_(StdioFd::open(STDOUT_FILENO, config_.stdout_buffer ? std::nullopt : config_.stdout_file,
                              O_WRONLY | O_CREAT | O_TRUNC)),
        stderr_(StdioFd::open(STDERR_FILENO, config_.stderr_buffer ? std::nullopt : config_.stderr_file,
                              O_WRONLY | O_CREAT | O_TRUNC)) {}

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
    return std::make_unique<Stdin>(handles, stdin_, config_.stdin_bytes);
  }
  std::unique_ptr<io::streams::OutputStream> get_stdout(Caller&) override {
    return std::make_unique<Output>(handles, stdout_, config_.stdout_buffer);
  }
  std::unique_ptr<io::streams::OutputStream> get_stderr(Caller&) override {
    return std::make_unique<Output>(handles, stderr_, config_.stderr_buffer);
  }
  // A terminal only when the stream is the process's and a terminal.
  std::optional<abi::typed::Own<cli::terminal_input::TerminalInput>> get_terminal_stdin(Caller& caller) override {
    if (config_.stdin_bytes || !::isatty(stdin_->get())) return std::nullopt;
    return handles->terminal_inputs->terminal_input.make_own(caller.store(), std::make_unique<Terminal>());
  }
  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> get_terminal_stdout(Caller& caller) override {
    return terminal_output(caller, stdout_->get(), config_.stdout_buffer != nullptr);
  }
  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> get_terminal_stderr(Caller& caller) override {
    return terminal_output(caller, stderr_->get(), config_.stderr_buffer != nullptr);
  }

  // wasi:filesystem (filesystem.cpp)
  std::optional<fs::types::ErrorCode> filesystem_error_code(Caller&, io::error::Error& error) override {
    return detail::filesystem_error_code(error);
  }
  std::vector<std::tuple<abi::typed::Own<fs::types::Descriptor>, std::string>> get_directories(
      Caller& caller) override {
    return detail::open_preopens(caller, config_.preopens, handles);
  }

  // wasi:random; insecure ones from the same generator.
  std::vector<uint8_t> get_random_bytes(Caller&, uint64_t len) override { return bytes(len); }
  uint64_t get_random_u64(Caller&) override { return random_(); }
  std::vector<uint8_t> get_insecure_random_bytes(Caller&, uint64_t len) override { return bytes(len); }
  uint64_t get_insecure_random_u64(Caller&) override { return random_(); }
  std::tuple<uint64_t, uint64_t> insecure_seed(Caller&) override { return {random_(), random_()}; }

 private:
  std::vector<uint8_t> bytes(uint64_t len) {
    if (len > (uint64_t{1} << 26)) throw_trap("wasi:random: more than 64 MiB of random bytes asked for");
    std::vector<uint8_t> out(len);
    for (uint8_t& b : out) b = static_cast<uint8_t>(random_());
    return out;
  }

  std::optional<abi::typed::Own<cli::terminal_output::TerminalOutput>> terminal_output(Caller& caller, int fd,
                                                                                      bool buffered) {
    if (buffered || !::isatty(fd)) return std::nullopt;
    return handles->terminal_outputs->terminal_output.make_own(caller.store(), std::make_unique<Terminal>());
  }

  WasiConfig config_;
  std::mt19937_64 random_;
  std::shared_ptr<StdioFd> stdin_, stdout_, stderr_;
};

}  // namespace

void add_to_linker(Linker& linker, const WasiConfig& config) {
  detail::check_preopens(config.preopens);
  auto wasi = std::make_shared<Wasi>(config);
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

int run(Store& store, const Instance& instance) {
  const auto command = instance.typed_func<Result<void, void>()>("wasi:cli/run#run");
  try {
    return command.call(store).is_ok() ? 0 : 1;
  } catch (const Exit& exit) {
    return exit.code();
  }
}

}  // namespace cmhost::wasi
