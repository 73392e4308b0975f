// Paths confined beneath a directory with openat2 (confine.hpp).
#include "confine.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cmhost/error.hpp"

namespace cmhost::wasi::core {

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

bool has_nul(const std::string& text) { return text.find('\0') != std::string::npos; }

Fd open_beneath(int dir, const std::string& path, int flags, mode_t mode, bool follow) {
  if (path.empty()) {
    errno = ENOENT;
    return Fd();
  }
  if (has_nul(path)) {
    errno = EINVAL;
    return Fd();
  }
  if (path.front() == '/') {  // absolute: not beneath anything
    errno = EPERM;
    return Fd();
  }
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  how.mode = (flags & O_CREAT) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  for (;;) {
    const long fd = ::syscall(SYS_openat2, dir, path.c_str(), &how, sizeof how);
    if (fd >= 0) return Fd(static_cast<int>(fd));
    if (errno != EINTR && errno != EAGAIN) return Fd();
  }
}

std::optional<Parent> parent_beneath(int dir, const std::string& path) {
  if (has_nul(path)) {
    errno = EINVAL;
    return std::nullopt;
  }
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  std::string parent = slash == std::string::npos ? "." : p.substr(0, slash);
  if (parent.empty()) parent = "/";  // "/x": absolute, refused by open_beneath
  std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  if (name == "..") {  // acting on a parent by name would reach past the resolved directory
    errno = EPERM;
    return std::nullopt;
  }
  Fd parent_fd = open_beneath(dir, parent, O_PATH | O_DIRECTORY, 0, /*follow=*/true);
  if (!parent_fd) return std::nullopt;
  return Parent{std::move(parent_fd), name.empty() ? "." : name};
}

std::optional<std::string> read_link_target(int dir, const std::string& name, size_t first_size, size_t limit) {
  std::string target(std::clamp<size_t>(first_size, 1, limit), '\0');
  for (;;) {
    const ssize_t n = ::readlinkat(dir, name.c_str(), target.data(), target.size());
    if (n < 0) return std::nullopt;
    if (static_cast<size_t>(n) < target.size()) {  // room to spare: nothing was cut off
      target.resize(static_cast<size_t>(n));
      return target;
    }
    if (target.size() >= limit) {
      errno = ENAMETOOLONG;
      return std::nullopt;
    }
    target.assign(std::min(target.size() * 2, limit), '\0');
  }
}

Fd open_preopen(const Preopen& preopen) {
  return Fd(::open(preopen.host_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

void check_preopens(const std::vector<Preopen>& preopens) {
  for (const Preopen& p : preopens) {
    if (!open_preopen(p))
      throw Error(ErrorKind::Usage, "cannot open the directory " + p.host_path + ": " + std::strerror(errno));
    if (p.guest_path.empty()) throw Error(ErrorKind::Usage, "the guest path of " + p.host_path + " is empty");
  }
}

}  // namespace cmhost::wasi::core
