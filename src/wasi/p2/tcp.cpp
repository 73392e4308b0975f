// wasi:sockets/tcp over the host's TCP sockets: the socket's state machine
// (bind, connect and listen each started and finished), its options, and
// its connection's input and output streams.
#include <netinet/tcp.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "socket_support.hpp"
#include "sockets.hpp"

namespace cmhost::wasi::detail {

namespace {

namespace tcp = ::cmhost::wasi::bindings::wasi::sockets::tcp;
using net::ErrorCode;
using abi::typed::Own;
using ReadResult = abi::typed::Result<std::vector<uint8_t>, io::streams::StreamError>;
using StreamResult = abi::typed::Result<void, io::streams::StreamError>;
using CountResult = abi::typed::Result<uint64_t, io::streams::StreamError>;

constexpr uint64_t kChunk = 64 * 1024;  // the most one read returns and one check-write allows

// The connection's receiving side: what has arrived, never waiting unless
// asked to; end of stream once the peer has shut its side down.
class TcpInput final : public io::streams::InputStream {
 public:
  TcpInput(std::shared_ptr<const Handles> handles, std::shared_ptr<SocketFd> fd)
      : handles_(std::move(handles)), fd_(std::move(fd)) {}

  ReadResult read(Caller& caller, uint64_t len) override { return receive(caller, len, false); }
  ReadResult blocking_read(Caller& caller, uint64_t len) override { return receive(caller, len, true); }
  CountResult skip(Caller& caller, uint64_t len) override { return skipped(read(caller, len)); }
  CountResult blocking_skip(Caller& caller, uint64_t len) override { return skipped(blocking_read(caller, len)); }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<FdPollable>(fd_->get(), POLLIN, fd_);
  }

 private:
  static CountResult skipped(ReadResult r) {
    if (r.is_err()) return CountResult::err(std::move(r.error()));
    return CountResult::ok(r.value().size());
  }

  ReadResult receive(Caller& caller, uint64_t len, bool block) {
    if (closed_) return ReadResult::err(io::streams::stream_error::Closed{});
    if (len == 0) return ReadResult::ok();
    std::vector<uint8_t> out(std::min(len, kChunk));
    for (;;) {
      const ssize_t n = core::receive_some(fd_->get(), out.data(), out.size());
      if (n > 0) {
        out.resize(static_cast<size_t>(n));
        return ReadResult::ok(std::move(out));
      }
      if (n == 0) {
        closed_ = true;
        return ReadResult::err(io::streams::stream_error::Closed{});
      }
      if (errno != EAGAIN) {
        closed_ = true;
        return ReadResult::err(failed(caller, *handles_, errno));
      }
      if (!block) return ReadResult::ok();
      wait_for(fd_->get(), POLLIN, -1);
    }
  }

  std::shared_ptr<const Handles> handles_;
  std::shared_ptr<SocketFd> fd_;
  bool closed_ = false;
};

// The connection's sending side. A write never waits: what the kernel does
// not take at once is kept and sent as the socket drains, and check-write
// allows nothing more until it has gone. Writing more than check-write
// allowed traps, as wasi:io/streams requires.
class TcpOutput final : public ImmediateOutput {
 public:
  TcpOutput(std::shared_ptr<const Handles> handles, std::shared_ptr<SocketFd> fd)
      : ImmediateOutput(kChunk), handles_(std::move(handles)), fd_(std::move(fd)) {}

  CountResult check_write(Caller& caller) override {
    if (auto error = drain(caller, false)) return CountResult::err(std::move(*error));
    permit_ = pending_.empty() && wait_for(fd_->get(), POLLOUT, 0) ? kChunk : 0;
    return CountResult::ok(permit_);
  }
  StreamResult write(Caller& caller, std::vector<uint8_t> contents) override {
    take_permit(contents.size(), "write");
    return put(caller, contents.data(), contents.size());
  }
  StreamResult write_zeroes(Caller& caller, uint64_t len) override {
    take_permit(len, "write-zeroes");
    const std::vector<uint8_t> zeroes(len);
    return put(caller, zeroes.data(), zeroes.size());
  }
  StreamResult blocking_write_and_flush(Caller& caller, std::vector<uint8_t> contents) override {
    if (contents.size() > 4096) throw_trap("wasi:io/streams: blocking-write-and-flush of more than 4096 bytes");
    return put_and_flush(caller, contents.data(), contents.size());
  }
  StreamResult blocking_write_zeroes_and_flush(Caller& caller, uint64_t len) override {
    if (len > 4096) throw_trap("wasi:io/streams: blocking-write-zeroes-and-flush of more than 4096 bytes");
    const std::vector<uint8_t> zeroes(len);
    return put_and_flush(caller, zeroes.data(), zeroes.size());
  }
  // As much of `len` as check-write allows now.
  CountResult splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    const CountResult room = check_write(caller);
    if (room.is_err() || room.value() == 0 || len == 0) return room.is_err() ? room : CountResult::ok(0);
    return copy_from(caller, src.read(caller, std::min(len, room.value())));
  }
  // Waits until the socket has taken what was kept, then for the source.
  CountResult blocking_splice(Caller& caller, io::streams::InputStream& src, uint64_t len) override {
    if (auto error = drain(caller, true)) return CountResult::err(std::move(*error));
    return copy_from(caller, src.blocking_read(caller, std::min(len, kChunk)));
  }
  StreamResult flush(Caller& caller) override {
    if (auto error = drain(caller, false)) return StreamResult::err(std::move(*error));
    return StreamResult::ok();
  }
  StreamResult blocking_flush(Caller& caller) override {
    if (auto error = drain(caller, true)) return StreamResult::err(std::move(*error));
    return StreamResult::ok();
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<FdPollable>(fd_->get(), POLLOUT, fd_);
  }

 private:
  void take_permit(uint64_t n, const char* what) {
    if (n > permit_) throw_trap(std::string("wasi:io/streams: ") + what + " of more than check-write allowed");
    permit_ -= n;
  }

  StreamResult put(Caller& caller, const uint8_t* data, size_t n) override {
    if (closed_) return StreamResult::err(io::streams::stream_error::Closed{});
    pending_.insert(pending_.end(), data, data + n);
    if (auto error = drain(caller, false)) return StreamResult::err(std::move(*error));
    return StreamResult::ok();
  }
  StreamResult put_and_flush(Caller& caller, const uint8_t* data, size_t n) {
    if (auto error = drain(caller, true)) return StreamResult::err(std::move(*error));
    const StreamResult put_result = put(caller, data, n);
    if (put_result.is_err()) return put_result;
    return blocking_flush(caller);
  }
  CountResult copy_from(Caller& caller, ReadResult read) {
    if (read.is_err()) return CountResult::err(std::move(read.error()));
    const std::vector<uint8_t>& bytes = read.value();
    permit_ -= std::min<uint64_t>(permit_, bytes.size());
    const StreamResult written = put(caller, bytes.data(), bytes.size());
    if (written.is_err()) return CountResult::err(written.error());
    return CountResult::ok(bytes.size());
  }

  // Sends what is kept, waiting for the socket when `block`; the error
  // that ended the stream, if one did.
  std::optional<io::streams::StreamError> drain(Caller& caller, bool block) {
    if (closed_) return io::streams::stream_error::Closed{};
    while (sent_ < pending_.size()) {
      const ssize_t n = core::send_some(fd_->get(), pending_.data() + sent_, pending_.size() - sent_);
      if (n >= 0) {
        sent_ += static_cast<size_t>(n);
        continue;
      }
      if (errno == EAGAIN) {
        if (!block) return std::nullopt;
        wait_for(fd_->get(), POLLOUT, -1);
        continue;
      }
      closed_ = true;
      if (errno == EPIPE) return io::streams::stream_error::Closed{};
      return failed(caller, *handles_, errno);
    }
    pending_.clear();
    sent_ = 0;
    return std::nullopt;
  }

  std::shared_ptr<const Handles> handles_;
  std::shared_ptr<SocketFd> fd_;
  std::vector<uint8_t> pending_;
  size_t sent_ = 0;
  uint64_t permit_ = 0;  // what the last check-write allowed, less what was written since
  bool closed_ = false;
};

enum class TcpState { unbound, bind_started, bound, listen_started, listening, connect_started, connected, closed };

// The socket's pollable: ready when the started connect can finish or a
// connection waits to be accepted, and at once in any other state, in the
// state the socket is in when polled (wasi-libc makes one per socket).
class TcpPollable final : public FdPollable {
 public:
  TcpPollable(const std::shared_ptr<SocketFd>& fd, std::shared_ptr<const TcpState> state)
      : FdPollable(fd->get(), 0, fd), state_(std::move(state)) {}
  short events() const override {
    if (*state_ == TcpState::connect_started) return POLLOUT;
    if (*state_ == TcpState::listening) return POLLIN;
    return 0;
  }

 private:
  std::shared_ptr<const TcpState> state_;
};

using Streams = std::tuple<Own<io::streams::InputStream>, Own<io::streams::OutputStream>>;

class TcpSocket final : public tcp::TcpSocket {
 public:
  TcpSocket(std::shared_ptr<const SocketHandles> handles, std::shared_ptr<SocketFd> fd, net::IpAddressFamily family,
            TcpState initial = TcpState::unbound)
      : handles_(std::move(handles)),
        fd_(std::move(fd)),
        family_(family),
        shared_state_(std::make_shared<TcpState>(initial)),
        state_(*shared_state_) {}

  NetResult<void> start_bind(Caller&, net::Network&, net::IpSocketAddress local_address) override {
    if (auto busy = check_idle(TcpState::unbound)) return fail(*busy);
    if (auto bad = check_local(local_address, family_)) return fail(*bad);
    if (const int error = core::bind_address(fd(), to_sockaddr(local_address), /*reuse_address=*/true))
      return fail(error_code(error));
    state_ = TcpState::bind_started;
    return ok();
  }
  NetResult<void> finish_bind(Caller&) override { return finish(TcpState::bind_started, TcpState::bound); }

  NetResult<void> start_connect(Caller&, net::Network&, net::IpSocketAddress remote_address) override {
    if (state_ != TcpState::bound) {
      if (auto busy = check_idle(TcpState::unbound)) return fail(*busy);
    }
    if (auto bad = check_remote(remote_address, family_)) return fail(*bad);
    const int error = core::start_connect(fd(), to_sockaddr(remote_address));
    if (error != 0 && error != EINPROGRESS) {
      state_ = TcpState::closed;
      return fail(connect_error(error));
    }
    state_ = TcpState::connect_started;
    return ok();
  }

  NetResult<Streams> finish_connect(Caller& caller) override {
    if (state_ != TcpState::connect_started) return fail<Streams>(ErrorCode::not_in_progress);
    if (!wait_for(fd(), POLLOUT, 0)) return fail<Streams>(ErrorCode::would_block);
    if (const int error = core::connect_outcome(fd())) {
      state_ = TcpState::closed;
      return fail<Streams>(connect_error(error));
    }
    state_ = TcpState::connected;
    return NetResult<Streams>::ok(streams(caller, fd_));
  }

  NetResult<void> start_listen(Caller&) override {
    if (auto busy = check_idle(TcpState::bound)) return fail(*busy);
    if (const int error = core::listen_with(fd(), backlog_)) return fail(error_code(error));
    state_ = TcpState::listen_started;
    return ok();
  }
  NetResult<void> finish_listen(Caller&) override { return finish(TcpState::listen_started, TcpState::listening); }

  NetResult<std::tuple<Own<tcp::TcpSocket>, Own<io::streams::InputStream>, Own<io::streams::OutputStream>>> accept(
      Caller& caller) override {
    using R = NetResult<std::tuple<Own<tcp::TcpSocket>, Own<io::streams::InputStream>, Own<io::streams::OutputStream>>>;
    if (state_ != TcpState::listening) return R::err(ErrorCode::invalid_state);
    auto accepted = core::accept_connection(fd());
    if (!accepted.ok()) return R::err(accepted.error == EAGAIN ? ErrorCode::would_block : error_code(accepted.error));
    const std::shared_ptr<SocketFd> client_fd = std::move(accepted.value);
    auto [input, output] = streams(caller, client_fd);
    auto socket = handles_->tcp->tcp_socket.make_own(
        caller.store(), std::make_unique<TcpSocket>(handles_, client_fd, family_, TcpState::connected));
    return R::ok(std::tuple{socket, input, output});
  }

  NetResult<net::IpSocketAddress> local_address(Caller&) override {
    if (state_ == TcpState::unbound || state_ == TcpState::closed) return fail<net::IpSocketAddress>(ErrorCode::invalid_state);
    return local_address_of(fd());
  }
  NetResult<net::IpSocketAddress> remote_address(Caller&) override {
    if (state_ != TcpState::connected) return fail<net::IpSocketAddress>(ErrorCode::invalid_state);
    return remote_address_of(fd());
  }
  bool is_listening(Caller&) override { return state_ == TcpState::listening; }
  net::IpAddressFamily address_family(Caller&) override { return family_; }

  NetResult<void> set_listen_backlog_size(Caller&, uint64_t value) override {
    if (value == 0) return fail(ErrorCode::invalid_argument);
    if (state_ == TcpState::connect_started || state_ == TcpState::connected || state_ == TcpState::closed)
      return fail(ErrorCode::invalid_state);
    backlog_ = value;
    // Linux takes a new backlog for a socket that already listens.
    const bool listens = state_ == TcpState::listen_started || state_ == TcpState::listening;
    if (!listens) return ok();
    if (const int error = core::listen_with(fd(), value)) return fail(error_code(error));
    return ok();
  }

  NetResult<bool> keep_alive_enabled(Caller&) override {
    const auto on = get_option(fd(), SOL_SOCKET, SO_KEEPALIVE);
    if (on.is_err()) return fail<bool>(on.error());
    return NetResult<bool>::ok(on.value() != 0);
  }
  NetResult<void> set_keep_alive_enabled(Caller&, bool value) override {
    if (const int error = core::set_flag(fd(), SOL_SOCKET, SO_KEEPALIVE, value)) return fail(error_code(error));
    return ok();
  }
  // Durations in nanoseconds; the kernel keeps whole seconds (at most 32767).
  NetResult<uint64_t> keep_alive_idle_time(Caller&) override { return get_keep_alive_time(fd(), TCP_KEEPIDLE); }
  NetResult<void> set_keep_alive_idle_time(Caller&, uint64_t value) override {
    return set_keep_alive_time(fd(), TCP_KEEPIDLE, value);
  }
  NetResult<uint64_t> keep_alive_interval(Caller&) override { return get_keep_alive_time(fd(), TCP_KEEPINTVL); }
  NetResult<void> set_keep_alive_interval(Caller&, uint64_t value) override {
    return set_keep_alive_time(fd(), TCP_KEEPINTVL, value);
  }
  NetResult<uint32_t> keep_alive_count(Caller&) override {
    const auto count = get_option(fd(), IPPROTO_TCP, TCP_KEEPCNT);
    if (count.is_err()) return fail<uint32_t>(count.error());
    return NetResult<uint32_t>::ok(static_cast<uint32_t>(count.value()));
  }
  NetResult<void> set_keep_alive_count(Caller&, uint32_t value) override {
    return set_option(fd(), IPPROTO_TCP, TCP_KEEPCNT, value, 127);
  }
  NetResult<uint8_t> hop_limit(Caller&) override { return get_hop_limit(fd(), family_); }
  NetResult<void> set_hop_limit(Caller&, uint8_t value) override { return detail::set_hop_limit(fd(), family_, value); }
  NetResult<uint64_t> receive_buffer_size(Caller&) override { return get_buffer_size(fd(), SO_RCVBUF); }
  NetResult<void> set_receive_buffer_size(Caller&, uint64_t value) override {
    return set_buffer_size(fd(), SO_RCVBUF, value);
  }
  NetResult<uint64_t> send_buffer_size(Caller&) override { return get_buffer_size(fd(), SO_SNDBUF); }
  NetResult<void> set_send_buffer_size(Caller&, uint64_t value) override {
    return set_buffer_size(fd(), SO_SNDBUF, value);
  }

  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<TcpPollable>(fd_, shared_state_);
  }

  NetResult<void> shutdown(Caller&, tcp::ShutdownType shutdown_type) override {
    if (state_ != TcpState::connected) return fail(ErrorCode::invalid_state);
    const int how = shutdown_type == tcp::ShutdownType::receive ? SHUT_RD
                    : shutdown_type == tcp::ShutdownType::send  ? SHUT_WR
                                                                : SHUT_RDWR;
    // A peer that has already gone leaves nothing to shut down.
    if (::shutdown(fd(), how) != 0 && errno != ENOTCONN) return fail(error_code(errno));
    return ok();
  }

 private:
  int fd() const { return fd_->get(); }

  // A socket in `expected` may start an operation; one whose operation is
  // under way reports concurrency-conflict, any other invalid-state.
  std::optional<ErrorCode> check_idle(TcpState expected) const {
    if (state_ == expected) return std::nullopt;
    if (state_ == TcpState::bind_started || state_ == TcpState::listen_started || state_ == TcpState::connect_started)
      return ErrorCode::concurrency_conflict;
    return ErrorCode::invalid_state;
  }

  NetResult<void> finish(TcpState started, TcpState done) {
    if (state_ != started) return fail(ErrorCode::not_in_progress);
    state_ = done;
    return ok();
  }

  Streams streams(Caller& caller, const std::shared_ptr<SocketFd>& fd) const {
    const auto& io = handles_->io;
    return {io->streams->input_stream.make_own(caller.store(), std::make_unique<TcpInput>(io, fd)),
            io->streams->output_stream.make_own(caller.store(), std::make_unique<TcpOutput>(io, fd))};
  }

  std::shared_ptr<const SocketHandles> handles_;
  std::shared_ptr<SocketFd> fd_;
  net::IpAddressFamily family_;
  std::shared_ptr<TcpState> shared_state_;  // shared with the socket's pollables
  TcpState& state_;
  uint64_t backlog_ = 128;
};

}  // namespace

NetResult<std::unique_ptr<tcp::TcpSocket>> new_tcp_socket(std::shared_ptr<const SocketHandles> handles,
                                                          net::IpAddressFamily family) {
  return new_socket<tcp::TcpSocket, TcpSocket>(std::move(handles), family, SOCK_STREAM);
}

}  // namespace cmhost::wasi::detail
