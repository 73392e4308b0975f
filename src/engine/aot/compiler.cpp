#include "compiler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "cmhost/error.hpp"
#include "rt.h"
#include "workspace.hpp"

extern char** environ;

namespace cmhost::engine::aot {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

void start(CompilerJob& job) {
  std::vector<char*> argv;
  for (std::string& a : job.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  // A process group of its own: the driver's own children (cc1, as) stop
  // with it when the build is stopped.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const int failed = posix_spawnp(&job.pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (failed) usage("cannot run the C compiler " + job.argv[0] + ": " + std::strerror(failed));
  job.pidfd = static_cast<int>(syscall(SYS_pidfd_open, job.pid, 0));
}

// Its exit status once it ended (`block`: waiting for that), closing its
// process descriptor; none while it runs.
std::optional<int> reap(CompilerJob& job, bool block) {
  int status = 0;
  pid_t got;
  do got = waitpid(job.pid, &status, block ? 0 : WNOHANG);
  while (got < 0 && errno == EINTR && block);
  if (got == 0 || (got < 0 && errno == EINTR)) return std::nullopt;
  if (job.pidfd >= 0) close(job.pidfd);
  job.pidfd = -1;
  return got < 0 ? -1 : status;
}

// Sleeps until one of the jobs ends, or a signal arrives (EINTR: the
// caller looks at the stop request): one poll(2) over their process
// descriptors, so only this build's children count, whatever other threads
// spawn. Without them (a kernel before 5.3), short sleeps between looks.
void wait_for_one(const std::vector<CompilerJob*>& running) {
  std::vector<pollfd> fds;
  for (const CompilerJob* job : running)
    if (job->pidfd >= 0) fds.push_back({job->pidfd, POLLIN, 0});
  ::poll(fds.data(), fds.size(), fds.size() == running.size() ? -1 : 50);
}

std::string first_lines(const std::string& path, size_t count) {
  std::ifstream in(path);
  std::string line, out;
  for (size_t i = 0; i < count && std::getline(in, line); ++i) out += (i ? "\n" : "") + line;
  return out;
}

}  // namespace

std::string resolve_compiler(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::weakly_canonical(name).string();
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return fs::canonical(candidate).string();
  }
  usage("the ahead-of-time backend needs a C compiler: `" + name + "` is not on PATH");
}

std::string compiler_identity(const std::string& resolved) {
  struct stat info {};
  if (stat(resolved.c_str(), &info) != 0) usage("cannot read the C compiler " + resolved);
  return resolved + " " + std::to_string(info.st_size) + " " + std::to_string(info.st_mtim.tv_sec);
}

std::string compiler_version(const std::string& resolved, const fs::path& scratch) {
  CompilerJob job{{resolved, "--version"}, (scratch / "version.log").string(), "--version"};
  // --version writes to stdout: send it to the log instead.
  std::vector<char*> argv{job.argv[0].data(), job.argv[1].data(), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, job.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = -1;
  int status = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&actions);
  return first_lines(job.log, 1);
}

// No sibling-call optimisation: wasm calls are never tail calls, and a
// recursion the C compiler turned into a loop would never reach the stack
// limit. TinyCC (the baseline tier) optimises nothing and writes
// position-independent code as it is.
std::string artifact_flags(bool metered, bool baseline) {
  std::string f = baseline ? "-DNDEBUG"
                           : "-std=gnu11 -O2 -fPIC -fvisibility=hidden -fstack-clash-protection -fno-strict-aliasing "
                             "-fno-optimize-sibling-calls -DNDEBUG";
  f += CMHOST_RT_GUARD_PAGES ? " -DWASM_RT_MEMCHECK_SIGNAL_HANDLER=1" : " -DWASM_RT_MEMCHECK_SIGNAL_HANDLER=0";
  f += " -w";
  f += " abi=" + std::to_string(CMHOST_AOT_ABI);
  if (baseline) f += " tier=baseline";
  if (metered) f += kMeteredFlag;
  return f;
}

std::vector<std::string> compile_flags(bool metered, bool baseline) {
  std::vector<std::string> out;
  std::istringstream words(artifact_flags(metered, baseline));
  std::string word;
  while (words >> word)
    if (word.rfind('-', 0) == 0) out.push_back(word);
  return out;
}

void run_all(std::vector<CompilerJob>& jobs) {
  const size_t parallel = std::max(1u, std::thread::hardware_concurrency());
  size_t next = 0;
  std::vector<CompilerJob*> running;
  std::string failure;
  // A stop request ends the compilers first, so that nothing writes into
  // the build directory as it goes.
  const auto stop_all = [&] {
    for (CompilerJob* job : running) kill(-job->pid, SIGTERM);
    for (CompilerJob* job : running) reap(*job, true);
    running.clear();
  };
  while (next < jobs.size() || !running.empty()) {
    if (InterruptGuard::requested()) {
      stop_all();
      InterruptGuard::check();
    }
    while (failure.empty() && next < jobs.size() && running.size() < parallel) {
      start(jobs[next]);
      running.push_back(&jobs[next++]);
    }
    if (running.empty()) break;
    wait_for_one(running);
    for (auto it = running.begin(); it != running.end();) {
      const std::optional<int> status = reap(**it, false);
      if (!status) {
        ++it;
        continue;
      }
      if ((!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) && failure.empty())
        failure = "the C compiler failed on " + (*it)->what + ":\n" + first_lines((*it)->log, 12);
      it = running.erase(it);
    }
  }
  if (!failure.empty()) usage(failure);
}

}  // namespace cmhost::engine::aot
