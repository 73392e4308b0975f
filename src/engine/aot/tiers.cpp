#include "tiers.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "artifact.hpp"
#include "build_request.hpp"
#include "cmhost/error.hpp"
#include "compiler.hpp"

extern char** environ;

namespace cmhost::engine::aot {

namespace {

namespace fs = std::filesystem;

constexpr const char* kBuilderName = "cmhost-aot-build";

// An unsigned LEB128 at `at`, moved past; false when it runs off the end.
bool read_leb(std::span<const uint8_t> bytes, size_t& at, uint64_t& value) {
  value = 0;
  for (unsigned shift = 0; at < bytes.size() && shift < 64; shift += 7) {
    const uint8_t byte = bytes[at++];
    value |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

size_t module_code_bytes(std::span<const uint8_t> module) {
  constexpr uint8_t kCodeSection = 10;
  size_t at = 8;  // magic and version
  size_t code = 0;
  while (at < module.size()) {
    const uint8_t id = module[at++];
    uint64_t size = 0;
    if (!read_leb(module, at, size) || size > module.size() - at) return module.size();
    if (id == kCodeSection) code += size;
    at += size;
  }
  return code;
}

}  // namespace

size_t code_bytes(const std::vector<std::span<const uint8_t>>& modules) {
  size_t total = 0;
  for (const auto& module : modules) total += module_code_bytes(module);
  return total;
}

bool tier_compiler_available(const BuildSettings& settings) {
  try {
    resolve_compiler(tier_compiler(settings));
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string find_builder(const std::string& configured) {
  const auto runnable = [](const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; };
  if (!configured.empty()) return runnable(configured) ? configured : std::string();
  if (const char* from_environment = std::getenv("CMHOST_AOT_BUILDER"))
    return runnable(from_environment) ? std::string(from_environment) : std::string();
  std::error_code error;
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (error) return {};
  for (const fs::path& candidate : {executable.parent_path() / kBuilderName,
                                    executable.parent_path().parent_path() / "libexec" / "cmhost" / kBuilderName}) {
    if (runnable(candidate.string())) return candidate.string();
  }
  return {};
}

void build_in_background(const std::string& builder, const std::string& component_sha256,
                         const std::vector<std::span<const uint8_t>>& modules, const BuildSettings& settings,
                         const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) return;
  std::string request;
  try {
    request = encode_build_request(path, component_sha256, settings, modules);
  } catch (const Error&) {
    return;  // a path it cannot carry: no optimized code, as when a build fails
  }
  // The request goes through an anonymous file on the builder's standard
  // input: nothing is left behind whatever happens to either process.
  int input = memfd_create("cmhost-aot-build-request", MFD_CLOEXEC);
  if (input < 0) return;
  if (input <= 2) {  // a process without standard input: dup2 onto itself would keep it close-on-exec
    const int moved = fcntl(input, F_DUPFD_CLOEXEC, 3);
    close(input);
    if (moved < 0) return;
    input = moved;
  }
  size_t written = 0;
  while (written < request.size()) {
    const ssize_t n = write(input, request.data() + written, request.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(input);
      return;
    }
    written += static_cast<size_t>(n);
  }
  lseek(input, 0, SEEK_SET);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv{const_cast<char*>(builder.c_str()), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, builder.c_str(), &actions, nullptr, argv.data(), environ) == 0) {
    // It leaves at once (run_background_build), its build going on in a
    // process nobody needs to wait for.
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  close(input);
}

int run_background_build() {
  // Detached first, so that the caller waiting for this process goes on.
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) return 0;
  setsid();  // a ^C to the caller's terminal is not for it
  setpriority(PRIO_PROCESS, 0, 10);
  std::string message;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(0, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return 1;
    if (n == 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  close(0);
  BuildRequest request;
  try {
    request = decode_build_request(message);
  } catch (const Error&) {
    return 2;
  }
  message = {};
  const std::string lock_path = request.path + ".building";
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) return 0;
  int status = 0;
  if (access(request.path.c_str(), F_OK) != 0) {
    try {
      const std::vector<std::span<const uint8_t>> modules(request.modules.begin(), request.modules.end());
      build_artifact(request.component_sha256, modules, request.settings, request.path);
    } catch (const Error&) {
      status = 1;  // nobody to tell: the next load tries again
    }
  }
  unlink(lock_path.c_str());
  return status;
}

}  // namespace cmhost::engine::aot
