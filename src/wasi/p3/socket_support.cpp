#include "socket_support.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>
#include <variant>

namespace cmhost::wasi::p3 {

net::ErrorCode error_code(int os_error) {
  namespace code = net::error_code;
  switch (os_error) {
    case EACCES:
    case EPERM: return code::AccessDenied{};
    case EADDRINUSE: return code::AddressInUse{};
    case EADDRNOTAVAIL: return code::AddressNotBindable{};
    case ETIMEDOUT: return code::Timeout{};
    case ECONNREFUSED: return code::ConnectionRefused{};
    case ECONNRESET: return code::ConnectionReset{};
    case ECONNABORTED: return code::ConnectionAborted{};
    case EINVAL: return code::InvalidArgument{};
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
    case ENETUNREACH:
    case ENONET: return code::RemoteUnreachable{};
    case EISCONN:
    case ENOTCONN:
    case EDESTADDRREQ: return code::InvalidState{};
    case EMSGSIZE: return code::DatagramTooLarge{};
    case ENOMEM:
    case ENOBUFS: return code::OutOfMemory{};
    case EOPNOTSUPP:
    case ENOPROTOOPT:
    case EPFNOSUPPORT:
    case EPROTONOSUPPORT:
    case EPROTOTYPE:
    case ESOCKTNOSUPPORT:
    case EAFNOSUPPORT: return code::NotSupported{};
    default: return code::Other{std::optional<std::string>(std::strerror(os_error))};
  }
}

net::ErrorCode bind_error(int os_error) {
  return os_error == EAFNOSUPPORT ? invalid_argument() : error_code(os_error);
}

int address_family(net::IpAddressFamily family) { return family == net::IpAddressFamily::ipv4 ? AF_INET : AF_INET6; }

NetResult<net::IpSocketAddress> address_result(core::SysResult<SockAddr> address) {
  if (!address.ok()) return fail<net::IpSocketAddress>(error_code(address.error));
  return NetResult<net::IpSocketAddress>::ok(from_sockaddr(address.value.storage));
}

bool fits_family(const SockAddr& address, net::IpAddressFamily family) {
  return core::is_of_family(address, address_family(family)) && !core::is_v4_compatible(address);
}

bool is_valid_peer(const SockAddr& address, net::IpAddressFamily family) {
  return fits_family(address, family) && !core::is_unspecified(address) && core::port_of(address) != 0;
}

abi::typed::Future<NetStatus> resolved_future(Store& store, NetStatus value) {
  auto future = std::make_shared<FutureWriter<NetStatus>>(store);
  const abi::typed::Future<NetStatus> readable = future->readable_handle();
  // The writer lives until the guest takes the value (or drops the future).
  future->start_write(store, std::move(value), [future](CopyOutcome) {});
  return readable;
}

}  // namespace cmhost::wasi::p3
