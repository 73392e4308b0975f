// wasi:cli@0.3.0 on the embedder API: stdout and stderr copy the guest's
// stream to the output from the event loop and resolve their future when it
// ends; stdin writes what it reads into a stream of its own, waiting on the
// descriptor in the store's reactor; environment, exit and the terminals
// answer as WASI 0.2's do.
#include "cli.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/streams.hpp"

namespace cmhost::wasi::p3 {

// wasi:cli/types@0.3.0 `error-code`.
enum class CliError : uint8_t { io, illegal_byte_sequence, pipe };

}  // namespace cmhost::wasi::p3

namespace cmhost::abi::typed {
template <>
struct Enum<wasi::p3::CliError> {
  static constexpr size_t count = 3;
};
}  // namespace cmhost::abi::typed

namespace cmhost::wasi::p3 {

namespace {

using abi::Type;
using abi::TypeRef;
using CliResult = abi::typed::Result<void, CliError>;

constexpr const char* kVersion = "@0.3.0";

std::string name(const char* interface, const char* function) {
  return std::string("wasi:cli/") + interface + kVersion + "#" + function;
}

TypeRef error_code_type() { return Type::enum_({"io", "illegal-byte-sequence", "pipe"}); }
TypeRef result_type() { return Type::result(nullptr, error_code_type()); }

using core::OutputTarget;

// One write-via-stream: reads the guest's stream from the loop and writes
// each batch at once, then resolves the future: ok when the guest ends the
// stream, err(pipe) or err(io) when a write fails (the stream is dropped
// then, so the guest's next write sees it gone).
class OutputCopy : public std::enable_shared_from_this<OutputCopy> {
 public:
  static constexpr size_t kBatch = 64 * 1024;

  OutputCopy(Store& store, const Val& stream, OutputTarget target)
      : store_(store), reader_(store, stream), result_(store, result_type()), target_(std::move(target)) {}
  const Val& future() const { return result_.readable(); }

  void next() {
    reader_.start_read(store_, kBatch, [self = shared_from_this()](std::vector<uint8_t> bytes, CopyOutcome outcome) {
      if (!bytes.empty()) {
        if (const int error = self->target_.write(bytes.data(), bytes.size()))
          return self->finish(CliResult::err(error == EPIPE ? CliError::pipe : CliError::io));
      }
      if (outcome.status == CopyStatus::Dropped) return self->finish(CliResult::ok());
      self->next();
    });
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
};

void add_output(Linker& linker, const char* interface, OutputTarget target) {
  FuncType type;
  type.param_names = {"data"};
  type.params = {Type::stream(Type::u8())};
  type.result = Type::future(result_type());
  linker.define_func(name(interface, "write-via-stream"), std::move(type),
                     [target](Caller& caller, std::span<const Val> args) -> std::vector<Val> {
                       auto copy = std::make_shared<OutputCopy>(caller.store(), args[0], target);
                       copy->next();
                       return {copy->future()};
                     });
}

// One read-via-stream: stdin's bytes (the configured ones, or what the
// descriptor gives, waited for in the store's reactor) written into a
// stream of the host's as the guest reads, then the future resolves: ok at
// the end of input (or when the guest drops the stream), err(io) when a
// read fails.
class InputCopy : public std::enable_shared_from_this<InputCopy> {
 public:
  static constexpr size_t kBatch = 64 * 1024;

  InputCopy(Store& store, std::shared_ptr<core::StdioFd> fd, std::optional<std::string> bytes)
      : store_(store),
        fd_(std::move(fd)),
        bytes_(std::move(bytes)),
        writer_(store, Type::u8()),
        result_(store, result_type()) {}
  Val ends() const { return Val::tuple({writer_.readable(), result_.readable()}); }

  void start() {
    if (!bytes_) return next();
    std::vector<uint8_t> data(bytes_->size());
    if (!data.empty()) std::memcpy(data.data(), bytes_->data(), data.size());
    write(std::move(data), /*last=*/true);
  }

 private:
  void next() {
    store_.when_ready(fd_->get(), POLLIN, [self = shared_from_this()](short) {
      std::vector<uint8_t> bytes(kBatch);
      const ssize_t n = core::read_some(self->fd_->get(), bytes.data(), bytes.size());
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return self->next();
      if (n < 0) return self->finish(CliResult::err(CliError::io));
      if (n == 0) return self->finish(CliResult::ok());
      bytes.resize(static_cast<size_t>(n));
      self->write(std::move(bytes), /*last=*/false);
    });
  }

  void write(std::vector<uint8_t> bytes, bool last) {
    if (bytes.empty()) return finish(CliResult::ok());
    writer_.start_write(store_, std::move(bytes), [self = shared_from_this(), last](CopyOutcome outcome) {
      if (outcome.status == CopyStatus::Dropped || last) return self->finish(CliResult::ok());
      self->next();
    });
  }

  void finish(CliResult result) {
    if (!writer_.ended()) writer_.close();
    result_.start_write(store_, result, [self = shared_from_this()](CopyOutcome) {});
  }

  Store& store_;
  std::shared_ptr<core::StdioFd> fd_;
  std::optional<std::string> bytes_;
  StreamWriter<uint8_t> writer_;
  FutureWriter<CliResult> result_;
};

// The terminal resources have no methods in 0.3.0; a stream is a terminal
// only when it is the process's own and a tty.
class TerminalInput {};
class TerminalOutput {};

void add_terminals(Linker& linker, const WasiConfig& config, const core::StdioFds& stdio) {
  const auto input = linker.define_resource<TerminalInput>(name("terminal-input", "terminal-input"));
  const auto output = linker.define_resource<TerminalOutput>(name("terminal-output", "terminal-output"));
  // The interfaces that `use` them name the same resources.
  linker.define_resource(name("terminal-stdin", "terminal-input"), input);
  linker.define_resource(name("terminal-stdout", "terminal-output"), output);
  linker.define_resource(name("terminal-stderr", "terminal-output"), output);
  const bool stdin_tty = !config.stdin_bytes && ::isatty(stdio.in->get());
  const bool stdout_tty = !config.stdout_buffer && ::isatty(stdio.out->get());
  const bool stderr_tty = !config.stderr_buffer && ::isatty(stdio.err->get());
  linker.func_wrap(name("terminal-stdin", "get-terminal-stdin"),
                   [input, stdin_tty](Caller& caller) -> std::optional<abi::typed::Own<TerminalInput>> {
                     if (!stdin_tty) return std::nullopt;
                     return input.make_own(caller.store(), std::make_unique<TerminalInput>());
                   });
  for (const auto& [interface, function, tty] : {std::tuple{"terminal-stdout", "get-terminal-stdout", stdout_tty},
                                                 std::tuple{"terminal-stderr", "get-terminal-stderr", stderr_tty}})
    linker.func_wrap(name(interface, function),
                     [output, tty](Caller& caller) -> std::optional<abi::typed::Own<TerminalOutput>> {
                       if (!tty) return std::nullopt;
                       return output.make_own(caller.store(), std::make_unique<TerminalOutput>());
                     });
}

}  // namespace

void add_cli(Linker& linker, const WasiConfig& config, std::shared_ptr<const core::StdioFds> stdio) {
  linker.func_wrap(name("environment", "get-environment"), [env = config.env] {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& [k, v] : env) out.emplace_back(k, v);
    return out;
  });
  linker.func_wrap(name("environment", "get-arguments"), [args = config.args] { return args; });
  linker.func_wrap(name("environment", "get-initial-cwd"), [] { return std::optional<std::string>(); });
  linker.func_wrap(name("exit", "exit"),
                   [](abi::typed::Result<void, void> status) { throw Exit(status.is_ok() ? 0 : 1); });
  linker.func_wrap(name("exit", "exit-with-code"), [](uint8_t code) { throw Exit(code); });
  FuncType read_type;
  read_type.result = Type::tuple({Type::stream(Type::u8()), Type::future(result_type())});
  linker.define_func(name("stdin", "read-via-stream"), std::move(read_type),
                     [fd = stdio->in, bytes = config.stdin_bytes](Caller& caller, std::span<const Val>) {
                       auto copy = std::make_shared<InputCopy>(caller.store(), fd, bytes);
                       copy->start();
                       return std::vector<Val>{copy->ends()};
                     });
  add_output(linker, "stdout", OutputTarget{stdio->out, config.stdout_buffer});
  add_output(linker, "stderr", OutputTarget{stdio->err, config.stderr_buffer});
  add_terminals(linker, config, *stdio);
}

int run(Store& store, const Func& command) {
  try {
    const std::vector<Val> results = command.call(store, {});
    // Output the guest wrote before returning is copied out before the
    // status goes back (what is ready now; tasks left blocked stay so).
    store.run_until_idle();
    return results.at(0).case_index() == 0 ? 0 : 1;
  } catch (const Exit& exit) {
    return exit.code();
  }
}

}  // namespace cmhost::wasi::p3
