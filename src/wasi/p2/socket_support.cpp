#include "socket_support.hpp"

#include <array>
#include <tuple>
#include <variant>

namespace cmhost::wasi::detail {

using net::ErrorCode;

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

net::IpAddress ip_of(const net::IpSocketAddress& address) {
  if (const auto* v4 = std::get_if<net::ip_socket_address::Ipv4>(&address))
    return net::ip_address::Ipv4{v4->value.address};
  return net::ip_address::Ipv6{std::get<net::ip_socket_address::Ipv6>(address).value.address};
}

namespace {

bool of_family(const SockAddr& a, net::IpAddressFamily family) { return core::is_of_family(a, address_family(family)); }

// A core call's outcome, its errno mapped by error_code.
template <typename T>
NetResult<T> net_result(core::SysResult<T> result) {
  if (!result.ok()) return fail<T>(error_code(result.error));
  return NetResult<T>::ok(std::move(result.value));
}

NetResult<void> net_result(int os_error) { return os_error ? fail(error_code(os_error)) : ok(); }

NetResult<net::IpSocketAddress> net_address(core::SysResult<SockAddr> address) {
  if (!address.ok()) return fail<net::IpSocketAddress>(error_code(address.error));
  return NetResult<net::IpSocketAddress>::ok(from_sockaddr(address.value.storage));
}

}  // namespace

std::optional<ErrorCode> check_local(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  const SockAddr a = to_sockaddr(address);
  if (!of_family(a, family) || !core::is_unicast(a)) return ErrorCode::invalid_argument;
  return std::nullopt;
}

std::optional<ErrorCode> check_datagram_remote(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  const SockAddr a = to_sockaddr(address);
  if (!of_family(a, family) || core::is_unspecified(a) || core::port_of(a) == 0) return ErrorCode::invalid_argument;
  return std::nullopt;
}

std::optional<ErrorCode> check_remote(const net::IpSocketAddress& address, net::IpAddressFamily family) {
  if (auto bad = check_datagram_remote(address, family)) return bad;
  if (!core::is_unicast(to_sockaddr(address))) return ErrorCode::invalid_argument;
  return std::nullopt;
}

NetResult<std::shared_ptr<SocketFd>> open_socket(net::IpAddressFamily family, int type) {
  return net_result(core::open_socket(address_family(family), type));
}

NetResult<net::IpSocketAddress> local_address_of(int fd) { return net_address(core::local_address_of(fd)); }
NetResult<net::IpSocketAddress> remote_address_of(int fd) { return net_address(core::remote_address_of(fd)); }

NetResult<uint64_t> get_option(int fd, int level, int name) { return net_result(core::get_option(fd, level, name)); }
NetResult<void> set_option(int fd, int level, int name, uint64_t value, uint64_t max) {
  return net_result(core::set_option(fd, level, name, value, max));
}
NetResult<uint64_t> get_buffer_size(int fd, int name) { return net_result(core::get_buffer_size(fd, name)); }
NetResult<void> set_buffer_size(int fd, int name, uint64_t value) {
  return net_result(core::set_buffer_size(fd, name, value));
}
NetResult<uint8_t> get_hop_limit(int fd, net::IpAddressFamily family) {
  return net_result(core::get_hop_limit(fd, address_family(family)));
}
NetResult<void> set_hop_limit(int fd, net::IpAddressFamily family, uint8_t value) {
  return net_result(core::set_hop_limit(fd, address_family(family), value));
}
NetResult<uint64_t> get_keep_alive_time(int fd, int name) { return net_result(core::get_keep_alive_time(fd, name)); }
NetResult<void> set_keep_alive_time(int fd, int name, uint64_t nanoseconds) {
  return net_result(core::set_keep_alive_time(fd, name, nanoseconds));
}

}  // namespace cmhost::wasi::detail
