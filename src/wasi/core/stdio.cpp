// stdin, stdout and stderr, and reads, writes and waits on descriptors (stdio.hpp).
#include "stdio.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cmhost/error.hpp"

namespace cmhost::wasi::core {

StdioFd::~StdioFd() {
  if (owned_) ::close(fd_);
}

std::shared_ptr<StdioFd> StdioFd::open(int standard, const std::optional<std::string>& path, int flags) {
  if (!path) return std::make_shared<StdioFd>(standard);
  const int fd = ::open(path->c_str(), flags | O_CLOEXEC, 0666);
  if (fd < 0) throw Error(ErrorKind::Usage, "cannot open " + *path + ": " + std::strerror(errno));
  return std::make_shared<StdioFd>(fd, true);
}

StdioFds::StdioFds(const WasiConfig& config)
    : in(StdioFd::open(STDIN_FILENO, config.stdin_bytes ? std::nullopt : config.stdin_file, O_RDONLY)),
      out(StdioFd::open(STDOUT_FILENO, config.stdout_buffer ? std::nullopt : config.stdout_file,
                        O_WRONLY | O_CREAT | O_TRUNC)),
      err(StdioFd::open(STDERR_FILENO, config.stderr_buffer ? std::nullopt : config.stderr_file,
                        O_WRONLY | O_CREAT | O_TRUNC)) {}

int OutputTarget::write(const uint8_t* data, size_t n) const {
  if (buffer) {
    buffer->append(reinterpret_cast<const char*>(data), n);
    return 0;
  }
  return write_all(fd->get(), data, n);
}

ssize_t read_some(int fd, uint8_t* data, size_t n) {
  ssize_t got;
  do got = ::read(fd, data, n);
  while (got < 0 && errno == EINTR);
  return got;
}

int write_all(int fd, const uint8_t* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

bool wait_for(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int n;
  do n = ::poll(&p, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  return n != 0;
}

}  // namespace cmhost::wasi::core
