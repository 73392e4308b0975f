// wasi:cli@0.3.0 on the generated bindings: stdout and stderr take the
// guest's stream in place, a write(2) straight from its memory at a time,
// and stdin reads straight into the guest's buffer, both waiting on their
// descriptor in the store's reactor when it would block; the futures
// resolve when the stream ends. Environment, exit and the terminals answer
// as WASI 0.2's do.
#include "cli.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/streams.hpp"
#include "wasi/p3/bindings.hpp"

namespace cmhost::wasi::p3 {

namespace {

namespace cli = bindings::p3::wasi::cli;
using CliError = cli::types::ErrorCode;
using CliResult = abi::typed::Result<void, CliError>;
using abi::typed::Future;
using abi::typed::Own;
using abi::typed::Stream;
using core::OutputTarget;

constexpr uint64_t kBatch = 64 * 1024;

// Whether `fd` has `events` now: a step about to read or write a
// descriptor that may be blocking (the process's stdio) looks first, so
// the loop never sleeps inside read(2) or write(2).
bool ready_now(int fd, short events) { return core::wait_for(fd, events, 0); }

// How much one write(2) to `fd` may ask for without blocking once poll(2)
// said POLLOUT: a blocking pipe, socket or terminal guarantees only about
// PIPE_BUF bytes of room then; a file takes what it is given.
uint64_t write_limit(int fd) {
  struct stat st{};
  const int flags = ::fcntl(fd, F_GETFL);
  const bool blocking = flags >= 0 && !(flags & O_NONBLOCK);
  const bool streams = ::fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
  return blocking && streams ? PIPE_BUF : kBatch;
}

// One write-via-stream: each of the guest's writes goes to the output as
// it is, in place (a buffer appends it; a descriptor takes what it takes,
// the rest stays for the next step). The future resolves ok when the
// guest ends the stream, err(pipe) or err(io) when a write fails (the
// stream is dropped then, so the guest's next write sees it gone).
class OutputCopy : public std::enable_shared_from_this<OutputCopy> {
 public:
  OutputCopy(Store& store, StreamReader<uint8_t> reader, OutputTarget target)
      : store_(store), reader_(std::move(reader)), result_(store), target_(std::move(target)) {}
  Future<CliResult> future() const { return result_.readable_handle(); }

  void next() {
    auto done = [self = shared_from_this()](CopyOutcome outcome) {
      if (self->error_) return self->finish(CliResult::err(self->error_ == EPIPE ? CliError::pipe : CliError::io));
      if (outcome.status == CopyStatus::Dropped) return self->finish(CliResult::ok());
      self->next();
    };
    if (target_.buffer) {
      reader_.start_in_place(
          store_, kBatch,
          [self = shared_from_this()](abi::AbiContext& cx, uint64_t ptr, uint64_t n) {
            self->target_.buffer->append(reinterpret_cast<const char*>(guest_bytes(cx, ptr, n)), n);
            return n;
          },
          std::move(done));
      return;
    }
    const int fd = target_.fd->get();
    const uint64_t limit = write_limit(fd);
    reader_.start_when_ready(
        store_, fd, POLLOUT, kBatch,
        [self = shared_from_this(), fd, limit](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
          if (!ready_now(fd, POLLOUT)) return 0;
          ssize_t wrote;
          do wrote = ::write(fd, guest_bytes(cx, ptr, n), std::min(n, limit));
          while (wrote < 0 && errno == EINTR);
          if (wrote >= 0) return static_cast<uint64_t>(wrote);
          if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
          self->error_ = errno;
          return std::nullopt;
        },
        std::move(done));
  }

 private:
  void finish(CliResult result) {
    if (!reader_.ended()) reader_.close();
    result_.start_write(store_, result, [self = shared_from_this()](CopyOutcome) {});
  }

  Store& store_;
  StreamReader<uint8_t> reader_;
  FutureWriter<CliResult> result_;
  OutputTarget target_;
  int error_ = 0;
};

// What stdin reads from, shared by every read-via-stream of the linker's
// stores: configured bytes are read once, in order, whichever stream
// asks; a descriptor is read only when a guest's read is pending, straight
// into its buffer, so nothing read is ever held back from a later stream.
struct StdinSource {
  std::shared_ptr<core::StdioFd> fd;
  std::optional<std::string> bytes;
  size_t offset = 0;
  std::mutex mutex;  // stores on several threads may share the linker

  bool exhausted() {
    const std::lock_guard<std::mutex> lock(mutex);
    return offset == bytes->size();
  }
};

// One read-via-stream: stdin's bytes written into the guest's reads as it
// makes them; the future resolves ok at the end of input or when the guest
// drops the stream, err(io) when a read fails.
class InputCopy : public std::enable_shared_from_this<InputCopy> {
 public:
  InputCopy(Store& store, std::shared_ptr<StdinSource> source)
      : store_(store), source_(std::move(source)), writer_(store), result_(store) {}
  std::tuple<Stream<uint8_t>, Future<CliResult>> ends() const {
    return {writer_.readable_handle(), result_.readable_handle()};
  }

  void next() {
    auto done = [self = shared_from_this()](CopyOutcome outcome) {
      if (self->error_) return self->finish(CliResult::err(CliError::io));
      if (outcome.status == CopyStatus::Dropped || self->ended_) return self->finish(CliResult::ok());
      self->next();
    };
    if (source_->bytes) {
      if (source_->exhausted()) return finish(CliResult::ok());  // nothing left to give, or none at all
      writer_.start_in_place(
          store_, kBatch,
          [self = shared_from_this()](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> uint64_t {
            StdinSource& source = *self->source_;
            const std::lock_guard<std::mutex> lock(source.mutex);
            const uint64_t take = std::min<uint64_t>(n, source.bytes->size() - source.offset);
            std::memcpy(guest_bytes(cx, ptr, take), source.bytes->data() + source.offset, take);
            source.offset += take;
            if (source.offset == source.bytes->size()) self->ended_ = true;
            return take;
          },
          std::move(done));
      return;
    }
    const int fd = source_->fd->get();
    writer_.start_when_ready(
        store_, fd, POLLIN, kBatch,
        [self = shared_from_this(), fd](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
          // Stores on other threads may read the same descriptor: the look
          // and the read go together, so the read never blocks.
          const std::lock_guard<std::mutex> lock(self->source_->mutex);
          if (!ready_now(fd, POLLIN)) return 0;
          const ssize_t got = core::read_some(fd, guest_bytes(cx, ptr, n), n);
          if (got > 0) return static_cast<uint64_t>(got);
          if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
          if (got < 0) self->error_ = errno;
          self->ended_ = true;
          return std::nullopt;
        },
        std::move(done));
  }

 private:
  void finish(CliResult result) {
    if (!writer_.ended()) writer_.close();
    result_.start_write(store_, result, [self = shared_from_this()](CopyOutcome) {});
  }

  Store& store_;
  std::shared_ptr<StdinSource> source_;
  StreamWriter<uint8_t> writer_;
  FutureWriter<CliResult> result_;
  bool ended_ = false;
  int error_ = 0;
};

class Environment final : public cli::environment::Host {
 public:
  explicit Environment(const WasiConfig& config) : env_(config.env), args_(config.args) {}
  std::vector<std::tuple<std::string, std::string>> get_environment(Caller&) override {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& [k, v] : env_) out.emplace_back(k, v);
    return out;
  }
  std::vector<std::string> get_arguments(Caller&) override { return args_; }
  std::optional<std::string> get_initial_cwd(Caller&) override { return std::nullopt; }

 private:
  std::vector<std::pair<std::string, std::string>> env_;
  std::vector<std::string> args_;
};

class ExitHost final : public cli::exit::Host {
 public:
  void exit(Caller&, abi::typed::Result<void, void> status) override { throw Exit(status.is_ok() ? 0 : 1); }
  void exit_with_code(Caller&, uint8_t code) override { throw Exit(code); }
};

class Stdin final : public cli::stdin::Host {
 public:
  explicit Stdin(std::shared_ptr<StdinSource> source) : source_(std::move(source)) {}
  std::tuple<Stream<uint8_t>, Future<CliResult>> read_via_stream(Caller& caller) override {
    auto copy = std::make_shared<InputCopy>(caller.store(), source_);
    auto ends = copy->ends();
    copy->next();
    return ends;
  }

 private:
  std::shared_ptr<StdinSource> source_;
};

// stdout and stderr: the bindings give each interface a Host of its own.
template <class Interface>
class Output final : public Interface {
 public:
  explicit Output(OutputTarget target) : target_(std::move(target)) {}
  Future<CliResult> write_via_stream(Caller& caller, StreamReader<uint8_t> data) override {
    auto copy = std::make_shared<OutputCopy>(caller.store(), std::move(data), target_);
    copy->next();
    return copy->future();
  }

 private:
  OutputTarget target_;
};

// The terminal resources have no methods in 0.3.0; a stream is a terminal
// only when it is the process's own and a tty, decided once.
class TerminalInput final : public cli::terminal_input::TerminalInput {};
class TerminalOutput final : public cli::terminal_output::TerminalOutput {};
class NoTerminalHost final : public cli::terminal_input::Host, public cli::terminal_output::Host {};

class Terminals final : public cli::terminal_stdin::Host,
                        public cli::terminal_stdout::Host,
                        public cli::terminal_stderr::Host {
 public:
  Terminals(cli::terminal_input::Resources input, cli::terminal_output::Resources output, bool in, bool out, bool err)
      : input_(input), output_(output), stdin_tty_(in), stdout_tty_(out), stderr_tty_(err) {}
  std::optional<Own<cli::terminal_input::TerminalInput>> get_terminal_stdin(Caller& caller) override {
    if (!stdin_tty_) return std::nullopt;
    return input_.terminal_input.make_own(caller.store(), std::make_unique<TerminalInput>());
  }
  std::optional<Own<cli::terminal_output::TerminalOutput>> get_terminal_stdout(Caller& caller) override {
    return output(caller, stdout_tty_);
  }
  std::optional<Own<cli::terminal_output::TerminalOutput>> get_terminal_stderr(Caller& caller) override {
    return output(caller, stderr_tty_);
  }

 private:
  std::optional<Own<cli::terminal_output::TerminalOutput>> output(Caller& caller, bool tty) const {
    if (!tty) return std::nullopt;
    return output_.terminal_output.make_own(caller.store(), std::make_unique<TerminalOutput>());
  }
  cli::terminal_input::Resources input_;
  cli::terminal_output::Resources output_;
  bool stdin_tty_, stdout_tty_, stderr_tty_;
};

}  // namespace

void add_cli(Linker& linker, const WasiConfig& config, std::shared_ptr<const core::StdioFds> stdio) {
  cli::environment::add_to_linker(linker, std::make_shared<Environment>(config));
  cli::exit::add_to_linker(linker, std::make_shared<ExitHost>());
  auto source = std::make_shared<StdinSource>();
  source->fd = stdio->in;
  source->bytes = config.stdin_bytes;
  cli::stdin::add_to_linker(linker, std::make_shared<Stdin>(std::move(source)));
  cli::stdout::add_to_linker(linker,
                             std::make_shared<Output<cli::stdout::Host>>(OutputTarget{stdio->out, config.stdout_buffer}));
  cli::stderr::add_to_linker(linker,
                             std::make_shared<Output<cli::stderr::Host>>(OutputTarget{stdio->err, config.stderr_buffer}));
  auto no_methods = std::make_shared<NoTerminalHost>();
  const auto input = cli::terminal_input::add_to_linker(linker, no_methods);
  const auto output = cli::terminal_output::add_to_linker(linker, no_methods);
  auto terminals = std::make_shared<Terminals>(input, output, !config.stdin_bytes && ::isatty(stdio->in->get()),
                                               !config.stdout_buffer && ::isatty(stdio->out->get()),
                                               !config.stderr_buffer && ::isatty(stdio->err->get()));
  cli::terminal_stdin::add_to_linker(linker, terminals);
  cli::terminal_stdout::add_to_linker(linker, terminals);
  cli::terminal_stderr::add_to_linker(linker, terminals);
}

int run(Store& store, const Func& command) {
  try {
    // The status follows run's task: tasks it left behind do not run on
    // (what they would print is not the program's). Output the guest wrote
    // is out already: stdout's copies write as they take the guest's bytes.
    const std::vector<Val> results = command.call(store, {});
    return results.at(0).case_index() == 0 ? 0 : 1;
  } catch (const Exit& exit) {
    return exit.code();
  }
}

}  // namespace cmhost::wasi::p3
