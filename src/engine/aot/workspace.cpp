#include "workspace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>

#include "artifact.hpp"
#include "cmhost/error.hpp"

namespace cmhost::engine::aot {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void usage(const std::string& message) { throw Error(ErrorKind::Usage, message); }

constexpr std::array<int, 3> kStopSignals = {SIGINT, SIGTERM, SIGHUP};
constexpr const char* kPrefix = "cmhost-build-";
constexpr time_t kStaleSeconds = 60 * 60;

volatile sig_atomic_t g_requested = 0;

extern "C" void on_stop_signal(int signal) {
  if (!g_requested) g_requested = signal;
}

struct Interception {
  std::mutex mutex;
  int guards = 0;
  std::array<bool, kStopSignals.size()> ours{};
  std::array<struct sigaction, kStopSignals.size()> before{};
};

Interception& interception() {
  static Interception* state = new Interception;  // never destroyed: guards may outlive static destruction
  return *state;
}

// A directory of this user's that nobody else can write (`building/` of the
// cache, which cache_directory checked likewise).
bool closed_directory(const fs::path& dir) {
  struct stat info {};
  return lstat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == geteuid() &&
         !(info.st_mode & (S_IWGRP | S_IWOTH));
}

// Where builds make their directories: the cache's `building/`, else the
// system's temporary directory.
fs::path build_root(const std::string& cache_dir) {
  try {
    const fs::path root = fs::path(cache_directory(cache_dir)) / "building";
    if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
      usage("cannot create " + root.string() + ": " + std::strerror(errno));
    if (!closed_directory(root)) usage(root.string() + " is not a directory of this user's closed to others");
    return root;
  } catch (const Error&) {
    const char* tmp = std::getenv("TMPDIR");
    return fs::path(tmp && *tmp ? tmp : "/tmp");
  }
}

// Build directories whose process was killed before it could remove them.
void remove_stale(const fs::path& root) {
  std::error_code error;
  const time_t now = std::time(nullptr);
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (entry.path().filename().string().rfind(kPrefix, 0) != 0) continue;
    struct stat info {};
    if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != geteuid()) continue;
    if (now - info.st_mtime < kStaleSeconds) continue;  // perhaps a build under way
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

}  // namespace

InterruptGuard::InterruptGuard() {
  Interception& state = interception();
  const std::lock_guard<std::mutex> lock(state.mutex);
  if (state.guards++ > 0) return;
  for (size_t i = 0; i < kStopSignals.size(); ++i) {
    struct sigaction current {};
    sigaction(kStopSignals[i], nullptr, &current);
    state.ours[i] = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
    if (!state.ours[i]) continue;
    struct sigaction handler {};
    handler.sa_handler = on_stop_signal;
    sigemptyset(&handler.sa_mask);
    handler.sa_flags = 0;  // no SA_RESTART: a wait for the compiler ends with EINTR
    sigaction(kStopSignals[i], &handler, &state.before[i]);
  }
}

InterruptGuard::~InterruptGuard() {
  Interception& state = interception();
  int raise_again = 0;
  {
    const std::lock_guard<std::mutex> lock(state.mutex);
    if (--state.guards > 0) return;
    for (size_t i = 0; i < kStopSignals.size(); ++i)
      if (state.ours[i]) sigaction(kStopSignals[i], &state.before[i], nullptr);
    raise_again = g_requested;
    g_requested = 0;
  }
  // Everything the builds made is gone by now: the process ends as the
  // signal would have ended it.
  if (raise_again) std::raise(raise_again);
}

int InterruptGuard::requested() { return g_requested; }

void InterruptGuard::check() {
  if (const int signal = g_requested)
    usage(std::string("the compile was interrupted (") + (sigabbrev_np(signal) ? "SIG" + std::string(sigabbrev_np(signal)) : "a signal") + ")");
}

BuildWorkspace::BuildWorkspace(const std::string& cache_dir) {
  const fs::path root = build_root(cache_dir);
  remove_stale(root);
  std::string path_template = (root / (std::string(kPrefix) + "XXXXXX")).string();
  if (!mkdtemp(path_template.data()))
    usage("cannot create a build directory in " + root.string() + ": " + std::strerror(errno));
  path_ = path_template;
}

BuildWorkspace::~BuildWorkspace() {
  if (std::getenv("CMHOST_AOT_KEEP_SOURCES")) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

void place_artifact(const fs::path& built, const fs::path& target) {
  std::error_code error;
  fs::rename(built, target, error);
  if (!error) return;
  if (error != std::errc::cross_device_link)
    usage("cannot move the artifact into place at " + target.string() + ": " + error.message());
  // Another file system: a hidden copy beside the target, then a rename.
  std::string partial = (target.parent_path() / ("." + target.filename().string() + ".partial-XXXXXX")).string();
  const int out = mkstemp(partial.data());
  if (out < 0) usage("cannot write beside " + target.string() + ": " + std::strerror(errno));
  struct Remove {
    std::string path;
    bool keep = false;
    ~Remove() {
      if (!keep) unlink(path.c_str());
    }
  } remove{partial};
  const int in = open(built.c_str(), O_RDONLY | O_CLOEXEC);
  bool copied = in >= 0;
  char buffer[1 << 16];
  for (ssize_t n; copied && (n = read(in, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    for (ssize_t done = 0; copied && n > 0 && done < n;) {
      const ssize_t wrote = write(out, buffer + done, static_cast<size_t>(n - done));
      if (wrote < 0 && errno == EINTR) continue;
      copied = wrote > 0;
      done += wrote;
    }
    copied = copied && n > 0;
  }
  if (in >= 0) close(in);
  copied = copied && fchmod(out, 0600) == 0 && fsync(out) == 0;
  close(out);
  InterruptGuard::check();
  if (!copied || rename(partial.c_str(), target.c_str()) != 0)
    usage("cannot write the artifact " + target.string() + ": " + std::strerror(errno));
  remove.keep = true;
}

}  // namespace cmhost::engine::aot
