#include "socket_support.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <tuple>

namespace cmhost::wasi::detail {

using net::ErrorCode;

SocketFd::~SocketFd() { ::close(fd_); }

ErrorCode error_code(int os_error) {
  switch (os_error) {
    case EACCES:
    case EPERM: return ErrorCode::access_denied;
    case EADDRINUSE: return ErrorCode::address_in_use;
    case EADDRNOTAVAIL: return ErrorCode::address_not_bindable;
    case ECONNREFUSED: return ErrorCode::connection_refused;
    case ECONNRESET:
    case EPIPE: return ErrorCode::connection_reset;
    case ECONNABORTED: return ErrorCode::connection_aborted;
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENETDOWN:
    case ENONET: return ErrorCode::remote_unreachable;
    case ETIMEDOUT: return ErrorCode::timeout;
    case EMSGSIZE: return ErrorCode::datagram_too_large;
    case ENOMEM:
    case ENOBUFS: return ErrorCode::out_of_memory;
    case EMFILE:
    case ENFILE: return ErrorCode::new_socket_limit;
    case EAGAIN: return ErrorCode::would_block;
    case EAFNOSUPPORT:
    case EOPNOTSUPP:
    case EPROTONOSUPPORT: return ErrorCode::not_supported;
    case EINVAL: return ErrorCode::invalid_argument;
    case EISCONN:
    case ENOTCONN: return ErrorCode::invalid_state;
    case EALREADY: return ErrorCode::concurrency_conflict;
    default: return ErrorCode::unknown;
  }
}

ErrorCode connect_error(int os_error) {
  // No local port is left to connect from.
  return os_error == EADDRNOTAVAIL ? ErrorCode::address_in_use : error_code(os_error);
}

ErrorCode datagram_error(int os_error) {
  // An ICMP "port unreachable" for an earlier datagram.
  return os_error == ECONNRESET || os_error == ECONNREFUSED ? ErrorCode::remote_unreachable : error_code(os_error);
}

int address_family(net::IpAddressFamily family) { return family == net::IpAddressFamily::ipv4 ? AF_INET : AF_INET6; }

net::IpAddressFamily family_of(const net::IpSocketAddress& address) {
  return address.index() == 0 ? net::IpAddressFamily::ipv4 : net::IpAddressFamily::ipv6;
}

SockAddr to_sockaddr(const net::IpSocketAddress& address) {
  SockAddr out;
  if (const auto* v4 = std::get_if<net::ip_socket_address::Ipv4>(&address)) {
    auto* in = reinterpret_cast<sockaddr_in*>(&out.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(v4->value.port);
    const auto [a, b, c, d] = v4->value.address;
    const uint8_t bytes[4] = {a, b, c, d};
    std::memcpy(&in->sin_addr, bytes, 4);
    out.length = sizeof(sockaddr_in);
  } else {
    const auto& v6 = std::get<net::ip_socket_address::Ipv6>(address).value;
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(v6.port);
    in6->sin6_flowinfo = htonl(v6.flow_info);
    in6->sin6_scope_id = v6.scope_id;
    const auto segments = std::apply([](auto... s) { return std::array<uint16_t, 8>{s...}; }, v6.address);
    for (size_t i = 0; i < 8; ++i) {
      in6->sin6_addr.s6_addr[2 * i] = static_cast<uint8_t>(segments[i] >> 8);
      in6->sin6_addr.s6_addr[2 * i + 1] = static_cast<uint8_t>(segments[i]);
    }
    out.length = sizeof(sockaddr_in6);
  }
  return out;
}

net::IpSocketAddress from_sockaddr(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    uint8_t b[4];
    std::memcpy(b, &in->sin_addr, 4);
    return net::ip_socket_address::Ipv4{net::Ipv4SocketAddress{ntohs(in->sin_port), {b[0], b[1], b[2], b[3]}}};
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
  const uint8_t* a = in6->sin6_addr.s6_addr;
  const auto s = [a](int i) { return static_cast<uint16_t>(a[2 * i] << 8 | a[2 * i + 1]); };
  return net::ip_socket_address::Ipv6{net::Ipv6SocketAddress{
      ntohs(in6->sin6_port), ntohl(in6->sin6_flowinfo), {s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7)},
      in6->sin6_scope_id}};
}

net::IpAddress ip_of(const net::IpSocketAddress& address) {
  if (const auto* v4 = std::get_if<net::ip_socket_address::Ipv4>(&address))
    return net::ip_address::Ipv4{v4->value.address};
  return net::ip_address::Ipv6{std::get<net::ip_socket_address::Ipv6>(address).value.address};
}

namespace {

bool is_multicast(const SockAddr& a) {
  if (a.storage.ss_family == AF_INET)
    return IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in*>(&a.storage)->sin_addr.s_addr));
  return IN6_IS_ADDR_MULTICAST(&reinterpret_cast<const sockaddr_in6*>(&a.storage)->sin6_addr);
}

bool is_v4_mapped(const SockAddr& a) {
  return a.storage.ss_family == AF_INET6 &&
         IN6_IS_ADDR_V4MAPPED(&reinterpret_cast<const sockaddr_in6*>(&a.storage)->sin6_addr);
}

bool is_broadcast(const SockAddr& a) {
  return a.storage.ss_family == AF_INET &&
         ntohl(reinterpret_cast<const sockaddr_in*>(&a.storage)->sin_addr.s_addr) == INADDR_BROADCAST;
}

// An address of the socket's family, not IPv4-mapped (cmhost's IPv6
// sockets are IPv6-only).
std::optional<ErrorCode> check_family(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  if (family_of(address) != family || is_v4_mapped(to_sockaddr(address))) return ErrorCode::invalid_argument;
  return std::nullopt;
}

}  // namespace

std::optional<ErrorCode> check_local(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  if (auto bad = check_family(address, family)) return bad;
  const SockAddr a = to_sockaddr(address);
  if (is_multicast(a) || is_broadcast(a)) return ErrorCode::invalid_argument;
  return std::nullopt;
}

std::optional<ErrorCode> check_datagram_remote(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  if (auto bad = check_family(address, family)) return bad;
  const SockAddr a = to_sockaddr(address);
  if (a.storage.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a.storage);
    if (in->sin_addr.s_addr == htonl(INADDR_ANY) || in->sin_port == 0) return ErrorCode::invalid_argument;
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr) || in6->sin6_port == 0) return ErrorCode::invalid_argument;
  }
  return std::nullopt;
}

std::optional<ErrorCode> check_remote(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  if (auto bad = check_datagram_remote(address, family)) return bad;
  const SockAddr a = to_sockaddr(address);
  if (is_multicast(a) || is_broadcast(a)) return ErrorCode::invalid_argument;
  return std::nullopt;
}

NetResult<std::shared_ptr<SocketFd>> open_socket(net::IpAddressFamily family, int type) {
  using R = NetResult<std::shared_ptr<SocketFd>>;
  const int fd = ::socket(address_family(family), type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return R::err(error_code(errno));
  auto socket = std::make_shared<SocketFd>(fd);
  if (family == net::IpAddressFamily::ipv6) {
    const int on = 1;
    if (::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) return R::err(error_code(errno));
  }
  return R::ok(std::move(socket));
}

namespace {

NetResult<net::IpSocketAddress> address_of(int fd, int (*get)(int, sockaddr*, socklen_t*)) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (get(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return fail<net::IpSocketAddress>(error_code(errno));
  return NetResult<net::IpSocketAddress>::ok(from_sockaddr(address));
}

}  // namespace

NetResult<net::IpSocketAddress> local_address_of(int fd) { return address_of(fd, ::getsockname); }
NetResult<net::IpSocketAddress> remote_address_of(int fd) { return address_of(fd, ::getpeername); }

NetResult<uint64_t> get_option(int fd, int level, int name) {
  int value = 0;
  socklen_t length = sizeof value;
  if (::getsockopt(fd, level, name, &value, &length) != 0) return fail<uint64_t>(error_code(errno));
  return NetResult<uint64_t>::ok(static_cast<uint64_t>(std::max(value, 0)));
}

NetResult<void> set_option(int fd, int level, int name, uint64_t value, uint64_t max) {
  if (value == 0) return fail(ErrorCode::invalid_argument);
  const int v = static_cast<int>(std::min(value, max));
  if (::setsockopt(fd, level, name, &v, sizeof v) != 0) return fail(error_code(errno));
  return ok();
}

NetResult<uint64_t> get_buffer_size(int fd, int name) {
  auto size = get_option(fd, SOL_SOCKET, name);
  if (size.is_ok()) size = NetResult<uint64_t>::ok(size.value() / 2);  // Linux doubles what it is given
  return size;
}

NetResult<void> set_buffer_size(int fd, int name, uint64_t value) {
  return set_option(fd, SOL_SOCKET, name, value, INT_MAX / 2);
}

NetResult<uint8_t> get_hop_limit(int fd, net::IpAddressFamily family) {
  const auto hops = family == net::IpAddressFamily::ipv4 ? get_option(fd, IPPROTO_IP, IP_TTL)
                                                          : get_option(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS);
  if (hops.is_err()) return fail<uint8_t>(hops.error());
  return NetResult<uint8_t>::ok(static_cast<uint8_t>(std::min<uint64_t>(hops.value(), 255)));
}

NetResult<void> set_hop_limit(int fd, net::IpAddressFamily family, uint8_t value) {
  return family == net::IpAddressFamily::ipv4 ? set_option(fd, IPPROTO_IP, IP_TTL, value, 255)
                                              : set_option(fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, value, 255);
}

}  // namespace cmhost::wasi::detail
