// wasi:sockets@0.3.0 on the generated bindings: socket creation here, the
// sockets in tcp.cpp and udp.cpp, name lookup in ip_name_lookup.cpp. With
// the network denied every socket and lookup is access-denied, as in WASI
// 0.2; the resources are defined either way, so components link.
#include "sockets.hpp"

#include <memory>
#include <utility>

#include "socket_support.hpp"

namespace cmhost::wasi::p3 {

namespace {

using abi::typed::Own;

class SocketCreation final : public net::Host {
 public:
  explicit SocketCreation(std::shared_ptr<const SocketContext> context) : context_(std::move(context)) {}

  NetResult<Own<net::TcpSocket>> tcp_socket_create(Caller& caller, net::IpAddressFamily family) override {
    using R = NetResult<Own<net::TcpSocket>>;
    auto fd = open(family, SOCK_STREAM);
    if (fd.is_err()) return R::err(fd.error());
    return R::ok(context_->resources->tcp_socket.make_own(caller.store(),
                                                          new_tcp_socket(context_, std::move(fd.value()), family)));
  }

  NetResult<Own<net::UdpSocket>> udp_socket_create(Caller& caller, net::IpAddressFamily family) override {
    using R = NetResult<Own<net::UdpSocket>>;
    auto fd = open(family, SOCK_DGRAM);
    if (fd.is_err()) return R::err(fd.error());
    return R::ok(
        context_->resources->udp_socket.make_own(caller.store(), new_udp_socket(std::move(fd.value()), family)));
  }

 private:
  NetResult<std::shared_ptr<SocketFd>> open(net::IpAddressFamily family, int type) const {
    if (!context_->allow_network) return fail<std::shared_ptr<SocketFd>>(net::error_code::AccessDenied{});
    return from_sys(core::open_socket(address_family(family), type));
  }

  std::shared_ptr<const SocketContext> context_;
};

}  // namespace

void add_sockets(Linker& linker, const WasiConfig& config) {
  auto context = std::make_shared<SocketContext>();
  context->allow_network = config.allow_network;
  // Set before any socket can be made: the resources are what creation
  // and listen make handles of.
  context->resources = net::add_to_linker(linker, std::make_shared<SocketCreation>(context));
  add_ip_name_lookup(linker, config);
}

}  // namespace cmhost::wasi::p3
