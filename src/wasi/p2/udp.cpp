// wasi:sockets/udp over the host's UDP sockets: bind, the datagram streams
// (optionally connected to one remote address), and the socket's options.
#include <poll.h>

#include <algorithm>
#include <cerrno>

#include "socket_support.hpp"
#include "sockets.hpp"

namespace cmhost::wasi::detail {

namespace {

namespace udp = ::cmhost::wasi::bindings::wasi::sockets::udp;
using net::ErrorCode;
using abi::typed::Own;

constexpr size_t kMaxDatagram = 65535;
constexpr uint64_t kMaxDatagramsPerReceive = 64;
constexpr uint64_t kSendPermit = 64;  // datagrams one check-send allows when the socket can send

// What the two streams of one `stream` call hold, so the socket can tell
// whether they are still there.
using StreamPairToken = std::shared_ptr<const int>;

class IncomingDatagrams final : public udp::IncomingDatagramStream {
 public:
  IncomingDatagrams(std::shared_ptr<SocketFd> fd, StreamPairToken token) : fd_(std::move(fd)), token_(std::move(token)) {}

  // What has arrived, up to max-results datagrams, never waiting.
  NetResult<std::vector<udp::IncomingDatagram>> receive(Caller&, uint64_t max_results) override {
    using R = NetResult<std::vector<udp::IncomingDatagram>>;
    std::vector<udp::IncomingDatagram> received;
    std::vector<uint8_t> buffer(kMaxDatagram);
    // Fewer than asked for is allowed: at most kMaxDatagramsPerReceive, so
    // one call holds at most 4 MiB however fast datagrams arrive.
    const uint64_t wanted = std::min<uint64_t>(max_results, kMaxDatagramsPerReceive);
    while (received.size() < wanted) {
      SockAddr from;
      const ssize_t n = core::receive_datagram(fd_->get(), buffer.data(), buffer.size(), &from);
      if (n < 0) {
        if (errno == EAGAIN || !received.empty()) break;
        return R::err(datagram_error(errno));
      }
      received.push_back({std::vector<uint8_t>(buffer.begin(), buffer.begin() + n), from_sockaddr(from.storage)});
    }
    return R::ok(std::move(received));
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<FdPollable>(fd_->get(), POLLIN, fd_);
  }

 private:
  std::shared_ptr<SocketFd> fd_;
  StreamPairToken token_;
};

class OutgoingDatagrams final : public udp::OutgoingDatagramStream {
 public:
  OutgoingDatagrams(std::shared_ptr<SocketFd> fd, net::IpAddressFamily family,
                    std::optional<net::IpSocketAddress> remote, StreamPairToken token)
      : fd_(std::move(fd)), family_(family), remote_(std::move(remote)), token_(std::move(token)) {}

  NetResult<uint64_t> check_send(Caller&) override {
    permit_ = wait_for(fd_->get(), POLLOUT, 0) ? kSendPermit : 0;
    return NetResult<uint64_t>::ok(permit_);
  }

  // Sends in order until one cannot go at once; how many went (0 when the
  // socket takes none now: send never reports would-block). The first one
  // failing is the call's error.
  NetResult<uint64_t> send(Caller&, std::vector<udp::OutgoingDatagram> datagrams) override {
    if (datagrams.size() > permit_) throw_trap("wasi:sockets/udp: send of more datagrams than check-send permitted");
    permit_ -= datagrams.size();
    uint64_t sent = 0;
    for (const udp::OutgoingDatagram& datagram : datagrams) {
      if (const auto bad = check(datagram)) return sent ? NetResult<uint64_t>::ok(sent) : fail<uint64_t>(*bad);
      const SockAddr to = datagram.remote_address && !remote_ ? to_sockaddr(*datagram.remote_address) : SockAddr{};
      const ssize_t n =
          core::send_datagram(fd_->get(), datagram.data.data(), datagram.data.size(), to.length ? &to : nullptr);
      if (n < 0 && errno == EAGAIN) {
        permit_ = 0;
        break;
      }
      if (n < 0) {
        if (sent) break;
        return fail<uint64_t>(datagram_error(errno));
      }
      ++sent;
    }
    return NetResult<uint64_t>::ok(sent);
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<FdPollable>(fd_->get(), POLLOUT, fd_);
  }

 private:
  // A connected stream sends only to its peer; an unconnected one needs an
  // address for each datagram.
  std::optional<ErrorCode> check(const udp::OutgoingDatagram& datagram) const {
    if (!datagram.remote_address) return remote_ ? std::nullopt : std::optional(ErrorCode::invalid_argument);
    if (remote_ && *datagram.remote_address != *remote_) return ErrorCode::invalid_argument;
    return check_datagram_remote(*datagram.remote_address, family_);
  }

  std::shared_ptr<SocketFd> fd_;
  net::IpAddressFamily family_;
  std::optional<net::IpSocketAddress> remote_;
  StreamPairToken token_;
  uint64_t permit_ = 0;
};

enum class UdpState { unbound, bind_started, bound };

class UdpSocket final : public udp::UdpSocket {
 public:
  UdpSocket(std::shared_ptr<const SocketHandles> handles, std::shared_ptr<SocketFd> fd, net::IpAddressFamily family)
      : handles_(std::move(handles)), fd_(std::move(fd)), family_(family) {}

  NetResult<void> start_bind(Caller&, net::Network&, net::IpSocketAddress local_address) override {
    if (state_ == UdpState::bind_started) return fail(ErrorCode::concurrency_conflict);
    if (state_ != UdpState::unbound) return fail(ErrorCode::invalid_state);
    if (auto bad = check_local(local_address, family_)) return fail(*bad);
    if (const int error = core::bind_address(fd_->get(), to_sockaddr(local_address), /*reuse_address=*/false))
      return fail(error_code(error));
    state_ = UdpState::bind_started;
    return ok();
  }
  NetResult<void> finish_bind(Caller&) override {
    if (state_ != UdpState::bind_started) return fail(ErrorCode::not_in_progress);
    state_ = UdpState::bound;
    return ok();
  }

  // New datagram streams, connected to `remote_address` when given (and
  // disconnected from an earlier one when not).
  NetResult<std::tuple<Own<udp::IncomingDatagramStream>, Own<udp::OutgoingDatagramStream>>> stream(
      Caller& caller, std::optional<net::IpSocketAddress> remote_address) override {
    using R = NetResult<std::tuple<Own<udp::IncomingDatagramStream>, Own<udp::OutgoingDatagramStream>>>;
    if (state_ != UdpState::bound) return R::err(ErrorCode::invalid_state);
    // Older streams would send to, and take datagrams of, the new peer.
    if (!streams_.expired()) throw_trap("wasi:sockets/udp: stream called before the previous streams were dropped");
    if (remote_address) {
      if (auto bad = check_datagram_remote(*remote_address, family_)) return R::err(*bad);
    }
    if (connected_) {
      if (const int error = core::disconnect(fd_->get())) return R::err(error_code(error));
      connected_ = false;
    }
    if (remote_address) {
      if (const int error = core::start_connect(fd_->get(), to_sockaddr(*remote_address)))
        return R::err(connect_error(error));
      connected_ = true;
    }
    const auto token = std::make_shared<const int>(0);
    streams_ = token;
    auto incoming = handles_->udp->incoming_datagram_stream.make_own(
        caller.store(), std::make_unique<IncomingDatagrams>(fd_, token));
    auto outgoing = handles_->udp->outgoing_datagram_stream.make_own(
        caller.store(), std::make_unique<OutgoingDatagrams>(fd_, family_, remote_address, token));
    return R::ok(std::tuple{incoming, outgoing});
  }

  NetResult<net::IpSocketAddress> local_address(Caller&) override {
    if (state_ == UdpState::unbound) return fail<net::IpSocketAddress>(ErrorCode::invalid_state);
    return local_address_of(fd_->get());
  }
  NetResult<net::IpSocketAddress> remote_address(Caller&) override {
    if (!connected_) return fail<net::IpSocketAddress>(ErrorCode::invalid_state);
    return remote_address_of(fd_->get());
  }
  net::IpAddressFamily address_family(Caller&) override { return family_; }
  NetResult<uint8_t> unicast_hop_limit(Caller&) override { return get_hop_limit(fd_->get(), family_); }
  NetResult<void> set_unicast_hop_limit(Caller&, uint8_t value) override {
    return set_hop_limit(fd_->get(), family_, value);
  }
  NetResult<uint64_t> receive_buffer_size(Caller&) override { return get_buffer_size(fd_->get(), SO_RCVBUF); }
  NetResult<void> set_receive_buffer_size(Caller&, uint64_t value) override {
    return set_buffer_size(fd_->get(), SO_RCVBUF, value);
  }
  NetResult<uint64_t> send_buffer_size(Caller&) override { return get_buffer_size(fd_->get(), SO_SNDBUF); }
  NetResult<void> set_send_buffer_size(Caller&, uint64_t value) override {
    return set_buffer_size(fd_->get(), SO_SNDBUF, value);
  }
  // Binding finishes at once: the socket itself is always ready.
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override { return std::make_unique<Pollable>(); }

 private:
  std::shared_ptr<const SocketHandles> handles_;
  std::shared_ptr<SocketFd> fd_;
  net::IpAddressFamily family_;
  UdpState state_ = UdpState::unbound;
  bool connected_ = false;
  std::weak_ptr<const int> streams_;  // the last stream call's, while either is alive
};

}  // namespace

NetResult<std::unique_ptr<udp::UdpSocket>> new_udp_socket(std::shared_ptr<const SocketHandles> handles,
                                                          net::IpAddressFamily family) {
  return new_socket<udp::UdpSocket, UdpSocket>(std::move(handles), family, SOCK_DGRAM);
}

}  // namespace cmhost::wasi::detail
