// Paths confined beneath a directory, for every WASI version's filesystem:
// each path a guest gives is resolved by the kernel beneath its directory
// descriptor (openat2 with RESOLVE_BENEATH: `..` past the directory,
// absolute paths and symlinks leading out fail with EXDEV, and a symlink
// swapped in between a check and the open cannot escape, since there is no
// separate check); operations on a final name (mkdir, unlink, rename, ...)
// resolve its parent that way and act on the name itself, never following
// it. Failures leave errno set, for each version to map to its error codes.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/wasi.hpp"

namespace cmhost::wasi::core {

// A file descriptor closed with its owner.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// A guest's string with a NUL byte names no file: the kernel would read it
// only up to the NUL, so it is refused (EINVAL, as wasmtime does).
bool has_nul(const std::string& text);

// openat2 beneath `dir`; symlinks are followed (within it) only when asked.
// Empty: ENOENT; a NUL: EINVAL; absolute: EPERM.
Fd open_beneath(int dir, const std::string& path, int flags, mode_t mode, bool follow);

// The directory holding the final component of `path`, opened beneath
// `dir`, and that component: what *at() calls act on without following it.
// A final `..` is EPERM: acting on a parent by name would reach past the
// directory resolved.
struct Parent {
  Fd dir;
  std::string name;
};
std::optional<Parent> parent_beneath(int dir, const std::string& path);

// The longest symlink target readlink-at reads, in bytes, buffer included:
// what one call may make the host allocate. Linux makes no targets of
// PATH_MAX (4 096) bytes or more; another file system's longer ones fail.
inline constexpr size_t kLinkTargetLimit = 64 * 1024;

// The whole target of the symlink `name` in the directory `dir`, read into
// a buffer of `first_size` bytes doubled until readlinkat leaves room to
// spare (it truncates silently), of at most `limit` bytes. None with errno
// set on failure: ENAMETOOLONG when the target fills `limit` bytes.
std::optional<std::string> read_link_target(int dir, const std::string& name, size_t first_size = 256,
                                            size_t limit = kLinkTargetLimit);

// The preopen's host directory, opened afresh (a guest's descriptors never
// share a position or flags with another call's); none with errno set.
Fd open_preopen(const Preopen& preopen);

// Checks that every preopen's host directory can be opened and has a guest
// path (at link time, so a wrong --dir is reported before the guest runs):
// Error (Usage) naming it.
void check_preopens(const std::vector<Preopen>& preopens);

}  // namespace cmhost::wasi::core
