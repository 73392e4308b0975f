// Where an artifact is built, and what happens when the build is stopped.
//
// A build works in a directory of its own under the cache directory's
// `building/` (closed to others like the cache; $TMPDIR when there is no
// cache), never beside the user's files, and the directory goes when the
// build ends, however it ends: success, a failure, or SIGINT, SIGTERM or
// SIGHUP, which stop the compiler processes first and then end the process
// as the signal would have. Directories a killed process left behind
// (older than an hour, this user's) go with the next build.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace cmhost::engine::aot {

// While one lives, SIGINT, SIGTERM and SIGHUP, when nothing else in the
// process handles them, are held as a request to stop instead of ending
// the process at once; when the last one goes, the signals are as before,
// and one that arrived meanwhile is raised again, ending the process once
// the builds have cleaned up. A process that handles the signals itself
// keeps them: its builds run to their end.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal that asked the builds to stop, or 0.
  static int requested();
  // Throws Error (Usage) saying the build was interrupted, when one was.
  static void check();
};

// A build's private directory, removed with everything in it when this
// goes (unless CMHOST_AOT_KEEP_SOURCES is set, to look at the C).
class BuildWorkspace {
 public:
  // `cache_dir` is EngineConfig::cache_dir (empty: the default cache).
  explicit BuildWorkspace(const std::string& cache_dir);
  ~BuildWorkspace();
  BuildWorkspace(const BuildWorkspace&) = delete;
  BuildWorkspace& operator=(const BuildWorkspace&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Moves the finished artifact at `built` to `target`: a rename, or across
// file systems a copy to a hidden file beside `target` renamed over it, so
// that `target` is never seen half written. Throws Usage when it cannot.
void place_artifact(const std::filesystem::path& built, const std::filesystem::path& target);

}  // namespace cmhost::engine::aot
