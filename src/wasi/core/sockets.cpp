#include "sockets.hpp"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace cmhost::wasi::core {

SocketFd::~SocketFd() { ::close(fd_); }

namespace {

const sockaddr_in& v4(const SockAddr& a) { return *reinterpret_cast<const sockaddr_in*>(&a.storage); }
const sockaddr_in6& v6(const SockAddr& a) { return *reinterpret_cast<const sockaddr_in6*>(&a.storage); }

}  // namespace

SockAddr to_sockaddr(const Ipv4Parts& address) {
  SockAddr out;
  auto* in = reinterpret_cast<sockaddr_in*>(&out.storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(address.port);
  std::memcpy(&in->sin_addr, address.address.data(), 4);
  out.length = sizeof(sockaddr_in);
  return out;
}

SockAddr to_sockaddr(const Ipv6Parts& address) {
  SockAddr out;
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(address.port);
  in6->sin6_flowinfo = htonl(address.flow_info);
  in6->sin6_scope_id = address.scope_id;
  for (size_t i = 0; i < 8; ++i) {
    in6->sin6_addr.s6_addr[2 * i] = static_cast<uint8_t>(address.address[i] >> 8);
    in6->sin6_addr.s6_addr[2 * i + 1] = static_cast<uint8_t>(address.address[i]);
  }
  out.length = sizeof(sockaddr_in6);
  return out;
}

std::variant<Ipv4Parts, Ipv6Parts> parts_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    Ipv4Parts out;
    out.port = ntohs(in->sin_port);
    std::memcpy(out.address.data(), &in->sin_addr, 4);
    return out;
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
  const uint8_t* a = in6->sin6_addr.s6_addr;
  Ipv6Parts out;
  out.port = ntohs(in6->sin6_port);
  out.flow_info = ntohl(in6->sin6_flowinfo);
  for (size_t i = 0; i < 8; ++i) out.address[i] = static_cast<uint16_t>(a[2 * i] << 8 | a[2 * i + 1]);
  out.scope_id = in6->sin6_scope_id;
  return out;
}

SockAddr any_address(int family) {
  if (family == AF_INET) return to_sockaddr(Ipv4Parts{});
  return to_sockaddr(Ipv6Parts{});
}

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

int bind_address(int fd, const SockAddr& address, bool reuse_address) {
  if (reuse_address) {
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // best effort: the bind says what matters
  }
  return ::bind(fd, address.get(), address.length) != 0 ? errno : 0;
}

int start_connect(int fd, const SockAddr& address) {
  int result;
  do result = ::connect(fd, address.get(), address.length);
  while (result != 0 && errno == EINTR);
  return result != 0 ? errno : 0;
}

int connect_outcome(int fd) {
  int error = 0;
  socklen_t length = sizeof error;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return errno;
  return error;
}

int connect_datagram(int fd, const SockAddr& address) {
  const int error = start_connect(fd, address);
  if (error != EINVAL) return error;
  if (const int undone = disconnect(fd)) return undone;
  return start_connect(fd, address);
}

int disconnect(int fd) {
  sockaddr unspecified{};
  unspecified.sa_family = AF_UNSPEC;
  return ::connect(fd, &unspecified, sizeof unspecified) != 0 ? errno : 0;
}

int listen_with(int fd, uint64_t backlog) {
  return ::listen(fd, static_cast<int>(std::min<uint64_t>(backlog, INT_MAX))) != 0 ? errno : 0;
}

SysResult<std::shared_ptr<SocketFd>> accept_connection(int fd) {
  int client;
  do client = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  while (client < 0 && errno == EINTR);
  if (client < 0) return {.error = errno};
  return {.value = std::make_shared<SocketFd>(client)};
}

ssize_t send_some(int fd, const uint8_t* data, size_t n) {
  ssize_t sent;
  do sent = ::send(fd, data, n, MSG_DONTWAIT | MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  return sent;
}

ssize_t receive_some(int fd, uint8_t* data, size_t n) {
  ssize_t got;
  do got = ::recv(fd, data, n, MSG_DONTWAIT);
  while (got < 0 && errno == EINTR);
  return got;
}

ssize_t send_datagram(int fd, const uint8_t* data, size_t n, const SockAddr* to) {
  ssize_t sent;
  do sent = ::sendto(fd, data, n, MSG_DONTWAIT | MSG_NOSIGNAL, to ? to->get() : nullptr, to ? to->length : 0);
  while (sent < 0 && errno == EINTR);
  return sent;
}

ssize_t receive_datagram(int fd, uint8_t* data, size_t n, SockAddr* from) {
  SockAddr sender;
  sender.length = sizeof sender.storage;
  ssize_t got;
  do got = ::recvfrom(fd, data, n, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&sender.storage), &sender.length);
  while (got < 0 && errno == EINTR);
  if (got >= 0 && from) *from = sender;
  return got;
}

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

int set_flag(int fd, int level, int name, bool on) {
  const int v = on ? 1 : 0;
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

SysResult<uint64_t> get_keep_alive_time(int fd, int name) {
  auto seconds = get_option(fd, IPPROTO_TCP, name);
  if (seconds.ok()) seconds.value *= 1'000'000'000;
  return seconds;
}

int set_keep_alive_time(int fd, int name, uint64_t nanoseconds) {
  if (nanoseconds == 0) return EINVAL;
  const uint64_t seconds = nanoseconds / 1'000'000'000 + (nanoseconds % 1'000'000'000 != 0);  // rounded up
  return set_option(fd, IPPROTO_TCP, name, seconds, 32767);
}

bool is_multicast(const SockAddr& a) {
  if (a.family() == AF_INET) return IN_MULTICAST(ntohl(v4(a).sin_addr.s_addr));
  return IN6_IS_ADDR_MULTICAST(&v6(a).sin6_addr);
}

bool is_broadcast(const SockAddr& a) {
  return a.family() == AF_INET && ntohl(v4(a).sin_addr.s_addr) == INADDR_BROADCAST;
}

bool is_unicast(const SockAddr& a) { return !is_multicast(a) && !is_broadcast(a); }

bool is_v4_mapped(const SockAddr& a) { return a.family() == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&v6(a).sin6_addr); }

bool is_v4_compatible(const SockAddr& a) {
  if (a.family() != AF_INET6) return false;
  const uint8_t* bytes = v6(a).sin6_addr.s6_addr;
  for (int i = 0; i < 12; ++i)
    if (bytes[i] != 0) return false;
  uint32_t last;
  std::memcpy(&last, bytes + 12, 4);
  return ntohl(last) > 1;  // :: and ::1 are addresses of their own
}

bool is_unspecified(const SockAddr& a) {
  if (a.family() == AF_INET) return v4(a).sin_addr.s_addr == htonl(INADDR_ANY);
  return IN6_IS_ADDR_UNSPECIFIED(&v6(a).sin6_addr);
}

uint16_t port_of(const SockAddr& a) { return ntohs(a.family() == AF_INET ? v4(a).sin_port : v6(a).sin6_port); }

bool is_of_family(const SockAddr& a, int family) { return a.family() == family && !is_v4_mapped(a); }

}  // namespace cmhost::wasi::core
