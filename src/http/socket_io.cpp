#include "socket_io.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace cmhost::http {

namespace {
bool would_block(int error) { return error == EAGAIN || error == EWOULDBLOCK; }
}  // namespace

SocketState send_pending(int fd, std::string& out) {
  while (!out.empty()) {
    const ssize_t sent = ::send(fd, out.data(), out.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      out.erase(0, static_cast<size_t>(sent));
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && would_block(errno)) return SocketState::would_block;
    return SocketState::closed;
  }
  return SocketState::open;
}

SocketState receive_available(int fd, std::string& in, size_t enough, bool& got) {
  got = false;
  char buffer[64 * 1024];
  while (in.size() < enough) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      in.append(buffer, static_cast<size_t>(n));
      got = true;
      // A short read took all there was: asking again would only say so
      // (the descriptor's readiness tells of more, or of the end).
      if (static_cast<size_t>(n) < sizeof buffer) return SocketState::would_block;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && would_block(errno)) return SocketState::would_block;
    return SocketState::closed;
  }
  return SocketState::open;
}

}  // namespace cmhost::http
