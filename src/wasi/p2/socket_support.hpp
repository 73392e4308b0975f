// What wasi:sockets' TCP, UDP and name lookup share (src/wasi/p2/tcp.cpp,
// udp.cpp, sockets.cpp), in WASI 0.2's types over the POSIX level in
// src/wasi/core/sockets.hpp: addresses between WASI and POSIX, the checks
// every bind, connect and send makes, errno mapped to wasi:sockets/network's
// error codes, and the core's calls with those codes.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <optional>

#include "common.hpp"
#include "wasi/core/binding_shapes.hpp"
#include "wasi/core/sockets.hpp"

namespace cmhost::wasi::detail {

namespace net = ::cmhost::wasi::bindings::wasi::sockets::network;

using core::SockAddr;
using core::SocketFd;

// The host resource types the socket implementations make handles of.
struct SocketHandles {
  std::shared_ptr<const Handles> io;
  std::optional<::cmhost::wasi::bindings::wasi::sockets::tcp::Resources> tcp;
  std::optional<::cmhost::wasi::bindings::wasi::sockets::udp::Resources> udp;
  std::optional<::cmhost::wasi::bindings::wasi::sockets::ip_name_lookup::Resources> lookup;
};

template <typename T>
using NetResult = abi::typed::Result<T, net::ErrorCode>;

inline NetResult<void> ok() { return NetResult<void>::ok(); }
template <typename T = void>
NetResult<T> fail(net::ErrorCode code) {
  return NetResult<T>::err(code);
}

net::ErrorCode error_code(int os_error);
// The same for a connect, and for a datagram's send or receive.
net::ErrorCode connect_error(int os_error);
net::ErrorCode datagram_error(int os_error);

int address_family(net::IpAddressFamily family);
using core::to_sockaddr;
inline net::IpSocketAddress from_sockaddr(const sockaddr_storage& address) {
  return core::from_sockaddr<net::IpSocketAddress>(address);
}
net::IpAddress ip_of(const net::IpSocketAddress& address);

// What a local address to bind must be for a socket of `family`:
// invalid-argument when it is of the other family, multicast, broadcast, or
// an IPv4-mapped IPv6 address (cmhost's IPv6 sockets are IPv6-only).
std::optional<net::ErrorCode> check_local(const net::IpSocketAddress& address, net::IpAddressFamily family);
// A datagram's remote address: of the family, not IPv4-mapped, specified
// (not 0.0.0.0 or ::) and with a port.
std::optional<net::ErrorCode> check_datagram_remote(const net::IpSocketAddress& address, net::IpAddressFamily family);
// A TCP peer's must also be unicast.
std::optional<net::ErrorCode> check_remote(const net::IpSocketAddress& address, net::IpAddressFamily family);

// The calls of src/wasi/core/sockets.hpp of the same names, their errno
// mapped by error_code (a zero option is invalid-argument).
NetResult<std::shared_ptr<SocketFd>> open_socket(net::IpAddressFamily family, int type);
NetResult<net::IpSocketAddress> local_address_of(int fd);
NetResult<net::IpSocketAddress> remote_address_of(int fd);
NetResult<uint64_t> get_option(int fd, int level, int name);
NetResult<void> set_option(int fd, int level, int name, uint64_t value, uint64_t max);
NetResult<uint64_t> get_buffer_size(int fd, int name);
NetResult<void> set_buffer_size(int fd, int name, uint64_t value);
NetResult<uint8_t> get_hop_limit(int fd, net::IpAddressFamily family);
NetResult<void> set_hop_limit(int fd, net::IpAddressFamily family, uint8_t value);
NetResult<uint64_t> get_keep_alive_time(int fd, int name);
NetResult<void> set_keep_alive_time(int fd, int name, uint64_t nanoseconds);

// A new socket of `Interface` (tcp-socket or udp-socket), an `Impl` made of
// the handles, a fresh socket of `type` and its family.
template <typename Interface, typename Impl>
NetResult<std::unique_ptr<Interface>> new_socket(std::shared_ptr<const SocketHandles> handles,
                                                 net::IpAddressFamily family, int type) {
  using R = NetResult<std::unique_ptr<Interface>>;
  auto fd = open_socket(family, type);
  if (fd.is_err()) return R::err(fd.error());
  return R::ok(std::make_unique<Impl>(std::move(handles), std::move(fd.value()), family));
}

}  // namespace cmhost::wasi::detail
