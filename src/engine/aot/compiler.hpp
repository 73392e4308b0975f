// The system C compiler as the ahead-of-time backend uses it: found on PATH,
// named in a stamp without running it, the flags every artifact is compiled
// with, and compiler runs in parallel, their failures reported with the
// first lines of their output.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace cmhost::engine::aot {

// Where the compiler lives: a path as given, else the first match on PATH.
// Throws Usage when there is none.
std::string resolve_compiler(const std::string& name);

// The compiler as a stamp names it: its file, which changes when the
// compiler is replaced, without running it.
std::string compiler_identity(const std::string& resolved);

// The first line of `resolved --version` (run in `scratch`).
std::string compiler_version(const std::string& resolved, const std::filesystem::path& scratch);

// What the flags of a metered artifact end with (the metering rewrite
// before translation: a refill import called per slice).
inline constexpr const char* kMeteredFlag = " metered=slices";

// The flags as a stamp records them (with the artifact ABI, the tier and
// metering), and the compiler's share of them. `baseline`: TinyCC's.
std::string artifact_flags(bool metered, bool baseline = false);
std::vector<std::string> compile_flags(bool metered, bool baseline = false);

// One run of the compiler: its arguments, the file its stderr goes to, and
// what it compiles, for the error message.
struct CompilerJob {
  std::vector<std::string> argv;
  std::string log;
  std::string what;
  pid_t pid = -1;
  int pidfd = -1;  // its process descriptor while it runs (pidfd_open), for poll(2)
};

// Runs the jobs, as many at once as there are cores; throws Usage naming
// the first that failed, or saying a signal stopped the build (the jobs
// running then are ended first: InterruptGuard).
void run_all(std::vector<CompilerJob>& jobs);

}  // namespace cmhost::engine::aot
