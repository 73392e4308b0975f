// wasi:sockets/types@0.3.0 udp-socket over the host's UDP sockets: bind,
// connect and disconnect, datagrams sent and received by async calls that
// wait for the descriptor in the store's reactor when the kernel would
// block (no thread), and the socket's options.
#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "socket_support.hpp"

namespace cmhost::wasi::p3 {

namespace {

constexpr size_t kMaxDatagram = 65535;

enum class UdpState { unbound, bound, connected };

// A socket's state, shared with its sends and receives under way (the
// guest may drop the socket before they end).
struct UdpShared {
  std::shared_ptr<SocketFd> fd;
  net::IpAddressFamily family = net::IpAddressFamily::ipv4;
  UdpState state = UdpState::unbound;
  std::optional<net::IpSocketAddress> peer;  // connected: the address as the guest gave it
};

using Received = std::tuple<std::vector<uint8_t>, net::IpSocketAddress>;
using ReceiveResult = NetResult<Received>;

// A datagram call on a socket: it tries at once, and when the socket
// would block it waits for `Events` in the store's reactor and tries again.
// A call the guest cancels while it waits lets go of its wait and ends
// cancelled. Derived's attempt() completes the call or returns would-block.
template <class Derived, class R, short Events>
class DatagramCall : public std::enable_shared_from_this<Derived> {
 public:
  DatagramCall(Store& store, std::shared_ptr<UdpShared> socket, TypedCompletion<R> completion)
      : socket_(std::move(socket)), completion_(std::move(completion)), store_(store) {}

  void start() {
    try_now();
    if (wait_ == 0) return;
    completion_.on_cancel([weak = this->weak_from_this()] {
      if (auto self = weak.lock(); self && self->wait_ != 0 && self->store_.cancel_wait(self->wait_))
        self->completion_.cancel();
    });
  }

 protected:
  std::shared_ptr<UdpShared> socket_;
  TypedCompletion<R> completion_;

 private:
  void try_now() {
    wait_ = 0;
    if (!static_cast<Derived*>(this)->attempt()) return;
    wait_ = store_.when_ready(socket_->fd->get(), Events,
                              [self = this->shared_from_this()](short) { self->try_now(); });
  }

  Store& store_;
  Store::WaitId wait_ = 0;  // the reactor's wait for the socket, while there is one
};

// One datagram on its way: sent at once when the socket takes it, else
// once it is writable.
class DatagramSend : public DatagramCall<DatagramSend, NetStatus, POLLOUT> {
 public:
  DatagramSend(Store& store, std::shared_ptr<UdpShared> socket, std::vector<uint8_t> data, std::optional<SockAddr> to,
               TypedCompletion<NetStatus> completion)
      : DatagramCall(store, std::move(socket), std::move(completion)), data_(std::move(data)), to_(to) {}

  // Whether the send would block.
  bool attempt() {
    const ssize_t sent = core::send_datagram(socket_->fd->get(), data_.data(), data_.size(), to_ ? &*to_ : nullptr);
    if (sent < 0 && would_block(errno)) return true;
    if (sent < 0) completion_.complete(fail(error_code(errno)));
    else if (static_cast<size_t>(sent) != data_.size())
      completion_.complete(fail(net::error_code::Other{std::optional<std::string>("the datagram was sent in part")}));
    else
      completion_.complete(ok());
    return false;
  }

 private:
  std::vector<uint8_t> data_;
  std::optional<SockAddr> to_;
};

// One datagram awaited: taken at once when one has arrived, else once the
// socket is readable. Its sender is the connected peer as the guest named
// it, else the address it came from. A receive the guest cancels while it
// waits takes nothing.
class DatagramReceive : public DatagramCall<DatagramReceive, ReceiveResult, POLLIN> {
 public:
  using DatagramCall::DatagramCall;

  // Whether the receive would block.
  bool attempt() {
    std::vector<uint8_t> data(kMaxDatagram);
    SockAddr from;
    const ssize_t got = core::receive_datagram(socket_->fd->get(), data.data(), data.size(), &from);
    if (got < 0 && would_block(errno)) return true;
    if (got < 0) {
      completion_.complete(fail<Received>(error_code(errno)));
      return false;
    }
    data.resize(static_cast<size_t>(got));
    const bool connected = socket_->state == UdpState::connected && socket_->peer;
    net::IpSocketAddress sender = connected ? *socket_->peer : from_sockaddr(from.storage);
    completion_.complete(ReceiveResult::ok(Received{std::move(data), std::move(sender)}));
    return false;
  }
};

class HostUdpSocket final : public net::UdpSocket {
 public:
  explicit HostUdpSocket(std::shared_ptr<UdpShared> shared) : s_(std::move(shared)) {}

  // The state is checked before the address (as wasmtime does). No
  // SO_REUSEADDR: a port in use is address-in-use.
  NetStatus bind(Caller&, net::IpSocketAddress local_address) override {
    if (s_->state != UdpState::unbound) return fail(invalid_state());
    const SockAddr address = to_sockaddr(local_address);
    if (!fits_family(address, s_->family)) return fail(invalid_argument());
    if (const int error = core::bind_address(fd(), address, /*reuse_address=*/false)) return fail(bind_error(error));
    s_->state = UdpState::bound;
    return ok();
  }

  // From any state: a socket not yet bound is bound by the kernel, a
  // connected one changes its peer. A failure leaves it bound and
  // unconnected.
  NetStatus connect(Caller&, net::IpSocketAddress remote_address) override {
    const SockAddr address = to_sockaddr(remote_address);
    if (!is_valid_peer(address, s_->family)) return fail(invalid_argument());
    if (const int error = core::connect_datagram(fd(), address)) {
      (void)core::disconnect(fd());  // best effort: what is left of an association goes
      s_->state = UdpState::bound;
      s_->peer.reset();
      return fail(bind_error(error));
    }
    s_->state = UdpState::connected;
    s_->peer = std::move(remote_address);
    return ok();
  }

  NetStatus disconnect(Caller&) override {
    if (s_->state != UdpState::connected) return fail(invalid_state());
    if (const int error = core::disconnect(fd())) return fail(error_code(error));
    s_->state = UdpState::bound;
    s_->peer.reset();
    return ok();
  }

  // A connected socket sends to its peer (an address given must be that
  // one); an unconnected one needs a valid address, and binds to the
  // unspecified address first when it is not bound yet.
  void send(Caller& caller, std::vector<uint8_t> data, std::optional<net::IpSocketAddress> remote_address,
            TypedCompletion<NetStatus> completion) override {
    if (data.size() > kMaxDatagram) return completion.complete(fail(net::error_code::DatagramTooLarge{}));
    std::optional<SockAddr> to;
    if (remote_address) {
      const SockAddr address = to_sockaddr(*remote_address);
      if (!is_valid_peer(address, s_->family)) return completion.complete(fail(invalid_argument()));
      if (s_->state == UdpState::connected) {
        if (*remote_address != *s_->peer) return completion.complete(fail(invalid_argument()));
      } else {
        to = address;
      }
    } else if (s_->state != UdpState::connected) {
      return completion.complete(fail(invalid_argument()));
    }
    if (s_->state == UdpState::unbound) {
      const SockAddr any = core::any_address(address_family(s_->family));
      if (const int error = core::bind_address(fd(), any, /*reuse_address=*/false))
        return completion.complete(fail(bind_error(error)));
      s_->state = UdpState::bound;
    }
    std::make_shared<DatagramSend>(caller.store(), s_, std::move(data), to, std::move(completion))->start();
  }

  void receive(Caller& caller, TypedCompletion<ReceiveResult> completion) override {
    if (s_->state == UdpState::unbound) return completion.complete(fail<Received>(invalid_state()));
    std::make_shared<DatagramReceive>(caller.store(), s_, std::move(completion))->start();
  }

  NetResult<net::IpSocketAddress> get_local_address(Caller&) override {
    if (s_->state == UdpState::unbound) return fail<net::IpSocketAddress>(invalid_state());
    return address_result(core::local_address_of(fd()));
  }
  NetResult<net::IpSocketAddress> get_remote_address(Caller&) override {
    if (s_->state != UdpState::connected) return fail<net::IpSocketAddress>(invalid_state());
    return address_result(core::remote_address_of(fd()));
  }
  net::IpAddressFamily get_address_family(Caller&) override { return s_->family; }

  // Options apply in every state.
  NetResult<uint8_t> get_unicast_hop_limit(Caller&) override {
    return from_sys(core::get_hop_limit(fd(), address_family(s_->family)));
  }
  NetStatus set_unicast_hop_limit(Caller&, uint8_t value) override {
    return from_errno(core::set_hop_limit(fd(), address_family(s_->family), value));
  }
  NetResult<uint64_t> get_receive_buffer_size(Caller&) override {
    return from_sys(core::get_buffer_size(fd(), SO_RCVBUF));
  }
  NetStatus set_receive_buffer_size(Caller&, uint64_t value) override {
    return from_errno(core::set_buffer_size(fd(), SO_RCVBUF, value));
  }
  NetResult<uint64_t> get_send_buffer_size(Caller&) override {
    return from_sys(core::get_buffer_size(fd(), SO_SNDBUF));
  }
  NetStatus set_send_buffer_size(Caller&, uint64_t value) override {
    return from_errno(core::set_buffer_size(fd(), SO_SNDBUF, value));
  }

 private:
  int fd() const { return s_->fd->get(); }

  std::shared_ptr<UdpShared> s_;
};

}  // namespace

std::unique_ptr<net::UdpSocket> new_udp_socket(std::shared_ptr<SocketFd> fd, net::IpAddressFamily family) {
  auto shared = std::make_shared<UdpShared>();
  shared->fd = std::move(fd);
  shared->family = family;
  return std::make_unique<HostUdpSocket>(std::move(shared));
}

}  // namespace cmhost::wasi::p3
