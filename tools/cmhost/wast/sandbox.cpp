#include "sandbox.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cmhost/error.hpp"
#include "executor.hpp"

namespace cmhost::tools::wast {

namespace {

using Clock = std::chrono::steady_clock;

const Assembled* binary_of(const std::vector<std::optional<Assembled>>& binaries, size_t i) {
  return binaries[i] ? &*binaries[i] : nullptr;
}

Result framed(const Command& command, Status status, Outcome outcome, std::string detail) {
  Result r;
  r.line = command.line;
  r.command = command.keyword;
  r.expected_message = command.message;
  r.set(status, outcome, std::move(detail));
  return r;
}

// Why the instances of a restarted child are gone.
struct Lost {
  Outcome outcome = Outcome::Error;
  std::string why;
};

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// The child: runs commands [from, end) and reports each as one JSON line.
[[noreturn]] void child_main(const engine::EngineConfig& config, int fd, const std::vector<Command>& commands,
                             const std::vector<std::optional<Assembled>>& binaries, size_t from,
                             const Lost& lost, std::optional<int> crash_at_line) {
  Executor executor(config);
  if (from > 0) {
    for (size_t i = 0; i < from; ++i) executor.restore_definition(commands[i], binary_of(binaries, i));
    executor.lose_instances(lost.outcome, lost.why);
  }
  for (size_t i = from; i < commands.size(); ++i) {
    if (commands[i].line == crash_at_line) std::abort();
    const Result r = executor.run(commands[i], binary_of(binaries, i));
    const nlohmann::json line = {
        {"status", static_cast<int>(r.status)}, {"outcome", static_cast<int>(r.outcome)}, {"detail", r.detail}};
    if (!write_all(fd, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n")) ::_exit(3);
  }
  ::_exit(0);  // no destructors: the parent has what it needs
}

std::string exit_description(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("signal {} ({})", sig, ::strsignal(sig));
  }
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  return "unknown status";
}

}  // namespace

std::vector<Result> run_in_process(const engine::EngineConfig& config, const std::vector<Command>& commands,
                                   const std::vector<std::optional<Assembled>>& binaries) {
  Executor executor(config);
  std::vector<Result> results;
  for (size_t i = 0; i < commands.size(); ++i) results.push_back(executor.run(commands[i], binary_of(binaries, i)));
  return results;
}

std::vector<Result> run_sandboxed(const engine::EngineConfig& config, const std::vector<Command>& commands,
                                  const std::vector<std::optional<Assembled>>& binaries, double timeout_seconds,
                                  std::optional<int> crash_at_line) {
  std::vector<Result> results;
  results.reserve(commands.size());
  Lost lost;  // why a restarted child has no instances
  const auto limit = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  while (results.size() < commands.size()) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw Error(ErrorKind::Usage, std::string("pipe: ") + std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(ErrorKind::Usage, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(pipe_fds[0]);
      child_main(config, pipe_fds[1], commands, binaries, results.size(), lost, crash_at_line);
    }
    ::close(pipe_fds[1]);
    const int fd = pipe_fds[0];
    std::string pending;
    auto deadline = Clock::now() + limit;
    bool child_done = false;
    while (!child_done && results.size() < commands.size()) {
      const size_t newline = pending.find('\n');
      if (newline != std::string::npos) {
        const auto line = nlohmann::json::parse(pending.substr(0, newline), nullptr, false);
        pending.erase(0, newline + 1);
        const Command& command = commands[results.size()];
        if (line.is_object())
          results.push_back(framed(command, static_cast<Status>(line.value("status", int(Status::Failed))),
                                   static_cast<Outcome>(line.value("outcome", int(Outcome::Error))),
                                   line.value("detail", std::string())));
        else
          results.push_back(framed(command, Status::Failed, Outcome::Error, "internal error: garbled result"));
        deadline = Clock::now() + limit;
        continue;
      }
      const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{fd, POLLIN, 0};
      const int ready = remaining.count() > 0 ? ::poll(&p, 1, static_cast<int>(remaining.count()) + 1) : 0;
      if (ready < 0 && errno == EINTR) continue;
      const Command& command = commands[results.size()];
      if (ready == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        results.push_back(
            framed(command, Status::Failed, Outcome::Timeout, fmt::format("timed out after {} s", timeout_seconds)));
        lost = {Outcome::Timeout,
                fmt::format("no instance: the command at line {} timed out and took the script's instances with it",
                            command.line)};
        child_done = true;
        break;
      }
      char buffer[65536];
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        pending.append(buffer, static_cast<size_t>(n));
        continue;
      }
      // End of the pipe before every result: the child died in this command.
      int status = 0;
      ::waitpid(pid, &status, 0);
      results.push_back(framed(command, Status::Failed, Outcome::Crash, "cmhost crashed: " + exit_description(status)));
      lost = {Outcome::Crash, fmt::format("no instance: cmhost crashed in the command at line {}", command.line)};
      child_done = true;
    }
    ::close(fd);
    if (!child_done) ::waitpid(pid, nullptr, 0);
  }
  return results;
}

}  // namespace cmhost::tools::wast
