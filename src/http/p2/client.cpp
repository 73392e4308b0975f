// wasi:http/outgoing-handler@0.2.x: one connection per request, plain
// HTTP/1.1, on the guest's own thread. A 0.2 guest waits in wasi:io
// (poll, blocking reads and writes), not in an event loop, so the call is a
// non-blocking socket that moves on whenever the guest looks: a pollable
// asked whether it is ready, future-incoming-response.get, a body's read or
// write. The name lookup blocks the guest's thread (a 0.2 guest's call
// blocks anyway). The request options' timeouts bound the connect, the
// first byte of the response and the gaps between bytes. Refused with
// HTTP-request-denied unless HttpConfig allows it.
#include "client.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http/destination.hpp"
#include "http/methods.hpp"
#include "http/socket_io.hpp"
#include "wasi/core/clocks.hpp"
#include "wasi/core/name_lookup.hpp"
#include "wasi/p2/common.hpp"

namespace cmhost::http::p2 {

namespace {

namespace outgoing_handler = ::cmhost::wasi::bindings::wasi::http::outgoing_handler;
using abi::typed::Result;
using Clock = std::chrono::steady_clock;
using ResponseResult = Result<Result<Own<types::IncomingResponse>, ErrorCode>, void>;

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kBufferBytes = 256 * 1024;
// Without a request option: as long as a client would wait by default.
constexpr std::chrono::seconds kDefaultConnectTimeout{600};

ErrorCode connect_error(int error) {
  switch (error) {
    case ECONNREFUSED: return types::error_code::ConnectionRefused{};
    case ETIMEDOUT: return types::error_code::ConnectionTimeout{};
    case ENETUNREACH:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETDOWN: return types::error_code::DestinationUnavailable{};
    case EADDRNOTAVAIL: return types::error_code::DestinationIPUnroutable{};
    case ECONNRESET: return types::error_code::ConnectionTerminated{};
    default: return types::error_code::InternalError{std::string(std::strerror(error))};
  }
}

std::optional<Clock::time_point> after(std::optional<uint64_t> nanoseconds) {
  if (!nanoseconds) return std::nullopt;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(*nanoseconds));
}

// One request, from the connect to the response's last byte.
class Call final : public std::enable_shared_from_this<Call> {
 public:
  enum class State { connecting, open, failed, done };

  Call(std::vector<wasi::core::SockAddr> addresses, uint16_t port, RequestTimeouts timeouts)
      : addresses_(std::move(addresses)), port_(port), timeouts_(timeouts) {}
  ~Call() {
    if (fd_ >= 0) ::close(fd_);
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  // A call that failed before it started: its future says why.
  static std::shared_ptr<Call> refused(ErrorCode why) {
    auto call = std::make_shared<Call>(std::vector<wasi::core::SockAddr>{}, 0, RequestTimeouts{});
    call->fail(std::move(why));
    return call;
  }

  // Starts connecting; the head (and what the body wrote) goes out once connected.
  void start(std::string head, bool body_follows) {
    out_ = std::move(head);
    request_open_ = body_follows;
    connect_next();
  }

  // Moves on as far as it can now, without waiting.
  void advance() {
    if (state_ == State::connecting) check_connected();
    if (state_ != State::open) return;
    if (!out_.empty() && send_pending(fd_, out_) == SocketState::closed && !parser_.done())
      return fail(types::error_code::ConnectionTerminated{});
    if (wants_input()) read_available();
    if (state_ != State::open) return;
    const auto now = Clock::now();
    if (!got_byte_ && first_byte_deadline_ && now >= *first_byte_deadline_)
      return fail(types::error_code::ConnectionReadTimeout{});
    if (got_byte_ && !parser_.done() && between_deadline_ && now >= *between_deadline_)
      return fail(types::error_code::ConnectionReadTimeout{});
  }

  // What the guest's wait is on: the socket, for what it lacks now.
  int fd() const { return fd_; }
  short events() const {
    if (state_ == State::connecting) return POLLOUT;
    if (state_ != State::open) return 0;
    short events = 0;
    if (!out_.empty()) events |= POLLOUT;
    if (wants_input()) events |= POLLIN;
    return events;
  }

  State state() const { return state_; }
  const ErrorCode& error() const { return *error_; }
  bool head_ready() const { return parser_.head_done(); }
  wire::ResponseParser& parser() { return parser_; }

  // The request's body.
  size_t room() const {
    if (ended()) return kBufferBytes;
    if (!request_open_) return 0;
    return out_.size() >= kBufferBytes ? 0 : kBufferBytes - out_.size();
  }
  // Once the call ended (failed, or answered before it read the whole
  // request), what the guest still writes of the body is dropped: the
  // failure is the response's to tell, as when wasmtime's body channel
  // took the bytes before its request failed (a guest's runtime may not
  // expect a write to fail then).
  bool ended() const { return state_ == State::failed || state_ == State::done; }
  bool write(std::string_view framed) {
    if (ended()) return true;
    out_.append(framed);
    advance();
    return state_ != State::failed;
  }
  void end_request(std::string_view framed) {
    out_.append(framed);
    request_open_ = false;
    advance();
  }
  void abandon_request() {
    if (request_open_) fail(types::error_code::HTTPRequestBodySize{std::nullopt});
  }

 private:
  // More of the response, while the guest has not left too much unread.
  bool wants_input() const { return !parser_.done() && (!parser_.head_done() || parser_.body().size() < kBufferBytes); }

  void connect_next() {
    if (next_address_ >= addresses_.size()) return fail(connect_error(last_error_));
    wasi::core::SockAddr address = addresses_[next_address_++];
    const uint16_t port = htons(port_);
    if (address.family() == AF_INET6)
      reinterpret_cast<sockaddr_in6*>(&address.storage)->sin6_port = port;
    else
      reinterpret_cast<sockaddr_in*>(&address.storage)->sin_port = port;
    if (fd_ >= 0) ::close(fd_);
    fd_ = ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail(types::error_code::InternalError{std::string(std::strerror(errno))});
    const int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    connect_deadline_ = after(timeouts_.connect).value_or(Clock::now() + kDefaultConnectTimeout);
    if (::connect(fd_, address.get(), address.length) == 0) return opened();
    if (errno != EINPROGRESS) {
      last_error_ = errno;
      return connect_next();
    }
    state_ = State::connecting;
  }

  void check_connected() {
    if (!wasi::core::wait_for(fd_, POLLOUT, 0)) {
      if (Clock::now() >= connect_deadline_) fail(types::error_code::ConnectionTimeout{});
      return;
    }
    int error = 0;
    socklen_t size = sizeof error;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &size);
    if (!error) return opened();
    last_error_ = error;
    connect_next();
  }

  void opened() {
    state_ = State::open;
    first_byte_deadline_ = after(timeouts_.first_byte);
  }

  void read_available() {
    bool got = false;
    const bool ended = receive_available(fd_, in_, kReadChunk, got) == SocketState::closed;
    if (got) {
      got_byte_ = true;
      between_deadline_ = after(timeouts_.between_bytes);
    }
    std::optional<wire::ParseFailure> failure;
    const size_t taken = parser_.feed(in_, failure);
    in_.erase(0, taken);
    if (!failure && ended && !parser_.done()) parser_.feed_end(failure);
    if (failure)
      return fail(parser_.head_done() ? ErrorCode(types::error_code::HTTPResponseIncomplete{})
                                      : ErrorCode(types::error_code::HTTPProtocolError{}));
    if (parser_.done()) {
      state_ = State::done;
      ::close(fd_);
      fd_ = -1;
    } else if (ended) {
      fail(types::error_code::HTTPResponseIncomplete{});
    }
  }

  void fail(ErrorCode why) {
    if (state_ == State::failed || state_ == State::done) return;
    state_ = State::failed;
    error_ = std::move(why);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::vector<wasi::core::SockAddr> addresses_;
  size_t next_address_ = 0;
  int last_error_ = ECONNREFUSED;
  uint16_t port_;
  RequestTimeouts timeouts_;
  int fd_ = -1;
  State state_ = State::connecting;
  std::optional<ErrorCode> error_;
  std::string out_, in_;
  bool request_open_ = false;
  wire::ResponseParser parser_{wire::ParserLimits{}};
  bool got_byte_ = false;
  Clock::time_point connect_deadline_{};
  std::optional<Clock::time_point> first_byte_deadline_, between_deadline_;
};

// Ready when the call has what `done` asks for, or failed.
template <class Done>
class CallPollable final : public wasi::detail::FdPollable {
 public:
  CallPollable(std::shared_ptr<Call> call, Done done)
      : FdPollable(call->fd(), POLLIN, call), call_(std::move(call)), done_(std::move(done)) {}
  bool ready(Caller&) override {
    call_->advance();
    return call_->state() == Call::State::failed || done_(*call_);
  }
  int fd() const override { return call_->fd(); }
  short events() const override { return call_->fd() >= 0 ? call_->events() : 0; }

 private:
  std::shared_ptr<Call> call_;
  Done done_;
};

// A pollable on the call, or one ready now when its socket is gone (the
// call ended: whatever waits on it is settled).
template <class Done>
std::unique_ptr<io::poll::Pollable> pollable_on(const std::shared_ptr<Call>& call, Done done) {
  if (call->fd() < 0) return std::make_unique<wasi::detail::Pollable>();
  return std::make_unique<CallPollable<Done>>(call, std::move(done));
}

// The request's body, framed onto the call.
class RequestSink final : public BodySink {
 public:
  RequestSink(std::shared_ptr<Call> call, bool chunked, std::optional<uint64_t> declared)
      : call_(std::move(call)), chunked_(chunked), declared_(declared) {}
  size_t room() override {
    call_->advance();
    return call_->room();
  }
  bool write(std::string_view bytes) override {
    written_ += bytes.size();
    if (declared_ && written_ > *declared_) {
      call_->abandon_request();
      return true;
    }
    if (!chunked_) return call_->write(bytes);
    std::string framed;
    wire::append_chunk(framed, bytes);
    return call_->write(framed);
  }
  void finish(std::vector<wire::Field> trailers) override {
    if (declared_ && written_ != *declared_) return call_->abandon_request();
    std::string last;
    if (chunked_) wire::append_last_chunk(last, trailers);
    call_->end_request(last);
  }
  void abandon(std::string) override { call_->abandon_request(); }
  bool gone() override { return false; }
  int wait_fd() override { return call_->fd(); }
  short wait_events() override { return call_->fd() >= 0 ? call_->events() : 0; }

 private:
  std::shared_ptr<Call> call_;
  bool chunked_;
  std::optional<uint64_t> declared_;
  uint64_t written_ = 0;
};

// The response's body as the call parses it.
class ResponseSource final : public BodySource {
 public:
  explicit ResponseSource(std::shared_ptr<Call> call) : call_(std::move(call)) {}
  Read read(size_t max, std::string& out) override {
    call_->advance();
    std::string& body = call_->parser().body();
    if (!body.empty()) {
      const size_t n = std::min(max, body.size());
      out.append(body, 0, n);
      body.erase(0, n);
      return n ? Read::bytes : Read::pending;
    }
    if (call_->state() == Call::State::failed) return Read::failed;
    if (call_->state() == Call::State::done) return Read::ended;
    return Read::pending;
  }
  bool readable() override {
    call_->advance();
    return !call_->parser().body().empty() || call_->state() == Call::State::failed ||
           call_->state() == Call::State::done;
  }
  int wait_fd() const override { return call_->fd(); }
  short wait_events() const override { return call_->fd() >= 0 ? POLLIN : 0; }
  std::vector<wire::Field> trailers() const override { return call_->parser().trailers(); }
  ErrorCode failure() const override { return call_->error(); }

 private:
  std::shared_ptr<Call> call_;
};

class HostIncomingResponse final : public types::IncomingResponse {
 public:
  HostIncomingResponse(std::shared_ptr<const TypesContext> context, std::shared_ptr<Call> call)
      : context_(std::move(context)), call_(std::move(call)) {}
  types::StatusCode status(Caller&) override { return static_cast<types::StatusCode>(call_->parser().status()); }
  std::unique_ptr<types::Headers> headers(Caller&) override {
    FieldList list(context_->forbidden);
    for (const auto& [name, value] : call_->parser().fields()) list.add_from_host(name, value);
    return make_immutable_fields(std::move(list));
  }
  Result<Own<types::IncomingBody>, void> consume(Caller& caller) override {
    if (consumed_) return Result<Own<types::IncomingBody>, void>::err();
    consumed_ = true;
    return Result<Own<types::IncomingBody>, void>::ok(
        make_incoming_body(caller.store(), context_, std::make_shared<ResponseSource>(call_)));
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<Call> call_;
  bool consumed_ = false;
};

class HostFutureIncomingResponse final : public types::FutureIncomingResponse {
 public:
  HostFutureIncomingResponse(std::shared_ptr<const TypesContext> context, std::shared_ptr<Call> call)
      : context_(std::move(context)), call_(std::move(call)) {}
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return pollable_on(call_, [](Call& call) { return call.head_ready(); });
  }
  std::optional<ResponseResult> get(Caller& caller) override {
    if (taken_) return ResponseResult::err();
    call_->advance();
    using Inner = Result<Own<types::IncomingResponse>, ErrorCode>;
    if (call_->head_ready()) {
      taken_ = true;
      return ResponseResult::ok(Inner::ok(context_->resources->incoming_response.make_own(
          caller.store(), std::make_unique<HostIncomingResponse>(context_, call_))));
    }
    if (call_->state() == Call::State::failed) {
      taken_ = true;
      return ResponseResult::ok(Inner::err(call_->error()));
    }
    return std::nullopt;
  }

 private:
  std::shared_ptr<const TypesContext> context_;
  std::shared_ptr<Call> call_;
  bool taken_ = false;
};

class ClientHost final : public outgoing_handler::Host {
 public:
  explicit ClientHost(std::shared_ptr<const TypesContext> types) : types_(std::move(types)) {}

  Result<Own<types::FutureIncomingResponse>, ErrorCode> handle(
      Caller& caller, Own<types::OutgoingRequest> handle, std::optional<Own<types::RequestOptions>> options) override {
    using R = Result<Own<types::FutureIncomingResponse>, ErrorCode>;
    Store& store = caller.store();
    OutgoingRequestParts request = take_outgoing_request(store, *types_, handle);
    RequestTimeouts timeouts;
    if (options) timeouts = take_request_options(store, *types_, *options);
    // The request is the host's now: a body the guest still writes goes
    // nowhere. Every failure comes through the future, as a network's
    // would: guests' runtimes (StarlingMonkey's fetch) handle that path.
    const auto refuse = [&](ErrorCode why) {
      request.body->attach(std::make_shared<NowhereSink>());
      return R::ok(types_->resources->future_incoming_response.make_own(
          store, std::make_unique<HostFutureIncomingResponse>(types_, Call::refused(std::move(why)))));
    };
    const HttpConfig& config = types_->config;
    if (!config.allow_outgoing) return refuse(types::error_code::HTTPRequestDenied{});
    if (request.scheme && std::holds_alternative<types::scheme::HTTPS>(*request.scheme))
      return refuse(types::error_code::InternalError{
          std::string("cmhost's HTTP client speaks plain HTTP: https needs a TLS proxy")});
    if (request.scheme && std::holds_alternative<types::scheme::Other>(*request.scheme))
      return refuse(types::error_code::HTTPProtocolError{});
    if (!request.authority) return refuse(types::error_code::HTTPRequestURIInvalid{});
    const auto destination = parse_authority(*request.authority);
    if (!destination) return refuse(types::error_code::HTTPRequestURIInvalid{});
    if (!host_allowed(config, *request.authority, destination->host))
      return refuse(types::error_code::HTTPRequestDenied{});

    std::vector<wasi::core::SockAddr> addresses;
    if (auto literal = wasi::core::parse_ip_literal(destination->host)) {
      addresses.push_back(*literal);
    } else {
      wasi::core::Resolution lookup = wasi::core::resolve_host(destination->host);
      if (lookup.status != 0 && lookup.status != EAI_NONAME && lookup.status != EAI_NODATA)
        return refuse(types::error_code::DNSError{
            types::DNSErrorPayload{.rcode = std::string(gai_strerror(lookup.status)), .info_code = std::nullopt}});
      if (lookup.addresses.empty())
        return refuse(types::error_code::DNSError{
            types::DNSErrorPayload{.rcode = std::string("address not available"), .info_code = std::nullopt}});
      addresses = std::move(lookup.addresses);
    }

    const std::string method = name_of_method<types::Method, types::method::Other>(request.method);
    auto head = request_head_of(*request.authority, request.headers.entries(), method, request.body_taken);
    if (!head) return refuse(types::error_code::HTTPRequestLengthRequired{});
    auto call = std::make_shared<Call>(std::move(addresses), destination->port, timeouts);
    call->start(wire::request_head(method, request.path_with_query.value_or("/"), head->fields, head->framing,
                                   head->declared),
                request.body_taken);
    if (request.body_taken)
      request.body->attach(std::make_shared<RequestSink>(call, head->framing == wire::Framing::chunked, head->declared));
    if (method == "HEAD") call->parser().skip(true);
    return R::ok(types_->resources->future_incoming_response.make_own(
        store, std::make_unique<HostFutureIncomingResponse>(types_, std::move(call))));
  }

 private:
  // Where a refused request's body goes: nowhere, quietly (see Call::write).
  class NowhereSink final : public BodySink {
   public:
    size_t room() override { return kBufferBytes; }
    bool write(std::string_view) override { return true; }
    void finish(std::vector<wire::Field>) override {}
    void abandon(std::string) override {}
    bool gone() override { return false; }
    int wait_fd() override { return -1; }
    short wait_events() override { return 0; }
  };

  std::shared_ptr<const TypesContext> types_;
};

}  // namespace

void add_client(Linker& linker, std::shared_ptr<const TypesContext> types) {
  outgoing_handler::add_to_linker(linker, std::make_shared<ClientHost>(std::move(types)));
}

}  // namespace cmhost::http::p2
