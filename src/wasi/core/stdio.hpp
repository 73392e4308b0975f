// stdin, stdout and stderr as every WASI version gives them to a guest: the
// process's own descriptors or files (WasiConfig), and the reads, writes
// and waits on descriptors that stdio and sockets share. Failures are
// errnos, for each version to map.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cmhost/wasi.hpp"

namespace cmhost::wasi::core {

// A file descriptor of stdin, stdout or stderr: the process's own, or a
// file opened for the guest, closed when the last stream using it goes.
class StdioFd {
 public:
  explicit StdioFd(int fd, bool owned = false) : fd_(fd), owned_(owned) {}
  ~StdioFd();
  StdioFd(const StdioFd&) = delete;
  StdioFd& operator=(const StdioFd&) = delete;
  int get() const { return fd_; }
  bool owned() const { return owned_; }

  // `standard` (STDIN_FILENO...) when `path` is unset, else the file opened
  // with `flags`: Error (Usage) naming it when it cannot be.
  static std::shared_ptr<StdioFd> open(int standard, const std::optional<std::string>& path, int flags);

 private:
  int fd_;
  bool owned_;
};

// The three of a configuration: a file each where one is configured and no
// bytes or buffer stand in for it.
struct StdioFds {
  explicit StdioFds(const WasiConfig& config);
  std::shared_ptr<StdioFd> in, out, err;
};

// Where stdout or stderr goes: a buffer (WasiConfig::stdout_buffer, ...)
// when one is given, else the descriptor. Both WASI versions write here, so
// their output reaches one place in the order it was written.
struct OutputTarget {
  std::shared_ptr<StdioFd> fd;
  std::shared_ptr<std::string> buffer;
  // 0, or the errno that stopped the write.
  int write(const uint8_t* data, size_t n) const;
};

// Up to `n` bytes read (EINTR retried): the count, 0 at the end, -1 with errno.
ssize_t read_some(int fd, uint8_t* data, size_t n);
// All `n` bytes written (EINTR retried): 0, or the errno that stopped it.
int write_all(int fd, const uint8_t* data, size_t n);
// Waits up to `timeout_ms` (-1: without end) for `events` on `fd`; whether
// they came. An error counts as ready: the next operation reports it.
bool wait_for(int fd, short events, int timeout_ms);

}  // namespace cmhost::wasi::core
