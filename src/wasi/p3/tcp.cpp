// wasi:sockets/types@0.3.0 tcp-socket over the host's TCP sockets: the
// socket's states, its options, and its three streams. send, receive and
// listen each run one copy in place at a time between the guest's buffer
// and the non-blocking socket (ChannelEnd::start_when_ready): the step
// runs once the guest's copy is pending, and when the kernel would block
// the copy waits for the descriptor in the store's reactor, still in
// flight, so a guest dropping its end is seen at once. No thread is used.
// Each stream holds the descriptor, so it outlives the socket's handle;
// the descriptor closes when the socket and its streams are all gone.
#include <netinet/tcp.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/error.hpp"
#include "socket_support.hpp"

namespace cmhost::wasi::p3 {

namespace {

using abi::typed::Future;
using abi::typed::Own;
using abi::typed::Stream;
using TcpHandle = Own<net::TcpSocket>;

constexpr uint64_t kDefaultBacklog = 128;
constexpr uint64_t kAnyLength = std::numeric_limits<uint64_t>::max();  // a copy of as much as the guest offers

enum class TcpState { unbound, bound, listening, connecting, connected, closed, failed };

// A socket's state, shared with its connect under way (the guest may drop
// the socket before the connect ends).
struct TcpShared {
  std::shared_ptr<SocketFd> fd;  // none once closed, nor in `failed`
  net::IpAddressFamily family = net::IpAddressFamily::ipv4;
  TcpState state = TcpState::unbound;
  int failure = 0;  // `failed`: the errno of the accept that made the socket
  uint64_t backlog = kDefaultBacklog;
  bool send_taken = false;
  bool receive_taken = false;

  // A failed bind, listen or connect leaves nothing to use: the WIT's
  // `closed`, every later call invalid-state.
  void close() {
    state = TcpState::closed;
    fd.reset();
  }
};

// A send's failure: the peer gone (reset aside) is connection-broken.
net::ErrorCode send_error(int os_error) {
  if (os_error == EPIPE || os_error == ECONNABORTED || os_error == ESHUTDOWN)
    return net::error_code::ConnectionBroken{};
  return error_code(os_error);
}

// Linux reports network errors of a connection that was already gone on
// the accept that would have taken it: they are the connection's abort.
int accept_failure(int os_error) {
  switch (os_error) {
    case ECONNRESET:
    case ENETRESET:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETDOWN:
    case ENETUNREACH:
    case EPROTO:
    case ENOPROTOOPT:
    case ENONET:
    case EOPNOTSUPP: return ECONNABORTED;
    default: return os_error;
  }
}

// One send: each of the guest's writes goes to the socket in place, as
// much as the kernel takes at a time (the rest stays the guest's pending
// write), waiting for POLLOUT when it takes nothing. The future resolves ok
// once the guest ends the stream, and the socket's sending side shuts down
// so the peer sees the end; err when a send fails, the stream then
// dropped, so the guest's next write sees it gone with its bytes untaken.
class SendCopy : public std::enable_shared_from_this<SendCopy> {
 public:
  SendCopy(Store& store, std::shared_ptr<SocketFd> fd, StreamReader<uint8_t> data)
      : store_(store), fd_(std::move(fd)), data_(std::move(data)), result_(store) {}
  Future<NetStatus> future() const { return result_.readable_handle(); }

  void next() {
    // The step runs only while this copy is in flight, which `done` keeps
    // this object alive for: it holds no reference of its own.
    data_.start_when_ready(
        store_, fd_->get(), POLLOUT, kAnyLength,
        [this](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
          const ssize_t sent = core::send_some(fd_->get(), guest_bytes(cx, ptr, n), n);
          if (sent >= 0) return static_cast<uint64_t>(sent);
          if (would_block(errno)) return 0;
          error_ = errno;
          return std::nullopt;
        },
        [self = shared_from_this()](CopyOutcome outcome) {
          if (self->error_) return self->finish(fail(send_error(self->error_)));
          if (outcome.status == CopyStatus::Dropped) return self->finish(ok());
          self->next();
        });
  }

 private:
  void finish(NetStatus result) {
    ::shutdown(fd_->get(), SHUT_WR);
    fd_.reset();
    if (!data_.ended()) data_.close();
    result_.start_write(store_, std::move(result), [self = shared_from_this()](CopyOutcome) {});
  }

  Store& store_;
  std::shared_ptr<SocketFd> fd_;
  StreamReader<uint8_t> data_;
  FutureWriter<NetStatus> result_;
  int error_ = 0;
};

// One receive: the socket's bytes go straight into the guest's reads
// (recv into its buffer), waiting for POLLIN when none have arrived. At the
// peer's end of stream the stream ends and the future resolves ok; a
// failed receive ends it with err; the guest dropping the stream resolves
// it ok, unread bytes or not. Either way the receiving side shuts down.
class ReceiveCopy : public std::enable_shared_from_this<ReceiveCopy> {
 public:
  ReceiveCopy(Store& store, std::shared_ptr<SocketFd> fd)
      : store_(store), fd_(std::move(fd)), data_(store), result_(store) {}
  std::tuple<Stream<uint8_t>, Future<NetStatus>> ends() const {
    return {data_.readable_handle(), result_.readable_handle()};
  }

  void next() {
    data_.start_when_ready(
        store_, fd_->get(), POLLIN, kAnyLength,
        [this](abi::AbiContext& cx, uint64_t ptr, uint64_t n) -> std::optional<uint64_t> {
          const ssize_t got = core::receive_some(fd_->get(), guest_bytes(cx, ptr, n), n);
          if (got > 0) return static_cast<uint64_t>(got);
          if (got < 0 && would_block(errno)) return 0;
          if (got < 0) error_ = errno;
          ended_ = true;
          return std::nullopt;
        },
        [self = shared_from_this()](CopyOutcome outcome) {
          if (self->error_) return self->finish(fail(error_code(self->error_)));
          if (outcome.status == CopyStatus::Dropped || self->ended_) return self->finish(ok());
          self->next();
        });
  }

 private:
  void finish(NetStatus result) {
    ::shutdown(fd_->get(), SHUT_RD);
    fd_.reset();
    if (!data_.ended()) data_.close();
    result_.start_write(store_, std::move(result), [self = shared_from_this()](CopyOutcome) {});
  }

  Store& store_;
  std::shared_ptr<SocketFd> fd_;
  StreamWriter<uint8_t> data_;
  FutureWriter<NetStatus> result_;
  int error_ = 0;
  bool ended_ = false;
};

std::unique_ptr<net::TcpSocket> make_socket(std::shared_ptr<const SocketContext> context, TcpShared shared);

// A listening socket's stream of connections. A connection is accepted
// only while a guest read waits, one per read, its new handle lowered
// straight into that read; POLLIN is waited for when none is there. It
// goes on after the socket's handle is dropped, until the guest drops the
// stream. A failed accept gives a socket that reports the failure.
class Acceptor : public std::enable_shared_from_this<Acceptor> {
 public:
  Acceptor(Store& store, std::shared_ptr<SocketFd> fd, net::IpAddressFamily family,
           std::shared_ptr<const SocketContext> context)
      : store_(store),
        fd_(std::move(fd)),
        family_(family),
        context_(std::move(context)),
        connections_(store, abi::Type::own(context_->resources->tcp_socket.type())) {}
  Stream<TcpHandle> stream() const { return connections_.readable_handle(); }

  void next() {
    connections_.start_when_ready(
        store_, fd_->get(), POLLIN, 1,
        [this](abi::AbiContext& cx, uint64_t ptr, uint64_t) -> std::optional<uint64_t> {
          auto accepted = core::accept_connection(fd_->get());
          if (!accepted.ok() && would_block(accepted.error)) return 0;
          // The guest's read is pending: the new socket goes straight into it.
          const TcpHandle socket = context_->resources->tcp_socket.make_own(store_, make_socket(context_, shared_of(accepted)));
          return connections_.put(cx, ptr, std::span<const TcpHandle>(&socket, 1));
        },
        [self = shared_from_this()](CopyOutcome outcome) {
          if (outcome.status == CopyStatus::Dropped) return self->finish();
          self->next();
        });
  }

 private:
  // The state of an accepted connection's socket, or of one reporting why
  // the accept failed.
  TcpShared shared_of(core::SysResult<std::shared_ptr<SocketFd>>& accepted) const {
    TcpShared shared;
    shared.family = family_;
    if (accepted.ok()) {
      shared.fd = std::move(accepted.value);
      shared.state = TcpState::connected;
    } else {
      shared.state = TcpState::failed;
      shared.failure = accept_failure(accepted.error);
    }
    return shared;
  }

  void finish() {
    fd_.reset();
    if (!connections_.ended()) connections_.close();
  }

  Store& store_;
  std::shared_ptr<SocketFd> fd_;
  net::IpAddressFamily family_;
  std::shared_ptr<const SocketContext> context_;
  StreamWriter<TcpHandle> connections_;
};

class HostTcpSocket final : public net::TcpSocket {
 public:
  HostTcpSocket(std::shared_ptr<const SocketContext> context, TcpShared shared)
      : context_(std::move(context)), s_(std::make_shared<TcpShared>(std::move(shared))) {}

  // The address is checked before the state (as wasmtime does).
  NetStatus bind(Caller&, net::IpSocketAddress local_address) override {
    const SockAddr address = to_sockaddr(local_address);
    if (!fits_family(address, s_->family) || !core::is_unicast(address)) return fail(invalid_argument());
    if (s_->state != TcpState::unbound) return fail(invalid_state());
    if (const int error = core::bind_address(s_->fd->get(), address, /*reuse_address=*/true))
      return fail(bind_error(error));
    s_->state = TcpState::bound;
    return ok();
  }

  // The state is checked before the address (as wasmtime does). A socket
  // not yet bound is bound by the kernel. A failure closes the socket.
  void connect(Caller& caller, net::IpSocketAddress remote_address, TypedCompletion<NetStatus> completion) override {
    if (s_->state != TcpState::unbound && s_->state != TcpState::bound)
      return completion.complete(fail(invalid_state()));
    const SockAddr address = to_sockaddr(remote_address);
    if (!is_valid_peer(address, s_->family) || !core::is_unicast(address))
      return completion.complete(fail(invalid_argument()));
    const int started = core::start_connect(s_->fd->get(), address);
    if (started == 0) {
      s_->state = TcpState::connected;
      return completion.complete(ok());
    }
    if (started != EINPROGRESS) {
      s_->close();
      return completion.complete(fail(error_code(started)));
    }
    s_->state = TcpState::connecting;
    Store& store = caller.store();
    const Store::WaitId wait = store.when_ready(s_->fd->get(), POLLOUT, [s = s_, completion](short) mutable {
      if (const int error = core::connect_outcome(s->fd->get())) {
        s->close();
        return completion.complete(fail(error_code(error)));
      }
      s->state = TcpState::connected;
      completion.complete(ok());
    });
    // A cancelled connect abandons the half-made connection: the socket is
    // closed, as after a failed one. (Weak: the hook lives as long as the
    // guest's subtask, and must not keep the descriptor open.)
    completion.on_cancel([&store, wait, weak = std::weak_ptr<TcpShared>(s_), completion]() mutable {
      if (!store.cancel_wait(wait)) return;
      if (const auto s = weak.lock()) s->close();
      completion.cancel();
    });
  }

  // A socket not yet bound is bound to the unspecified address of its
  // family, port 0 (the kernel picks one); a failure closes it.
  NetResult<Stream<TcpHandle>> listen(Caller& caller) override {
    using R = NetResult<Stream<TcpHandle>>;
    if (s_->state != TcpState::unbound && s_->state != TcpState::bound) return R::err(invalid_state());
    if (s_->state == TcpState::unbound) {
      const SockAddr any = core::any_address(address_family(s_->family));
      if (const int error = core::bind_address(s_->fd->get(), any, /*reuse_address=*/true)) {
        s_->close();
        return R::err(bind_error(error));
      }
      s_->state = TcpState::bound;
    }
    if (const int error = core::listen_with(s_->fd->get(), s_->backlog)) {
      s_->close();
      return R::err(error_code(error));
    }
    s_->state = TcpState::listening;
    auto acceptor = std::make_shared<Acceptor>(caller.store(), s_->fd, s_->family, context_);
    const Stream<TcpHandle> connections = acceptor->stream();
    acceptor->next();
    return R::ok(connections);
  }

  // Once per connected socket. Otherwise the guest's stream is dropped
  // (its writes see it gone, their bytes untaken) and the future fails.
  Future<NetStatus> send(Caller& caller, StreamReader<uint8_t> data) override {
    if (s_->state == TcpState::connected && !s_->send_taken) {
      s_->send_taken = true;
      auto copy = std::make_shared<SendCopy>(caller.store(), s_->fd, std::move(data));
      const Future<NetStatus> future = copy->future();
      copy->next();
      return future;
    }
    data.close();
    return resolved_future(caller.store(), fail(unavailable_stream_error()));
  }

  // Once per connected socket. Otherwise a stream already ended and a
  // future already failed.
  std::tuple<Stream<uint8_t>, Future<NetStatus>> receive(Caller& caller) override {
    Store& store = caller.store();
    if (s_->state == TcpState::connected && !s_->receive_taken) {
      s_->receive_taken = true;
      auto copy = std::make_shared<ReceiveCopy>(store, s_->fd);
      auto ends = copy->ends();
      copy->next();
      return ends;
    }
    StreamWriter<uint8_t> none(store);
    const Stream<uint8_t> ended = none.readable_handle();
    none.close();
    return {ended, resolved_future(store, fail(unavailable_stream_error()))};
  }

  NetResult<net::IpSocketAddress> get_local_address(Caller&) override {
    switch (s_->state) {
      case TcpState::bound:
      case TcpState::listening:
      case TcpState::connected: return address_result(core::local_address_of(s_->fd->get()));
      case TcpState::failed: return fail<net::IpSocketAddress>(error_code(s_->failure));
      default: return fail<net::IpSocketAddress>(invalid_state());
    }
  }
  NetResult<net::IpSocketAddress> get_remote_address(Caller&) override {
    if (s_->state == TcpState::connected) return address_result(core::remote_address_of(s_->fd->get()));
    if (s_->state == TcpState::failed) return fail<net::IpSocketAddress>(error_code(s_->failure));
    return fail<net::IpSocketAddress>(invalid_state());
  }
  bool get_is_listening(Caller&) override { return s_->state == TcpState::listening; }
  net::IpAddressFamily get_address_family(Caller&) override { return s_->family; }

  // Kept for listen; a socket already listening takes it at once (Linux
  // does), or reports not-supported.
  NetStatus set_listen_backlog_size(Caller&, uint64_t value) override {
    if (value == 0) return fail(invalid_argument());
    const uint64_t backlog = std::min<uint64_t>(value, INT_MAX);
    switch (s_->state) {
      case TcpState::unbound:
      case TcpState::bound: break;
      case TcpState::listening:
        if (core::listen_with(s_->fd->get(), backlog) != 0) return fail(net::error_code::NotSupported{});
        break;
      case TcpState::failed: return fail(error_code(s_->failure));
      default: return fail(invalid_state());
    }
    s_->backlog = backlog;
    return ok();
  }

  // Options: on the socket in every state but connecting and closed
  // (invalid-state); a failed accept's socket reports its failure. Checked
  // before the value (a zero one is invalid-argument).
  NetResult<bool> get_keep_alive_enabled(Caller&) override {
    return read_option([](int fd) {
      const auto on = core::get_option(fd, SOL_SOCKET, SO_KEEPALIVE);
      return core::SysResult<bool>{on.value != 0, on.error};
    });
  }
  NetStatus set_keep_alive_enabled(Caller&, bool value) override {
    return write_option([&](int fd) { return core::set_flag(fd, SOL_SOCKET, SO_KEEPALIVE, value); });
  }
  NetResult<uint64_t> get_keep_alive_idle_time(Caller&) override {
    return read_option([](int fd) { return core::get_keep_alive_time(fd, TCP_KEEPIDLE); });
  }
  NetStatus set_keep_alive_idle_time(Caller&, uint64_t value) override {
    return write_option([&](int fd) { return core::set_keep_alive_time(fd, TCP_KEEPIDLE, value); });
  }
  NetResult<uint64_t> get_keep_alive_interval(Caller&) override {
    return read_option([](int fd) { return core::get_keep_alive_time(fd, TCP_KEEPINTVL); });
  }
  NetStatus set_keep_alive_interval(Caller&, uint64_t value) override {
    return write_option([&](int fd) { return core::set_keep_alive_time(fd, TCP_KEEPINTVL, value); });
  }
  NetResult<uint32_t> get_keep_alive_count(Caller&) override {
    return read_option([](int fd) {
      const auto count = core::get_option(fd, IPPROTO_TCP, TCP_KEEPCNT);
      return core::SysResult<uint32_t>{static_cast<uint32_t>(count.value), count.error};
    });
  }
  NetStatus set_keep_alive_count(Caller&, uint32_t value) override {
    return write_option([&](int fd) { return core::set_option(fd, IPPROTO_TCP, TCP_KEEPCNT, value, 127); });
  }
  NetResult<uint8_t> get_hop_limit(Caller&) override {
    const int family = address_family(s_->family);
    return read_option([family](int fd) { return core::get_hop_limit(fd, family); });
  }
  NetStatus set_hop_limit(Caller&, uint8_t value) override {
    const int family = address_family(s_->family);
    return write_option([&](int fd) { return core::set_hop_limit(fd, family, value); });
  }
  NetResult<uint64_t> get_receive_buffer_size(Caller&) override {
    return read_option([](int fd) { return core::get_buffer_size(fd, SO_RCVBUF); });
  }
  NetStatus set_receive_buffer_size(Caller&, uint64_t value) override {
    return write_option([&](int fd) { return core::set_buffer_size(fd, SO_RCVBUF, value); });
  }
  NetResult<uint64_t> get_send_buffer_size(Caller&) override {
    return read_option([](int fd) { return core::get_buffer_size(fd, SO_SNDBUF); });
  }
  NetStatus set_send_buffer_size(Caller&, uint64_t value) override {
    return write_option([&](int fd) { return core::set_buffer_size(fd, SO_SNDBUF, value); });
  }

 private:
  // Why send or receive cannot have the connection: taken already, or not
  // connected (invalid-state); a failed accept's socket reports its failure.
  net::ErrorCode unavailable_stream_error() const {
    return s_->state == TcpState::failed ? error_code(s_->failure) : invalid_state();
  }

  std::optional<net::ErrorCode> option_error() const {
    switch (s_->state) {
      case TcpState::unbound:
      case TcpState::bound:
      case TcpState::listening:
      case TcpState::connected: return std::nullopt;
      case TcpState::failed: return error_code(s_->failure);
      default: return invalid_state();
    }
  }
  template <class Get>
  auto read_option(Get get) const -> NetResult<decltype(get(0).value)> {
    using T = decltype(get(0).value);
    if (auto bad = option_error()) return fail<T>(*bad);
    return from_sys(get(s_->fd->get()));
  }
  template <class Set>
  NetStatus write_option(Set set) const {
    if (auto bad = option_error()) return fail(*bad);
    return from_errno(set(s_->fd->get()));
  }

  std::shared_ptr<const SocketContext> context_;
  std::shared_ptr<TcpShared> s_;
};

std::unique_ptr<net::TcpSocket> make_socket(std::shared_ptr<const SocketContext> context, TcpShared shared) {
  return std::make_unique<HostTcpSocket>(std::move(context), std::move(shared));
}

}  // namespace

std::unique_ptr<net::TcpSocket> new_tcp_socket(std::shared_ptr<const SocketContext> context,
                                               std::shared_ptr<SocketFd> fd, net::IpAddressFamily family) {
  TcpShared shared;
  shared.fd = std::move(fd);
  shared.family = family;
  return make_socket(std::move(context), std::move(shared));
}

}  // namespace cmhost::wasi::p3
