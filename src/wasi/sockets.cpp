#include "sockets.hpp"

#include <memory>

#include "bindings.hpp"

namespace cmhost::wasi::detail {

namespace {

namespace sockets = ::wasi::sockets;
using abi::typed::Own;
using abi::typed::Result;
using sockets::network::ErrorCode;

// The network handle a guest passes to bind, connect and lookups; nothing
// behind it can be used while the network is denied.
class DeniedNetwork final : public sockets::network::Network {};

class DeniedSockets final : public sockets::network::Host,
                            public sockets::instance_network::Host,
                            public sockets::tcp::Host,
                            public sockets::tcp_create_socket::Host,
                            public sockets::udp::Host,
                            public sockets::udp_create_socket::Host,
                            public sockets::ip_name_lookup::Host {
 public:
  std::unique_ptr<sockets::network::Network> instance_network(Caller&) override {
    return std::make_unique<DeniedNetwork>();
  }
  Result<Own<sockets::tcp::TcpSocket>, ErrorCode> create_tcp_socket(Caller&, sockets::network::IpAddressFamily) override {
    return Result<Own<sockets::tcp::TcpSocket>, ErrorCode>::err(ErrorCode::access_denied);
  }
  Result<Own<sockets::udp::UdpSocket>, ErrorCode> create_udp_socket(Caller&, sockets::network::IpAddressFamily) override {
    return Result<Own<sockets::udp::UdpSocket>, ErrorCode>::err(ErrorCode::access_denied);
  }
  Result<Own<sockets::ip_name_lookup::ResolveAddressStream>, ErrorCode> resolve_addresses(
      Caller&, sockets::network::Network&, std::string) override {
    return Result<Own<sockets::ip_name_lookup::ResolveAddressStream>, ErrorCode>::err(ErrorCode::access_denied);
  }
};

}  // namespace

void add_denied_sockets(Linker& linker) {
  auto denied = std::make_shared<DeniedSockets>();
  sockets::network::add_to_linker(linker, denied);
  sockets::instance_network::add_to_linker(linker, denied);
  sockets::udp::add_to_linker(linker, denied);
  sockets::udp_create_socket::add_to_linker(linker, denied);
  sockets::tcp::add_to_linker(linker, denied);
  sockets::tcp_create_socket::add_to_linker(linker, denied);
  sockets::ip_name_lookup::add_to_linker(linker, denied);
}

}  // namespace cmhost::wasi::detail
