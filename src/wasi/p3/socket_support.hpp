// What wasi:sockets@0.3.0's TCP, UDP and name lookup share
// (src/wasi/p3/sockets.cpp, tcp.cpp, udp.cpp, ip_name_lookup.cpp), in the
// generated bindings' types over the POSIX level in
// src/wasi/core/sockets.hpp: errno mapped to error-code, addresses between
// WASI and POSIX, the address checks, and the core's results as the
// bindings' results.
#pragma once

#include <cerrno>
#include <netinet/in.h>
#include <sys/socket.h>

#include <memory>
#include <optional>

#include "cmhost/cmhost.hpp"
#include "cmhost/streams.hpp"
#include "cmhost/wasi.hpp"
#include "wasi/core/binding_shapes.hpp"
#include "wasi/core/sockets.hpp"
#include "wasi/p3/bindings.hpp"

namespace cmhost::wasi::p3 {

namespace net = bindings::p3::wasi::sockets::types;

using core::SockAddr;
using core::SocketFd;

template <typename T>
using NetResult = abi::typed::Result<T, net::ErrorCode>;
using NetStatus = NetResult<void>;

// What every socket of one linker needs: whether the network is allowed,
// and the resource types add_to_linker defined (set once they are, before
// any socket exists), which accepted connections become handles of.
struct SocketContext {
  bool allow_network = false;
  std::optional<net::Resources> resources;
};

// errno as wasi:sockets' error-code; anything without a case of its own is
// other, with the system's message.
net::ErrorCode error_code(int os_error);
// The same for a bind, where an address of another family (EAFNOSUPPORT)
// is invalid-argument.
net::ErrorCode bind_error(int os_error);
inline net::ErrorCode invalid_argument() { return net::error_code::InvalidArgument{}; }
inline net::ErrorCode invalid_state() { return net::error_code::InvalidState{}; }

inline NetStatus ok() { return NetStatus::ok(); }
template <typename T = void>
NetResult<T> fail(net::ErrorCode code) {
  return NetResult<T>::err(std::move(code));
}
// A core call's outcome, its errno mapped by error_code.
template <typename T>
NetResult<T> from_sys(core::SysResult<T> result) {
  if (!result.ok()) return fail<T>(error_code(result.error));
  return NetResult<T>::ok(std::move(result.value));
}
inline NetStatus from_errno(int os_error) { return os_error ? fail(error_code(os_error)) : ok(); }

// A non-blocking socket call that would have waited: wait for its descriptor.
inline bool would_block(int os_error) { return os_error == EAGAIN || os_error == EWOULDBLOCK; }

int address_family(net::IpAddressFamily family);  // AF_INET or AF_INET6
using core::to_sockaddr;
inline net::IpSocketAddress from_sockaddr(const sockaddr_storage& address) {
  return core::from_sockaddr<net::IpSocketAddress>(address);
}
NetResult<net::IpSocketAddress> address_result(core::SysResult<SockAddr> address);

// Whether a socket of `family` may use `address` at all: of its family,
// and for IPv6 neither IPv4-mapped (cmhost's IPv6 sockets are IPv6-only)
// nor IPv4-compatible (deprecated).
bool fits_family(const SockAddr& address, net::IpAddressFamily family);
// Whether `address` can be a peer: of the socket's family, specified (not
// 0.0.0.0 or ::) and with a port.
bool is_valid_peer(const SockAddr& address, net::IpAddressFamily family);

// A future<result<_, error-code>> already resolved with `value`.
abi::typed::Future<NetStatus> resolved_future(Store& store, NetStatus value);

// The sockets themselves (tcp.cpp, udp.cpp), over a fresh socket's
// descriptor.
std::unique_ptr<net::TcpSocket> new_tcp_socket(std::shared_ptr<const SocketContext> context,
                                               std::shared_ptr<SocketFd> fd, net::IpAddressFamily family);
std::unique_ptr<net::UdpSocket> new_udp_socket(std::shared_ptr<SocketFd> fd, net::IpAddressFamily family);

// wasi:sockets/ip-name-lookup@0.3.0 (ip_name_lookup.cpp).
void add_ip_name_lookup(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
