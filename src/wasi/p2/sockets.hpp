// wasi:sockets (src/wasi/p2/sockets.cpp, tcp.cpp, udp.cpp). With the network
// denied (the default) the guest gets its network handle, and every socket
// or name lookup it asks for is refused with access-denied, as WASI hosts
// do when no network is granted; with it allowed, TCP, UDP and name lookup
// work over the host's sockets and resolver.
#pragma once

#include <memory>

#include "socket_support.hpp"

namespace cmhost::wasi::detail {

void add_sockets(Linker& linker, std::shared_ptr<const Handles> handles, bool allow_network);

NetResult<std::unique_ptr<::cmhost::wasi::bindings::wasi::sockets::tcp::TcpSocket>> new_tcp_socket(
    std::shared_ptr<const SocketHandles> handles, net::IpAddressFamily family);
NetResult<std::unique_ptr<::cmhost::wasi::bindings::wasi::sockets::udp::UdpSocket>> new_udp_socket(
    std::shared_ptr<const SocketHandles> handles, net::IpAddressFamily family);

}  // namespace cmhost::wasi::detail
