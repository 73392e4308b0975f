// wasi:http/client@0.3.0: outgoing requests over plain HTTP/1.1, one
// connection per request, on the store's reactor like the server: the
// name lookup on the blocking pool, a non-blocking connect, the request's
// head and body written as the guest's body stream gives them, the
// response's head parsed by Beast (send completes then) and its body
// handed to the guest as it arrives. The request options' timeouts
// bound the connect, the first byte of the response and the gaps between
// bytes. Refused with HTTP-request-denied unless HttpConfig allows it.
#include "client.hpp"

#include <fcntl.h>
#include <fmt/core.h>
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

#include "http/p3/bindings.hpp"
#include "http/destination.hpp"
#include "http/p3/bodies.hpp"
#include "http/socket_io.hpp"
#include "wasi/core/name_lookup.hpp"

namespace cmhost::http::p3 {

namespace {

namespace client = bindings::p3::wasi::http::client;
using SendResult = abi::typed::Result<Own<types::Response>, ErrorCode>;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kBodyBuffer = 256 * 1024;
// Without a request option: as long as a client would wait by default.
constexpr std::chrono::seconds kDefaultConnectTimeout{600};

std::optional<Clock::duration> timeout_of(std::optional<uint64_t> nanoseconds) {
  if (!nanoseconds) return std::nullopt;
  return std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(*nanoseconds));
}

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
    default: return internal_error(std::strerror(error));
  }
}

// One request in flight, from the lookup to the response's last byte.
class Outgoing : public std::enable_shared_from_this<Outgoing> {
 public:
  Outgoing(Store& store, std::shared_ptr<const TypesContext> types, std::unique_ptr<HostRequest> request,
           TypedCompletion<SendResult> completion)
      : store_(store), types_(std::move(types)), request_(std::move(request)), completion_(std::move(completion)) {}
  ~Outgoing() {
    cancel_waits();
    if (fd_ >= 0) ::close(fd_);
  }

  void start(Destination destination) {
    destination_ = std::move(destination);
    if (request_->options) {
      connect_timeout_ = timeout_of(request_->options->connect_timeout);
      first_byte_timeout_ = timeout_of(request_->options->first_byte_timeout);
      between_bytes_timeout_ = timeout_of(request_->options->between_bytes_timeout);
    }
    auto self = shared_from_this();
    // The lookup the WASI versions' name lookups use: literals without the
    // resolver, names on the blocking pool.
    auto lookup = std::make_shared<wasi::core::Resolution>();
    store_.run_blocking(
        [lookup, host = destination_.host] {
          if (auto literal = wasi::core::parse_ip_literal(host))
            lookup->addresses.push_back(*literal);
          else
            *lookup = wasi::core::resolve_host(host);
        },
        [self, lookup](std::exception_ptr) {
          if (lookup->status != 0 && lookup->status != EAI_NONAME && lookup->status != EAI_NODATA)
            return self->fail(types::error_code::DNSError{
                types::DNSErrorPayload{.rcode = std::string(gai_strerror(lookup->status)), .info_code = std::nullopt}});
          if (lookup->addresses.empty())
            return self->fail(types::error_code::DNSError{
                types::DNSErrorPayload{.rcode = std::string("address not available"), .info_code = std::nullopt}});
          self->addresses_ = std::move(lookup->addresses);
          self->connect_next();
        });
  }

 private:
  void connect_next() {
    if (next_address_ >= addresses_.size()) return fail(connect_error(last_connect_error_));
    wasi::core::SockAddr address = addresses_[next_address_++];
    const uint16_t port = htons(destination_.port);
    if (address.family() == AF_INET6)
      reinterpret_cast<sockaddr_in6*>(&address.storage)->sin6_port = port;
    else
      reinterpret_cast<sockaddr_in*>(&address.storage)->sin_port = port;
    fd_ = ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail(internal_error(std::strerror(errno)));
    const int on = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (::connect(fd_, address.get(), address.length) == 0) return connected();
    if (errno != EINPROGRESS) return retry(errno);
    auto self = shared_from_this();
    write_wait_ = store_.when_ready(fd_, POLLOUT, [self](short) {
      self->write_wait_.reset();
      self->cancel_timer();
      int error = 0;
      socklen_t size = sizeof error;
      ::getsockopt(self->fd_, SOL_SOCKET, SO_ERROR, &error, &size);
      if (error) return self->retry(error);
      self->connected();
    });
    arm_timer(connect_timeout_.value_or(kDefaultConnectTimeout), types::error_code::ConnectionTimeout{});
  }

  void retry(int error) {
    last_connect_error_ = error;
    ::close(fd_);
    fd_ = -1;
    connect_next();
  }

  void connected() {
    const std::string target = request_->path_with_query.value_or("/");
    const std::string method = method_name(request_->method);
    const bool has_body = request_->body.contents.has_value() || request_->body.produce;
    const auto head = request_head_of(*request_->authority, request_->headers.entries(), method, has_body);
    if (!head) return fail(types::error_code::HTTPRequestLengthRequired{});
    const wire::Framing framing = head->framing;
    const std::optional<uint64_t> declared = head->declared;
    out_ = wire::request_head(method, target, head->fields, framing, declared);
    head_request_ = method == "HEAD";
    std::weak_ptr<Outgoing> weak = weak_from_this();
    OutgoingBody::Sink sink{
        .backlog = [weak] { auto self = weak.lock(); return self ? self->out_.size() : size_t{0}; },
        .write = [weak](std::string_view framed) {
          if (auto self = weak.lock()) {
            self->out_.append(framed);
            self->send_out();
          }
        },
        .done = [weak](TransmitResult outcome) {
          if (auto self = weak.lock()) self->request_sent(std::move(outcome));
        }};
    request_body_ = std::make_shared<OutgoingBody>(store_, types_, std::move(request_->body), true, framing, declared,
                                                   std::move(sink));
    request_body_->resume();
    flush();
    arm_read();
    if (first_byte_timeout_) arm_timer(*first_byte_timeout_, types::error_code::ConnectionReadTimeout{});
  }

  void request_sent(TransmitResult outcome) {
    const bool ok = outcome.is_ok();
    settle_transmit(store_, request_->transmitted, outcome);
    if (!ok) fail(outcome.error());
    else flush();
  }

  void flush() {
    send_out();
    if (out_.empty() && request_body_ && !request_body_->finished()) request_body_->resume();
  }

  // Sends what the socket takes now, waiting for POLLOUT for the rest.
  // Only I/O: safe inside a body's copy step.
  void send_out() {
    if (fd_ < 0) return;
    const SocketState state = send_pending(fd_, out_);
    if (state == SocketState::would_block && !write_wait_)
      write_wait_ = store_.when_ready(fd_, POLLOUT, [self = shared_from_this()](short) {
        self->write_wait_.reset();
        self->flush();
      });
    // The server closed: what it answered may still be there to read.
    if (state == SocketState::closed) out_.clear();
  }

  void arm_read() {
    if (read_wait_ || fd_ < 0) return;
    read_wait_ = store_.when_ready(fd_, POLLIN, [self = shared_from_this()](short) {
      self->read_wait_.reset();
      self->on_readable();
    });
  }

  void on_readable() {
    bool got = false;
    const bool ended = receive_available(fd_, in_, kReadChunk, got) == SocketState::closed;
    if (!in_.empty() && between_bytes_timeout_ && completed_)
      arm_timer(*between_bytes_timeout_, types::error_code::ConnectionReadTimeout{});
    std::optional<wire::ParseFailure> failure;
    for (;;) {
      if (!parser_) {
        parser_.emplace(wire::ParserLimits{});
        if (head_request_) parser_->skip(true);
      }
      const size_t taken = parser_->feed(in_, failure);
      in_.erase(0, taken);
      // An interim response (100 Continue, 103 Early Hints) comes before
      // the response: passed over, as hyper does (101 is no such case:
      // no upgrade was asked for).
      if (failure || !parser_->head_done() || completed_ || !interim(parser_->status())) break;
      parser_.reset();
      if (in_.empty()) break;
    }
    if (!parser_) {
      if (ended) return fail(types::error_code::HTTPResponseIncomplete{});
      return arm_read();
    }
    if (!failure && ended) parser_->feed_end(failure);
    if (failure) return fail(parser_->head_done() ? ErrorCode(types::error_code::HTTPResponseIncomplete{})
                                                  : ErrorCode(types::error_code::HTTPProtocolError{}));
    if (parser_->head_done() && !completed_) respond();
    if (response_body_) {
      response_body_->add(parser_->body());
      parser_->body().clear();
      if (parser_->done()) return finish();
    }
    if (ended) return fail(types::error_code::HTTPResponseIncomplete{});
    if (!response_body_ || response_body_->buffered() < kBodyBuffer) return arm_read();
    // The body's reader is behind: reading goes on once it takes some. No
    // wait holds this meanwhile, and waiting on the reader is no silence of
    // the server's.
    paused_ = shared_from_this();
    cancel_timer();
  }

  void resume_reading() {
    if (fd_ < 0 || !paused_) return;
    const auto self = std::move(paused_);
    arm_read();
    if (between_bytes_timeout_) arm_timer(*between_bytes_timeout_, types::error_code::ConnectionReadTimeout{});
  }

  static bool interim(unsigned status) { return status >= 100 && status < 200 && status != 101; }

  // The response's head arrived: send returns it; its body follows.
  void respond() {
    cancel_timer();
    FieldList headers(types_->forbidden);
    for (const auto& [name, value] : parser_->fields()) headers.add_from_host(name, value);
    headers.make_immutable();
    response_body_ = std::make_shared<IncomingBody>(store_, types_);
    std::weak_ptr<Outgoing> weak = weak_from_this();
    response_body_->on_taken = [weak] {
      if (auto self = weak.lock()) self->resume_reading();
    };
    auto response = std::make_unique<HostResponse>(std::move(headers), response_body_->body());
    response->status = static_cast<uint16_t>(parser_->status());
    completed_ = true;
    completion_.complete(SendResult::ok(types_->resources->response.make_own(store_, std::move(response))));
    if (between_bytes_timeout_) arm_timer(*between_bytes_timeout_, types::error_code::ConnectionReadTimeout{});
  }

  void finish() {
    response_body_->finish(parser_->trailers());
    close();
  }

  void fail(ErrorCode why) {
    settle_transmit(store_, request_->transmitted, TransmitResult::err(why));
    if (!completed_) {
      completed_ = true;
      completion_.complete(SendResult::err(std::move(why)));
    } else if (response_body_) {
      response_body_->fail(std::move(why));
    }
    close();
  }

  void arm_timer(Clock::duration after, ErrorCode why) {
    cancel_timer();
    timer_ = store_.when_time(Clock::now() + after, [self = shared_from_this(), why] {
      self->timer_.reset();
      self->fail(why);
    });
  }
  void cancel_timer() {
    if (timer_) store_.cancel_wait(*timer_);
    timer_.reset();
  }
  void cancel_waits() {
    cancel_timer();
    for (auto* wait : {&read_wait_, &write_wait_})
      if (*wait) {
        store_.cancel_wait(**wait);
        wait->reset();
      }
  }
  void close() {
    cancel_waits();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    // Let go from the loop: this may be what a caller is running in.
    if (paused_) store_.when_time(Clock::now(), [done = std::move(paused_)] {});
  }

  Store& store_;
  std::shared_ptr<const TypesContext> types_;
  std::unique_ptr<HostRequest> request_;
  TypedCompletion<SendResult> completion_;
  Destination destination_;
  std::vector<wasi::core::SockAddr> addresses_;
  size_t next_address_ = 0;
  int last_connect_error_ = ECONNREFUSED;
  int fd_ = -1;
  std::string out_, in_;
  bool head_request_ = false;
  bool completed_ = false;
  std::optional<wire::ResponseParser> parser_;
  std::shared_ptr<OutgoingBody> request_body_;
  std::shared_ptr<IncomingBody> response_body_;
  // Set while reading waits for the body's reader: what keeps this alive.
  std::shared_ptr<Outgoing> paused_;
  std::optional<Store::WaitId> read_wait_, write_wait_, timer_;
  std::optional<Clock::duration> connect_timeout_, first_byte_timeout_, between_bytes_timeout_;
};

class ClientHost final : public client::Host {
 public:
  ClientHost(HttpConfig config, std::shared_ptr<const TypesContext> types)
      : config_(std::move(config)), types_(std::move(types)) {}

  void send(Caller& caller, Own<types::Request> handle, TypedCompletion<SendResult> completion) override {
    Store& store = caller.store();
    // The request is the host's now, sent or not.
    auto request = take_request(store, *types_, handle);
    const auto refuse = [&](ErrorCode why) {
      settle_transmit(store, request->transmitted, TransmitResult::err(why));
      completion.complete(SendResult::err(std::move(why)));
    };
    if (!config_.allow_outgoing) return refuse(types::error_code::HTTPRequestDenied{});
    if (request->scheme && std::holds_alternative<types::scheme::HTTPS>(*request->scheme))
      return refuse(internal_error("cmhost's HTTP client speaks plain HTTP: https needs a TLS proxy"));
    if (request->scheme && std::holds_alternative<types::scheme::Other>(*request->scheme))
      return refuse(types::error_code::HTTPProtocolError{});
    if (!request->authority) return refuse(types::error_code::HTTPRequestURIInvalid{});
    const auto destination = parse_authority(*request->authority);
    if (!destination) return refuse(types::error_code::HTTPRequestURIInvalid{});
    if (!host_allowed(config_, *request->authority, destination->host))
      return refuse(types::error_code::HTTPRequestDenied{});
    std::make_shared<Outgoing>(store, types_, std::move(request), std::move(completion))->start(*destination);
  }

 private:
  HttpConfig config_;
  std::shared_ptr<const TypesContext> types_;
};

}  // namespace

void add_client(Linker& linker, const HttpConfig& config, std::shared_ptr<const TypesContext> types) {
  auto host = std::make_shared<ClientHost>(config, std::move(types));
  client::add_to_linker(linker, host);
  // A middleware's imported handler, its next hop: the network, as
  // client.send (and wasmtime's), unless the embedder links another
  // component's instance in under the interface's name
  // (Linker::define_instance), which the link prefers.
  namespace handler = bindings::p3::wasi::http::handler;
  handler::add_to_linker(linker, std::make_shared<handler::Host>());
  linker.func_wrap_async("wasi:http/handler@0.3.0#handle",
                         [host](Caller& caller, Own<types::Request> request, TypedCompletion<SendResult> completion) {
                           host->send(caller, request, std::move(completion));
                         });
}

}  // namespace cmhost::http::p3
