#include "sockets.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

namespace cmhost::wasi::core {

SocketFd::~SocketFd() { ::close(fd_); }

SysResult<std::shared_ptr<SocketFd>> open_socket(int family, int type) {
  const int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return {.error = errno};
  auto socket = std::make_shared<SocketFd>(fd);
  if (family == AF_INET6) {
    const int on = 1;
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) return {.error = errno};
  }
  return {.value = std::move(socket)};
}

namespace {

SysResult<SockAddr> address_of(int fd, int (*get)(int, sockaddr*, socklen_t*)) {
  SockAddr address;
  address.length = sizeof address.storage;
  if (get(fd, reinterpret_cast<sockaddr*>(&address.storage), &address.length) != 0) return {.error = errno};
  return {.value = address};
}

}  // namespace

SysResult<SockAddr> local_address_of(int fd) { return address_of(fd, ::getsockname); }
SysResult<SockAddr> remote_address_of(int fd) { return address_of(fd, ::getpeername); }

SysResult<uint64_t> get_option(int fd, int level, int name) {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, level, name, &value, &length) != 0) return {.error = errno};
  return {.value = static_cast<uint64_t>(std::max(value, 0))};
}

int set_option(int fd, int level, int name, uint64_t value, uint64_t max) {
  if (value == 0) return EINVAL;
  const int v = static_cast<int>(std::min(value, max));
  return ::setsockopt(fd, level, name, &v, sizeof v) != 0 ? errno : 0;
}

SysResult<uint64_t> get_buffer_size(int fd, int name) {
  auto size = get_option(fd, SOL_SOCKET, name);
  if (size.ok()) size.value /= 2;  // Linux doubles what it is given
  return size;
}

int set_buffer_size(int fd, int name, uint64_t value) { return set_option(fd, SOL_SOCKET, name, value, INT_MAX / 2); }

SysResult<uint8_t> get_hop_limit(int fd, int family) {
  const auto hops = family == AF_INET ? get_option(fd, IPPROTO_IP, IP_TTL)
                                      : get_option(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS);
  if (!hops.ok()) return {.error = hops.error};
  return {.value = static_cast<uint8_t>(std::min<uint64_t>(hops.value, 255))};
}

int set_hop_limit(int fd, int family, uint8_t value) {
  return family == AF_INET ? set_option(fd, IPPROTO_IP, IP_TTL, value, 255)
                           : set_option(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, value, 255);
}

namespace {

const sockaddr_in& v4(const SockAddr& a) { return *reinterpret_cast<const sockaddr_in*>(&a.storage); }
const sockaddr_in6& v6(const SockAddr& a) { return *reinterpret_cast<const sockaddr_in6*>(&a.storage); }

}  // namespace

bool is_multicast(const SockAddr& a) {
  if (a.family() == AF_INET) return IN_MULTICAST(ntohl(v4(a).sin_addr.s_addr));
  return IN6_IS_ADDR_MULTICAST(&v6(a).sin6_addr);
}

bool is_broadcast(const SockAddr& a) {
  return a.family() == AF_INET && ntohl(v4(a).sin_addr.s_addr) == INADDR_BROADCAST;
}

bool is_v4_mapped(const SockAddr& a) { return a.family() == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&v6(a).sin6_addr); }

bool is_unspecified(const SockAddr& a) {
  if (a.family() == AF_INET) return v4(a).sin_addr.s_addr == htonl(INADDR_ANY);
  return IN6_IS_ADDR_UNSPECIFIED(&v6(a).sin6_addr);
}

uint16_t port_of(const SockAddr& a) { return ntohs(a.family() == AF_INET ? v4(a).sin_port : v6(a).sin6_port); }

}  // namespace cmhost::wasi::core
