#include "tiers.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact.hpp"
#include "cmhost/error.hpp"
#include "compiler.hpp"

namespace cmhost::engine::aot {

namespace {

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

void build_in_background(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                         const BuildSettings& settings, const std::string& path) {
  // Forked twice: the builder is nobody's child to wait for, and goes on
  // when the process that wanted it ends.
  const pid_t child = fork();
  if (child < 0) return;
  if (child > 0) {
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  if (fork() != 0) _exit(0);
  setsid();  // a ^C to the caller's terminal is not for it
  setpriority(PRIO_PROCESS, 0, 10);
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0)
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
  const std::string lock_path = path + ".building";
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) != 0) _exit(0);
  if (access(path.c_str(), F_OK) != 0) {
    try {
      build_artifact(component, modules, settings, path);
    } catch (...) {
      // Nothing to tell, nobody to tell it to: the next load tries again.
    }
  }
  unlink(lock_path.c_str());
  _exit(0);
}

}  // namespace cmhost::engine::aot
