// The HTTP/1.1 server of cmhost::http (cmhost/http.hpp): one listening
// socket and its connections, all non-blocking, waiting in the store's
// reactor (Store::when_ready, when_time), so guests and the network share
// one loop on one thread. Each request becomes a wasi:http request handed
// to the service's handler; its body reaches the guest as it arrives and
// as the guest reads (the connection stops reading while the guest lags),
// and the response goes out as the guest writes it, chunked with trailers
// unless it declared a Content-Length. Requests on one connection are
// answered in order: a pipelined request is parsed once the previous
// response is out.
#include "cmhost/http.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <iterator>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/error.hpp"
#include "http/destination.hpp"
#include "http/epoch_ticker.hpp"
#include "http/metrics.hpp"
#include "http/p2/exchange.hpp"
#include "http/p2/proxy.hpp"
#include "http/p2/types.hpp"
#include "http/p3/bodies.hpp"
#include "http/p3/types.hpp"
#include "http/socket_io.hpp"
#include "http/wire.hpp"

namespace cmhost::http {

namespace {

using p3::ErrorCode;
using p3::Future;
using p3::Own;
using p3::Stream;
using p3::TrailersResult;
using p3::TransmitResult;
namespace types = p3::types;
using HandleResult = abi::typed::Result<Own<types::Response>, ErrorCode>;
using HandleFunc = TypedAsyncFunc<HandleResult(Own<types::Request>)>;
using Clock = std::chrono::steady_clock;

constexpr size_t kReadChunk = 64 * 1024;
// How much of a body the server holds for a guest that has not read it yet.
constexpr size_t kBodyBuffer = 256 * 1024;
// A response's bytes buffered up to this go out at the end of the loop's turn.
constexpr size_t kSendAtOnce = 16 * 1024;

// SIGTERM and SIGINT as a readable pipe, for the reactor to wait on.
int signal_pipe[2] = {-1, -1};
void on_stop_signal(int) {
  const int saved = errno;
  const char byte = 1;
  (void)!::write(signal_pipe[1], &byte, 1);
  errno = saved;
}

// An error-code as the WIT names it (payloads aside, but internal-error's message).
std::string describe_error(const ErrorCode& code) {
  static constexpr const char* names[] = {
      "DNS-timeout", "DNS-error", "destination-not-found", "destination-unavailable", "destination-IP-prohibited",
      "destination-IP-unroutable", "connection-refused", "connection-terminated", "connection-timeout",
      "connection-read-timeout", "connection-write-timeout", "connection-limit-reached", "TLS-protocol-error",
      "TLS-certificate-error", "TLS-alert-received", "HTTP-request-denied", "HTTP-request-length-required",
      "HTTP-request-body-size", "HTTP-request-method-invalid", "HTTP-request-URI-invalid",
      "HTTP-request-URI-too-long", "HTTP-request-header-section-size", "HTTP-request-header-size",
      "HTTP-request-trailer-section-size", "HTTP-request-trailer-size", "HTTP-response-incomplete",
      "HTTP-response-header-section-size", "HTTP-response-header-size", "HTTP-response-body-size",
      "HTTP-response-trailer-section-size", "HTTP-response-trailer-size", "HTTP-response-transfer-coding",
      "HTTP-response-content-coding", "HTTP-response-timeout", "HTTP-upgrade-failed", "HTTP-protocol-error",
      "loop-detected", "configuration-error", "internal-error"};
  static_assert(std::size(names) == std::variant_size_v<ErrorCode>, "a name per case of error-code");
  if (const auto* internal = std::get_if<types::error_code::InternalError>(&code))
    return "internal-error" + (internal->value ? ": " + *internal->value : std::string());
  return names[code.index()];
}

class Connection;

}  // namespace

class Server::Impl {
 public:
  Impl(const Engine& engine, Store& store, const Linker& linker, const Component& component, const HttpConfig& http,
       ServeConfig config);
  ~Impl();

  const Engine& engine;
  Store& store;  // the loop's: connections, timers; the services' stores run in it
  // This server while it lives, for callbacks that may outlive it.
  std::shared_ptr<Impl*> alive = std::make_shared<Impl*>(this);
  const Linker& linker;
  Component component;
  ServeConfig config;
  ServeMetrics::Counters* counters = nullptr;  // config.metrics', when counted
  std::shared_ptr<p3::TypesContext> types;
  // With a request timeout on a metering engine: what interrupts guest
  // code that runs past it. Outlives the proxy's threads.
  std::shared_ptr<EpochTicker> ticker;
  // A wasi:http@0.2 proxy's requests run here (none for a 0.3 service).
  std::optional<p2::ProxyRunner> proxy;
  uint16_t port = 0;
  std::string host;

  void run();
  void stop();

  // A 0.3 service's instance in a store of its own, driven by the loop's
  // store (Store::drive), and gone with it once retired and idle.
  struct Service {
    ~Service() {
      if (metrics) --MetricsAccess::counters(*metrics).instances_live;
    }
    std::unique_ptr<Store> store;  // first: destroyed after what lives in it
    std::optional<Instance> instance;
    std::optional<HandleFunc> handler;
    std::shared_ptr<ServeMetrics> metrics;  // counted there while it lives
    size_t served = 0;     // requests given to it
    size_t in_flight = 0;  // of them, not ended yet
    bool retired = false;  // takes no new request
    // By the epoch their timeout passes at: the earliest is the store's epoch deadline.
    std::multiset<uint64_t> deadlines;
    std::optional<Store::WaitId> idle_timer;  // in the loop's store
  };
  // The instance a new request goes to: one with room, else a new one.
  std::shared_ptr<Service> service_for_request();
  // Takes no new request; goes once its requests have ended.
  void retire(const std::shared_ptr<Service>& service, const std::string& why);
  void retire_all(const std::string& why);
  // A trap in the service's guests (or its interruption): its requests fail.
  void service_trapped(const std::shared_ptr<Service>& service, const Error& trap);
  // A big component's optimized code, once its background build is done
  // (Component::with_faster_code): the instances made from then on run it.
  // Looked for at most once a second, as requests come.
  void look_for_faster_code();
  void warn(const std::string& line) const {
    if (config.warn) config.warn(line);
  }
  bool stopping() const { return stopping_; }
  int stop_fd() const { return stop_fd_; }
  // Requests in the guest, against max_concurrent_requests.
  bool has_room() const {
    return !recovering_ && in_flight_ < config.max_concurrent_requests && (!proxy || proxy->live() < config.max_concurrent_requests);
  }
  // A request enters the guest (a 0.3 service's: `service`), and leaves.
  using Deadlines = std::multiset<uint64_t>;
  std::optional<Deadlines::iterator> request_started(const std::shared_ptr<Service>& service);
  void request_ended(const std::shared_ptr<Service>& service, std::optional<Deadlines::iterator> deadline);
  // Connections waiting for room, served first come, first served.
  void wait_for_room(const std::shared_ptr<Connection>& connection) { waiting_.push_back(connection); }
  bool others_waiting() const { return !waiting_.empty(); }
  // The service store's epoch deadline from its requests in flight (none without).
  void apply_deadline(Service& service);
  void forget(Connection* connection);

 private:
  void listen_on(const std::string& host, uint16_t port);
  void adopt_listener(int fd);
  void learn_address();
  void accept_ready();
  void arm_accept();
  void watch_signals();
  void unwatch_signals();
  // A 0.2 proxy's threads: reaped as they end, which makes room.
  void arm_proxy_ended();
  void let_waiting_on();

  int listen_fd_ = -1;
  // Server::stop from any thread: readable once asked.
  int stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  std::optional<Store::WaitId> stop_wait_;
  Clock::time_point next_faster_code_look_ = Clock::now();
  std::optional<Store::WaitId> accept_wait_, signal_wait_, drain_timer_, proxy_ended_wait_, resume_wait_;
  std::shared_ptr<Service> make_service();
  void forget_service(const std::shared_ptr<Service>& service);
  void arm_service_idle(const std::shared_ptr<Service>& service);
  // A 0.3 service: linked once, and each of its instances made from it.
  std::optional<InstancePre> pre_;
  std::string handler_name_;
  std::optional<TypedExport<HandleFunc>> handler_;  // checked once for pre_'s instances
  std::vector<std::shared_ptr<Service>> services_;  // in service, retired ones until their requests end
  // Every service made that may still live (one still held elsewhere):
  // none is driven past the server's end.
  std::vector<std::weak_ptr<Service>> made_;
  // Services are destroyed from the loop's next turn, never inside their own
  // store's step (a response's end may drop the last reference there), and
  // none outlives the server.
  struct Reaper {
    explicit Reaper(Store* loop) : loop(loop) {}
    Store* loop;
    bool deferring = true;
    std::vector<std::unique_ptr<Service>> doomed;
    std::optional<Store::WaitId> turn;  // the loop's turn that destroys them
  };
  std::shared_ptr<Reaper> reaper_;
  std::map<Connection*, std::shared_ptr<Connection>> connections_;
  std::deque<std::weak_ptr<Connection>> waiting_;
  size_t in_flight_ = 0;
  bool stopping_ = false;
  bool drained_ = false;
  // While a trap's requests are failed: nothing new enters the guest and no
  // deadline is armed, so no second trap can escape the recovery.
  bool recovering_ = false;
  struct sigaction old_term_ {}, old_int_ {};
  bool signals_watched_ = false;
};

namespace {

// One request and its response on a connection.
struct Exchange {
  // A 0.3 service's: first, so destroyed after what lives in its store.
  std::shared_ptr<Server::Impl::Service> service;
  std::string method, target;
  unsigned version = 11;
  bool head_request = false;
  bool keep_alive = true;
  Clock::time_point started = Clock::now();
  std::optional<Store::WaitId> timeout;
  std::shared_ptr<p3::IncomingBody> request_body;  // a 0.3 service's request
  std::shared_ptr<p2::ProxyExchange> proxy;        // or a 0.2 proxy's
  std::optional<Store::WaitId> proxy_wait;
  bool request_read = false;  // the parser reached the request's end

  // Shared with its completion's callback, which the service's store holds:
  // the callback holds the call, never the exchange (which holds the service).
  std::shared_ptr<TypedPendingCall<HandleResult>> call;
  bool head_sent = false;
  unsigned status = 0;
  // The response's framing, as its head said (a 0.2 proxy's body is framed here).
  wire::Framing framing = wire::Framing::chunked;
  std::optional<uint64_t> declared;
  bool no_body = false;
  uint64_t body_bytes = 0;
  std::shared_ptr<p3::OutgoingBody> response_body;
  uint64_t body_sent = 0;  // the body's framed bytes that went to the connection
  std::optional<FutureWriter<TransmitResult>> transmitted;
  bool complete = false;  // the whole response is in the connection's buffer
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Server::Impl& server, int fd) : server_(server), store_(server.store), fd_(fd) {}
  ~Connection() {
    cancel_waits();
    if (exchange_ && exchange_->timeout) store_.cancel_wait(*exchange_->timeout);
    if (exchange_ && exchange_->proxy) exchange_->proxy->cancel();
    if (fd_ >= 0) ::close(fd_);
  }

  void start() {
    arm_read();
    arm_idle();
  }

  // The server stops: an idle connection closes now, a busy one after its response.
  void stop() {
    if (!exchange_) return close();
    exchange_->keep_alive = false;
  }

  // A trap took the instance: the request in it fails.
  void fail_in_guest(const std::string& why) {
    if (exchange_ && !exchange_->complete) guarded([&] { abort_response(why); });
  }

  // Room for another request in the guest, given to this connection.
  void resume() {
    if (!paused_) return;
    paused_ = false;
    resuming_ = true;
    guarded([&] { process(); });
    resuming_ = false;
  }
  bool paused() const { return paused_; }
  // Whether its request is in `service`'s instance.
  bool serves_in(const Server::Impl::Service* service) const {
    return exchange_ && !exchange_->complete && exchange_->service.get() == service;
  }

  std::string peer = "-";

 private:
  // --- reading and parsing --------------------------------------------------

  void arm_read() {
    if (read_wait_ || fd_ < 0 || peer_closed_) return;
    read_wait_ = store_.when_ready(fd_, POLLIN, [self = shared_from_this()](short) {
      self->read_wait_.reset();
      self->guarded([&] { self->on_readable(); });
    });
  }

  void arm_idle() {
    if (idle_timer_) store_.cancel_wait(*idle_timer_);
    idle_timer_.reset();
    if (server_.config.idle_timeout.count() <= 0 || fd_ < 0) return;
    idle_timer_ = store_.when_time(Clock::now() + server_.config.idle_timeout, [self = shared_from_this()] {
      self->idle_timer_.reset();
      // Waiting on the guest is not idleness; a client that sends nothing is.
      if (self->exchange_ && !self->reading_wanted()) return self->arm_idle();
      if (self->exchange_) self->server_.warn(fmt::format("{}: the client sent nothing for too long", self->peer));
      self->guarded([&] { self->close(); });
    });
  }

  bool reading_wanted() const {
    if (peer_closed_ || closing_ || fd_ < 0) return false;
    if (!parser_) return !exchange_;  // between requests; a pipelined one waits for the response
    if (parser_->done()) return false;
    return !exchange_ || body_buffered() < kBodyBuffer;
  }

  // The request's body, to the guest of either version.
  size_t body_buffered() const {
    return exchange_->proxy ? exchange_->proxy->request_buffered() : exchange_->request_body->buffered();
  }
  void body_add(std::string_view bytes) {
    if (exchange_->proxy) return exchange_->proxy->add_request_bytes(bytes);
    exchange_->request_body->add(bytes);
  }
  void body_end(const std::vector<wire::Field>& trailers) {
    if (exchange_->proxy) return exchange_->proxy->end_request(trailers);
    exchange_->request_body->finish(trailers);
  }
  // The body is refused (too big, or malformed): the guest's body fails.
  void body_fail() {
    if (exchange_->proxy) return exchange_->proxy->fail_request(p2::RequestBodyFailure::body_size);
    exchange_->request_body->fail(types::error_code::HTTPRequestBodySize{});
  }

  void on_readable() {
    bool got = false;
    if (receive_available(fd_, in_, kReadChunk, got) == SocketState::closed) peer_closed_ = true;
    if (got) arm_idle();
    process();
  }

  void process() {
    if (closing_ || fd_ < 0) return;
    while (!in_.empty() || (parser_ && exchange_)) {
      if (!parser_) {
        if (exchange_) break;  // the next request waits for this response
        // No room, or others waited for it first: this one waits its turn.
        if (!server_.has_room() || (!resuming_ && server_.others_waiting())) {
          paused_ = true;
          server_.wait_for_room(shared_from_this());
          return;
        }
        parser_.emplace(wire::ParserLimits{.header_bytes = server_.config.max_header_bytes,
                                           .header_count = server_.config.max_header_count,
                                           .body_bytes = server_.config.max_body_bytes});
      }
      std::optional<wire::ParseFailure> failure;
      const size_t taken = parser_->feed(in_, failure);
      in_.erase(0, taken);
      if (failure) return refuse(failure->status, failure->reason);
      if (parser_->head_done() && !exchange_) {
        if (auto answer = host_answer()) {
          if (!answer_here(answer->first, answer->second)) return;
          continue;
        }
        if (!start_exchange()) return;
      }
      if (exchange_ && !exchange_->request_read) {
        body_add(parser_->body());
        parser_->body().clear();
        if (parser_->done()) {
          exchange_->request_read = true;
          body_end(parser_->trailers());
        }
      }
      if (parser_->done()) {
        parser_.reset();
        break;
      }
      if (taken == 0) break;
    }
    if (peer_closed_) {
      if (exchange_ && !exchange_->complete) return client_gone();
      if (!exchange_) return close();
    }
    if (reading_wanted())
      arm_read();
    else if (exchange_ && !exchange_->complete)
      arm_hangup();
  }

  // Whether the client has all the response head promised: its declared
  // length, or no body at all.
  bool response_framed_whole() const {
    const Exchange& x = *exchange_;
    if (!x.head_sent) return false;
    // Under a content-length the framed bytes are the body's, in both versions.
    return x.no_body || (x.framing == wire::Framing::content_length && x.declared && x.body_sent >= *x.declared);
  }

  // While a request is in the guest and nothing is read: whether the
  // client closes its side (POLLRDHUP: pipelined bytes do not wake it).
  void arm_hangup() {
    if (hangup_wait_ || fd_ < 0) return;
    hangup_wait_ = store_.when_ready(fd_, POLLRDHUP, [self = shared_from_this()](short) {
      self->hangup_wait_.reset();
      if (self->exchange_ && !self->exchange_->complete) self->guarded([&] { self->client_gone(); });
    });
  }

  // The client closed its side before the response ended: it is gone, as
  // servers on hyper (wasmtime's) take it, half-closed connections
  // unsupported. The request's body fails with connection-terminated, the
  // guest's task is cancelled (a 0.2 guest's streams fail), and the
  // connection closes.
  void client_gone() {
    Exchange& x = *exchange_;
    // A client may close once it has the whole response: the guest's end
    // is still awaited (and a failure in it reported).
    if (response_framed_whole()) return;
    server_.warn(fmt::format("{} {}: the client went before the response ended", x.method, x.target));
    log_line(x.method, x.target, x.status, x.body_sent, x.started);
    close();
  }

  // What the server answers itself, never the guest: a readiness probe
  // (ServeConfig::health_path) and the metrics (metrics_path), to a GET or
  // HEAD of exactly their path.
  std::optional<std::pair<unsigned, std::string>> host_answer() const {
    const std::string& method = parser_->method();
    if (method != "GET" && method != "HEAD") return std::nullopt;
    const std::string& target = parser_->target();
    const ServeConfig& config = server_.config;
    if (!config.health_path.empty() && target == config.health_path)
      return server_.stopping() ? std::pair<unsigned, std::string>{503, "draining\n"}
                                : std::pair<unsigned, std::string>{200, "ok\n"};
    if (!config.metrics_path.empty() && target == config.metrics_path && config.metrics)
      return std::pair<unsigned, std::string>{200, config.metrics->text()};
    return std::nullopt;
  }
  // False when the connection closes after it (the request sent a body,
  // asked to close, or the server drains).
  bool answer_here(unsigned status, const std::string& body) {
    const auto started = Clock::now();
    const std::string method = parser_->method(), target = parser_->target();
    const bool keep_alive = !server_.stopping() && parser_->done() && parser_->keep_alive();
    std::string response = wire::simple_response(status, body, keep_alive);
    if (method == "HEAD") response.resize(response.find("\r\n\r\n") + 4);
    write_out(std::move(response));
    log_line(method, target, status, 0, started);
    parser_.reset();
    if (!keep_alive) closing_ = true;
    flush();
    return keep_alive && fd_ >= 0;
  }

  // A request that cannot be parsed: the status that says why, then close.
  void refuse(unsigned status, const std::string& reason) {
    parser_.reset();
    if (exchange_) {
      // The head was fine, its body is not: the guest's body fails.
      exchange_->keep_alive = false;
      body_fail();
      if (!exchange_->head_sent) send_error(status, reason);
      return;
    }
    closing_ = true;
    write_out(wire::simple_response(status, reason + "\n", false));
    log_line("-", "-", status, 0, Clock::now());
    flush();
  }

  // --- the request in the guest ---------------------------------------------

  // Where a request says it goes: the connection's scheme and the Host
  // field, or an absolute-form target's own (a proxy's request).
  struct Destination {
    std::string scheme = "http";
    std::optional<std::string> authority;
    std::string path_with_query;
  };
  Destination destination_of(const std::string& target, const std::optional<std::string>& host) const {
    Destination d{"http", host, target};
    if (const size_t colon = target.find("://"); colon != std::string::npos && target[0] != '/') {
      d.scheme = target.substr(0, colon);
      const size_t path = target.find('/', colon + 3);
      d.authority = target.substr(colon + 3, path == std::string::npos ? std::string::npos : path - colon - 3);
      d.path_with_query = path == std::string::npos ? std::string("/") : target.substr(path);
    }
    return d;
  }
  template <class Scheme, class Http, class Https, class Other>
  static Scheme scheme_of(const std::string& name) {
    if (name == "https") return Https{};
    if (name == "http") return Http{};
    return Other{name};
  }

  // False when the request is refused (no instance could be made for it).
  bool start_exchange() {
    std::shared_ptr<Server::Impl::Service> service;
    if (!server_.proxy) {
      try {
        service = server_.service_for_request();
      } catch (const Error& e) {
        server_.warn(fmt::format("{} {}: no instance of the service: {}", parser_->method(), parser_->target(), e.what()));
        refuse(503, "the service has no instance to take the request");
        return false;
      }
    }
    auto x = std::make_shared<Exchange>();
    exchange_ = x;
    x->service = std::move(service);
    x->method = parser_->method();
    x->target = parser_->target();
    x->version = parser_->version();
    x->head_request = x->method == "HEAD";
    x->keep_alive = parser_->keep_alive() && !server_.stopping();
    deadline_ = server_.request_started(x->service);
    counted_ = true;

    FieldList headers(server_.types->forbidden);
    std::optional<std::string> host;
    bool expects_continue = false;
    for (const auto& [name, value] : parser_->fields()) {
      headers.add_from_host(name, value);
      if (!host && lowercase(name) == "host") host = value;
      if (lowercase(name) == "expect" && lowercase(value) == "100-continue") expects_continue = true;
    }
    headers.make_immutable();
    // The client holds its body back until told to send it: the request is
    // taken now, so it may.
    if (expects_continue && x->version >= 11 && !parser_->done()) {
      write_out("HTTP/1.1 100 Continue\r\n\r\n");
      send_out();
    }
    const Destination destination = destination_of(x->target, host);
    std::weak_ptr<Connection> weak = weak_from_this();
    if (server_.config.request_timeout.count() > 0)
      x->timeout = store_.when_time(Clock::now() + server_.config.request_timeout, [weak, x] {
        x->timeout.reset();
        if (auto self = weak.lock(); self && self->exchange_ == x) self->guarded([&] { self->timed_out(); });
      });
    if (server_.proxy) {
      start_proxy(std::move(headers), destination);
      return true;
    }

    Store& guest = *x->service->store;
    x->request_body = std::make_shared<p3::IncomingBody>(guest, server_.types);
    x->request_body->on_taken = [weak] {
      if (auto self = weak.lock(); self && self->reading_wanted()) self->arm_read();
    };
    auto request = std::make_unique<p3::HostRequest>(server_.types, std::move(headers), x->request_body->body());
    request->method = p3::method_of(x->method);
    request->scheme =
        scheme_of<types::Scheme, types::scheme::HTTP, types::scheme::HTTPS, types::scheme::Other>(destination.scheme);
    request->authority = destination.authority;
    request->path_with_query = destination.path_with_query;
    const Own<types::Request> handle = p3::make_incoming_request(guest, server_.types, std::move(request));
    x->call = std::make_shared<TypedPendingCall<HandleResult>>(x->service->handler->call_async(guest, handle));
    std::weak_ptr<Exchange> weak_exchange = x;
    x->call->on_done(guest, [weak, weak_exchange, call = x->call, &store = guest] {
      auto self = weak.lock();
      auto exchange = weak_exchange.lock();
      if (self && exchange && self->exchange_ == exchange && !exchange->complete)
        return self->guarded([&] { self->responded(); });
      // Its client is gone: a response made anyway is dropped (its body's
      // writer sees the stream dropped).
      if (call->cancelled()) return;
      HandleResult result = call->result();
      if (!result.is_err()) store.drop(result.value());
    });
    return true;
  }

  // A 0.2 proxy's request: to a thread of its own, through an exchange.
  void start_proxy(FieldList headers, const Destination& destination) {
    Exchange& x = *exchange_;
    x.proxy = std::make_shared<p2::ProxyExchange>();
    namespace t2 = p2::types;
    p2::IncomingHead head{
        .method = x.method,
        .path_with_query = destination.path_with_query,
        .scheme = scheme_of<t2::Scheme, t2::scheme::HTTP, t2::scheme::HTTPS, t2::scheme::Other>(destination.scheme),
        .authority = destination.authority,
        .headers = std::move(headers)};
    arm_proxy();
    server_.proxy->start(std::move(head), x.proxy);
  }

  void arm_proxy() {
    Exchange& x = *exchange_;
    if (x.proxy_wait || x.complete) return;
    std::weak_ptr<Exchange> weak_exchange = exchange_;
    x.proxy_wait = store_.when_ready(x.proxy->loop_fd(), POLLIN, [self = shared_from_this(), weak_exchange](short) {
      auto x = weak_exchange.lock();
      if (!x) return;
      x->proxy_wait.reset();
      if (self->exchange_ != x) return;
      self->guarded([&] {
        x->proxy->clear_loop_fd();
        self->pump_proxy();
        if (self->exchange_ == x) self->arm_proxy();
      });
    });
  }

  // What the proxy's guest posted: the head, body bytes framed, the end.
  void pump_proxy() {
    Exchange& x = *exchange_;
    if (x.complete) return;
    const size_t room = out_.size() >= kBodyBuffer ? 0 : kBodyBuffer - out_.size();
    p2::Posted posted = x.proxy->take_posted(room);
    // A response that ended goes out whole, whatever came after it (a trap
    // as the guest returned); one that did not and failed gets a 500.
    if (posted.head && !x.head_sent && (!posted.failure || posted.body_ended) &&
        !send_head(posted.head->status, posted.head->fields))
      return;
    if (!posted.body.empty() && x.head_sent && !append_body(posted.body)) return;
    if (posted.body_ended && x.head_sent) {
      if (!end_body(posted.trailers)) return;
      return finish_response();
    }
    if (posted.failure) {
      server_.warn(fmt::format("{} {}: {}", x.method, x.target, *posted.failure));
      return abort_response(*posted.failure);
    }
    if (posted.worker_done)
      return abort_response(x.head_sent ? "the guest returned before its response's body ended"
                                        : "the guest returned without a response");
    if (reading_wanted()) arm_read();
    send_out();
  }

  void timed_out() {
    server_.warn(fmt::format("guest timed out after {} ms on {} {}", server_.config.request_timeout.count(),
                             exchange_->method, exchange_->target));
    if (exchange_->service) server_.retire(exchange_->service, "a request timed out");
    abort_response("guest timed out");
  }

  // The handler returned.
  void responded() {
    Exchange& x = *exchange_;
    HandleResult result = x.call->result();
    if (result.is_err()) {
      server_.warn(fmt::format("the handler failed {} {}: {}", x.method, x.target, describe_error(result.error())));
      return send_error(500, "the service failed: " + describe_error(result.error()));
    }
    Store& guest = *x.service->store;
    auto response = p3::take_response(guest, *server_.types, result.value());
    x.transmitted = std::move(response->transmitted);
    if (!send_head(response->status, response->headers.entries())) return;
    const bool no_body = x.no_body;
    const wire::Framing framing = x.framing;
    const std::optional<uint64_t> declared = x.declared;
    std::weak_ptr<Connection> weak = weak_from_this();
    std::weak_ptr<Exchange> weak_exchange = exchange_;  // the exchange holds the body, which holds the sink
    p3::OutgoingBody::Sink sink{
        .backlog = [weak] { auto self = weak.lock(); return self ? self->out_.size() : size_t{0}; },
        .write = [weak, weak_exchange, no_body](std::string_view framed) {
          auto self = weak.lock();
          auto exchange = weak_exchange.lock();
          if (!self || !exchange || no_body) return;
          exchange->body_sent += framed.size();
          self->out_.append(framed);
          self->send_soon();
        },
        .done = [weak, weak_exchange](TransmitResult outcome) {
          auto self = weak.lock();
          auto exchange = weak_exchange.lock();
          if (!self || !exchange || self->exchange_ != exchange || exchange->complete) return;
          self->guarded([&] {
            if (outcome.is_err()) return self->abort_response(describe_error(outcome.error()), outcome.error());
            self->finish_response();
          });
        }};
    // A response without a body still reads the guest's (and drops it):
    // a guest writes its body whatever the method, and a dropped stream
    // would be an error to it.
    p3::Body body = std::move(response->body);
    x.response_body = std::make_shared<p3::OutgoingBody>(guest, server_.types, std::move(body), false,
                                                         no_body ? wire::Framing::until_close : framing, declared,
                                                         std::move(sink));
    const Exchange* const current = exchange_.get();
    x.response_body->resume();
    // The head goes with the body's first bytes (all of a small response),
    // unless the response already ended (and the exchange with it).
    if (exchange_.get() != current || exchange_->complete || out_.size() >= kSendAtOnce) return flush();
    send_soon();
  }

  // The response's status line and fields, framed as the guest's fields
  // and the request allow: false when they cannot be sent (the response
  // is aborted).
  bool send_head(unsigned status, const std::vector<FieldList::Entry>& entries) {
    Exchange& x = *exchange_;
    x.status = status;
    std::vector<wire::Field> fields;
    std::optional<uint64_t> declared;
    for (const auto& [name, value] : entries) {
      if (name == "content-length") {
        uint64_t length = 0;
        const auto parsed = std::from_chars(value.data(), value.data() + value.size(), length);
        if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size() || (declared && *declared != length)) {
          abort_response("the service's response has an invalid content-length");
          return false;
        }
        declared = length;
        continue;
      }
      if (!is_connection_field(name)) fields.emplace_back(name, value);  // the connection's own are ours
    }
    // 1xx, 204 and 304 carry no body and no framing. A HEAD response has
    // no body either: it keeps the guest's Content-Length, and says
    // nothing of a length it does not know.
    const bool bodiless_status = x.status < 200 || x.status == 204 || x.status == 304;
    wire::Framing framing = wire::Framing::chunked;
    if (bodiless_status)
      framing = wire::Framing::until_close;
    else if (declared)
      framing = wire::Framing::content_length;
    else if (x.version < 11 || x.head_request)
      framing = wire::Framing::until_close;
    if (framing == wire::Framing::until_close && !bodiless_status && !x.head_request) x.keep_alive = false;
    // The connection carries another request only once this one was read whole.
    if (!x.request_read) x.keep_alive = false;
    write_out(wire::response_head(x.status, fields, x.version, framing, declared, x.keep_alive));
    x.head_sent = true;
    x.framing = framing;
    x.declared = declared;
    x.no_body = bodiless_status || x.head_request;
    return true;
  }

  // A 0.2 proxy's body bytes, framed as the head said: false when they
  // break its Content-Length (the response is cut off).
  bool append_body(std::string_view bytes) {
    Exchange& x = *exchange_;
    x.body_bytes += bytes.size();
    if (x.no_body) return true;
    if (x.framing == wire::Framing::content_length && x.body_bytes > *x.declared) {
      // What fits the declared length goes, then the cut.
      const uint64_t fits = bytes.size() - (x.body_bytes - *x.declared);
      x.body_sent += fits;
      write_out(std::string(bytes.substr(0, fits)));
      abort_response("the service's body is longer than its content-length");
      return false;
    }
    std::string framed;
    if (x.framing == wire::Framing::chunked)
      wire::append_chunk(framed, bytes);
    else
      framed = bytes;
    x.body_sent += framed.size();
    write_out(std::move(framed));
    return true;
  }

  bool end_body(const std::vector<wire::Field>& trailers) {
    Exchange& x = *exchange_;
    if (x.no_body) return true;
    if (x.framing == wire::Framing::content_length && x.body_bytes != *x.declared) {
      abort_response("the service's body is shorter than its content-length");
      return false;
    }
    if (x.framing == wire::Framing::chunked) {
      std::string last;
      wire::append_last_chunk(last, trailers);
      x.body_sent += last.size();
      write_out(std::move(last));
    }
    return true;
  }

  void finish_response() {
    Exchange& x = *exchange_;
    x.complete = true;
    if (x.service) p3::settle_transmit(*x.service->store, x.transmitted, TransmitResult::ok());
    flush();
  }

  // The response cannot be given: a 500 when nothing went out yet, else the
  // connection closes (the client sees an incomplete response).
  void abort_response(const std::string& why, std::optional<ErrorCode> code = std::nullopt) {
    Exchange& x = *exchange_;
    if (x.proxy) x.proxy->cancel();  // what the guest still writes goes nowhere
    if (x.service)
      p3::settle_transmit(*x.service->store, x.transmitted, TransmitResult::err(code.value_or(p3::internal_error(why))));
    if (!x.head_sent) return send_error(500, why);
    server_.warn(fmt::format("{} {}: the response is cut off: {}", x.method, x.target, why));
    // What is already framed goes out if the socket takes it now: the client
    // sees the head and the body up to the cut.
    if (fd_ >= 0 && !broken_) send_pending(fd_, out_);
    x.complete = true;
    log_line(x.method, x.target, x.status, x.body_sent, x.started);
    close();
  }

  void send_error(unsigned status, const std::string& why) {
    Exchange& x = *exchange_;
    x.status = status;
    x.head_sent = true;
    x.complete = true;
    x.keep_alive = x.keep_alive && x.request_read;
    write_out(wire::simple_response(status, why + "\n", x.keep_alive));
    flush();
  }

  // --- writing --------------------------------------------------------------

  void write_out(std::string bytes) {
    if (out_.empty())
      out_ = std::move(bytes);
    else
      out_ += bytes;
  }

  // Sends what the socket takes now, waiting for POLLOUT for the rest.
  // Only I/O: safe inside a body's copy step. False when the client is gone.
  bool send_out() {
    if (fd_ < 0 || broken_) return !broken_;
    switch (send_pending(fd_, out_)) {
      case SocketState::open: break;
      case SocketState::would_block:
        if (!write_wait_)
          write_wait_ = store_.when_ready(fd_, POLLOUT, [self = shared_from_this()](short) {
            self->write_wait_.reset();
            self->guarded([&] { self->flush(); });
          });
        break;
      case SocketState::closed:
        // The client is gone: closed from the loop, outside any copy.
        broken_ = true;
        out_.clear();
        store_.when_time(Clock::now(), [self = shared_from_this()] { self->guarded([&] { self->close(); }); });
    }
    return !broken_;
  }

  // A body's bytes go out with what follows them in this turn of the loop
  // (a small response's last chunk): one send(2) where each write would
  // take one, and one wake-up of the client. A backlog goes at once.
  void send_soon() {
    if (out_.size() >= kSendAtOnce) {
      send_out();
      return;
    }
    if (send_wait_) return;
    send_wait_ = store_.when_idle([self = shared_from_this()] {
      self->send_wait_.reset();
      self->guarded([&] { self->send_out(); });
    });
  }

  void flush() {
    if (!send_out()) return;
    if (fd_ < 0 || !out_.empty()) return;
    if (exchange_ && exchange_->complete) return end_exchange();
    if (exchange_ && exchange_->proxy) return pump_proxy();
    if (exchange_ && exchange_->response_body) exchange_->response_body->resume();
    if (closing_ && !exchange_) close();
  }

  // The request leaves max_concurrent_requests' count (once).
  void stop_counting(const std::shared_ptr<Server::Impl::Service>& service) {
    if (!counted_) return;
    counted_ = false;
    server_.request_ended(service, std::exchange(deadline_, std::nullopt));
  }

  void end_exchange() {
    auto x = std::move(exchange_);
    exchange_.reset();
    if (hangup_wait_) store_.cancel_wait(*std::exchange(hangup_wait_, std::nullopt));
    if (x->timeout) store_.cancel_wait(*x->timeout);
    if (x->proxy_wait) store_.cancel_wait(*x->proxy_wait);
    // The response is out: a guest still reading the request or writing
    // goes nowhere (its streams fail, so its thread ends).
    if (x->proxy) x->proxy->cancel();
    if (server_.proxy) server_.proxy->reap();
    log_line(x->method, x->target, x->status, x->body_sent, x->started);
    stop_counting(x->service);
    if (!x->keep_alive || closing_ || server_.stopping()) return close();
    arm_idle();
    process();
  }

  void log_line(const std::string& method, const std::string& target, unsigned status, uint64_t bytes,
                Clock::time_point started) {
    if (server_.counters) server_.counters->request_done(status, Clock::now() - started);
    if (!server_.config.log) return;
    server_.config.log(fmt::format("{} {} {} {} {}B {:.3f}ms", peer, method, target, status, bytes,
                                   std::chrono::duration<double, std::milli>(Clock::now() - started).count()));
  }

  // --- ending ---------------------------------------------------------------

  void cancel_waits() {
    for (auto* wait : {&read_wait_, &write_wait_, &idle_timer_, &hangup_wait_, &send_wait_})
      if (*wait) {
        store_.cancel_wait(**wait);
        wait->reset();
      }
  }

  void close() {
    if (fd_ < 0) return;
    cancel_waits();
    ::close(fd_);
    fd_ = -1;
    closing_ = true;
    if (auto x = exchange_) {
      if (x->timeout) store_.cancel_wait(*x->timeout);
      x->timeout.reset();
      // What the guest still does for this request goes nowhere.
      if (x->proxy_wait) store_.cancel_wait(*x->proxy_wait);
      x->proxy_wait.reset();
      if (x->proxy) {
        x->proxy->cancel();
      } else {
        if (!x->request_read && x->request_body) x->request_body->fail(types::error_code::ConnectionTerminated{});
        // The task is cancelled (from the loop: this may run inside a
        // guest's call, a body write that found the client gone). The
        // guest runs as it is told, and may trap: its instance's affair.
        if (x->call && !x->call->done())
          store_.when_time(Clock::now(), [x, server = server_.alive] {
            try {
              x->call->cancel(*x->service->store);
            } catch (const Error& e) {
              if (e.kind() != ErrorKind::Trap || !*server) throw;
              (*server)->service_trapped(x->service, e);
            }
          });
        if (x->service)
          p3::settle_transmit(*x->service->store, x->transmitted,
                              TransmitResult::err(types::error_code::ConnectionTerminated{}));
      }
      x->complete = true;
    }
    stop_counting(exchange_ ? exchange_->service : nullptr);
    server_.forget(this);  // may end this object's life once the caller returns
  }

  // Host failures in one connection end that connection, not the server;
  // a guest's trap ends its service's instance (or goes on to the loop).
  template <class F>
  void guarded(F&& f) {
    auto keep = shared_from_this();
    try {
      f();
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Trap) {
        if (!exchange_ || !exchange_->service) throw;
        return server_.service_trapped(exchange_->service, e);
      }
      server_.warn(fmt::format("connection from {}: {}", peer, e.what()));
      close();
    }
  }

  Server::Impl& server_;
  Store& store_;
  int fd_;
  std::string in_, out_;
  std::optional<wire::RequestParser> parser_;
  std::shared_ptr<Exchange> exchange_;
  std::optional<Store::WaitId> read_wait_, write_wait_, idle_timer_, hangup_wait_, send_wait_;
  bool peer_closed_ = false;
  bool closing_ = false;
  bool paused_ = false;
  bool resuming_ = false;  // in resume(): its turn came
  bool counted_ = false;
  std::optional<Server::Impl::Deadlines::iterator> deadline_;  // while counted_, a 0.3 request's
  bool broken_ = false;  // a send failed: the client is gone
};

std::string address_text(const sockaddr_storage& address) {
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof address, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "-";
  return address.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

Server::Impl::Impl(const Engine& engine, Store& store, const Linker& linker, const Component& component,
                   const HttpConfig& http, ServeConfig config)
    : engine(engine), store(store), linker(linker), component(component), config(std::move(config)),
      reaper_(std::make_shared<Reaper>(&store)) {
  if (stop_fd_ < 0) throw Error(ErrorKind::Usage, fmt::format("eventfd: {}", std::strerror(errno)));
  if (this->config.max_instance_reuse == 0 || this->config.max_instance_concurrency == 0)
    throw Error(ErrorKind::Usage, "ServeConfig: max_instance_reuse and max_instance_concurrency take at least 1");
  if (!this->config.metrics_path.empty() && !this->config.metrics)
    this->config.metrics = std::make_shared<ServeMetrics>();
  if (this->config.metrics) counters = &MetricsAccess::counters(*this->config.metrics);
  auto forbidden = std::make_shared<ForbiddenHeaders>();
  for (const std::string& name : http.forbidden_headers) forbidden->add(name);
  types = std::make_shared<p3::TypesContext>();
  types->forbidden = std::move(forbidden);
  types->resources = types::Resources{
      linker.resource<types::Fields>("wasi:http/types@0.3.0#fields"),
      linker.resource<types::Request>("wasi:http/types@0.3.0#request"),
      linker.resource<types::RequestOptions>("wasi:http/types@0.3.0#request-options"),
      linker.resource<types::Response>("wasi:http/types@0.3.0#response"),
  };
  const bool service = std::any_of(component.type().exports.begin(), component.type().exports.end(),
                                   [](const NamedExtern& e) { return e.name.starts_with("wasi:http/handler@0.3."); });
  if (this->config.request_timeout.count() > 0 && EpochTicker::can_interrupt(engine))
    ticker = EpochTicker::shared(engine, this->config.request_timeout);
  if (const auto proxy_handle = p2::incoming_handler_name(component); proxy_handle && !service)
    proxy.emplace(engine, linker, component, *proxy_handle, p2::types_of(linker, http), this->config.prepare_request_store,
                  this->config.metrics,
                  ticker ? std::optional<uint64_t>(ticker->timeout_ticks()) : std::nullopt);
  else
    make_service();  // the component serves, or the error says why now
  if (this->config.listen_fd >= 0)
    adopt_listener(this->config.listen_fd);
  else
    listen_on(this->config.host, this->config.port);
}

Server::Impl::~Impl() {
  *alive = nullptr;
  reaper_->deferring = false;  // no loop turn is coming: services go at once
  unwatch_signals();
  connections_.clear();
  for (const auto& service : services_)
    if (service->idle_timer) store.cancel_wait(*service->idle_timer);
  services_.clear();
  if (reaper_->turn) store.cancel_wait(*reaper_->turn);
  reaper_->doomed.clear();
  // One still held (by a wait of the loop's store) goes with that wait, undriven.
  for (const auto& weak : made_)
    if (const auto held = weak.lock()) store.stop_driving(*held->store);
  proxy.reset();  // after the connections cancelled their requests
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_wait_) store.cancel_wait(*stop_wait_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::shared_ptr<Server::Impl::Service> Server::Impl::make_service() {
  if (!pre_) {
    for (const NamedExtern& e : component.type().exports)
      if (e.name.starts_with("wasi:http/handler@0.3.")) handler_name_ = e.name + "#handle";
    if (handler_name_.empty())
      throw Error(ErrorKind::Usage,
                  "the component exports neither wasi:http/handler@0.3.x nor wasi:http/incoming-handler@0.2.x: "
                  "it is no HTTP service");
    pre_.emplace(linker.instantiate_pre(component));
    handler_.emplace(pre_->typed_async_func<HandleResult(Own<types::Request>)>(handler_name_));
  }
  // Destroyed from the loop (Reaper): the last reference may go inside the
  // service's own store's step.
  std::shared_ptr<Service> service(new Service, [reaper = reaper_](Service* gone) {
    if (!reaper->deferring) return delete gone;
    reaper->doomed.emplace_back(gone);
    if (!reaper->turn)
      reaper->turn = reaper->loop->when_time(Clock::now(), [reaper] {
        reaper->turn.reset();
        std::vector<std::unique_ptr<Service>> going;
        going.swap(reaper->doomed);
      });
  });
  service->store = std::make_unique<Store>(engine);
  const auto started = Clock::now();
  if (config.prepare_request_store) {
    // It may define what the linker gives this store's instance (a next
    // hop): linked anew.
    config.prepare_request_store(*service->store);
    service->instance.emplace(linker.instantiate(*service->store, component));
  } else {
    service->instance.emplace(pre_->instantiate(*service->store));
  }
  service->handler.emplace(handler_->in(*service->instance));
  if (counters) {
    counters->instantiation_seconds.observe(Clock::now() - started);
    ++counters->instances_live;
    service->metrics = config.metrics;
  }
  std::weak_ptr<Service> weak = service;
  store.drive(*service->store, [this, weak](const Error& trap) {
    if (auto trapped = weak.lock()) service_trapped(trapped, trap);
  });
  services_.push_back(service);
  std::erase_if(made_, [](const std::weak_ptr<Service>& s) { return s.expired(); });
  made_.push_back(service);
  arm_service_idle(service);
  return service;
}

std::shared_ptr<Server::Impl::Service> Server::Impl::service_for_request() {
  for (const auto& service : services_)
    if (!service->retired && service->in_flight < config.max_instance_concurrency) return service;
  return make_service();
}

void Server::Impl::retire(const std::shared_ptr<Service>& service, const std::string& why) {
  if (service->retired) return;
  service->retired = true;
  if (!why.empty()) warn("an instance is retired: " + why);
  if (service->in_flight == 0) forget_service(service);
}

void Server::Impl::retire_all(const std::string& why) {
  const auto all = services_;
  for (const auto& service : all) retire(service, why);
}

void Server::Impl::forget_service(const std::shared_ptr<Service>& service) {
  if (service->idle_timer) store.cancel_wait(*service->idle_timer);
  service->idle_timer.reset();
  std::erase(services_, service);
}

void Server::Impl::arm_service_idle(const std::shared_ptr<Service>& service) {
  if (service->idle_timer) store.cancel_wait(*service->idle_timer);
  service->idle_timer.reset();
  if (config.instance_idle_timeout.count() <= 0 || service->retired || service->in_flight > 0) return;
  std::weak_ptr<Service> weak = service;
  service->idle_timer = store.when_time(Clock::now() + config.instance_idle_timeout, [this, weak] {
    auto idle = weak.lock();
    if (!idle) return;
    idle->idle_timer.reset();
    retire(idle, "");  // idle for instance_idle_timeout
  });
}

void Server::Impl::service_trapped(const std::shared_ptr<Service>& service, const Error& trap) {
  // Interrupted: guest code ran on past a request's timeout.
  const bool timed_out = ticker && service->store->interrupted();
  warn(timed_out ? fmt::format("guest timed out after {} ms: {}", config.request_timeout.count(), trap.what())
                 : fmt::format("guest trapped: {}", trap.what()));
  retire(service, timed_out ? "a request timed out" : "it trapped");
  if (ticker) service->store->set_epoch_deadline(UINT64_MAX);
  const bool was_recovering = std::exchange(recovering_, true);
  std::vector<std::shared_ptr<Connection>> busy;
  for (const auto& [_, connection] : connections_)
    if (connection->serves_in(service.get())) busy.push_back(connection);
  for (const auto& connection : busy) connection->fail_in_guest(timed_out ? "guest timed out" : "the guest trapped");
  recovering_ = was_recovering;
  // Waiting requests enter another instance from the loop.
  if (!resume_wait_)
    resume_wait_ = store.when_time(Clock::now(), [this] {
      resume_wait_.reset();
      let_waiting_on();
    });
}

void Server::Impl::listen_on(const std::string& address, uint16_t wanted_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(wanted_port);
  if (const int error = ::getaddrinfo(address.empty() ? nullptr : address.c_str(), service.c_str(), &hints, &found))
    throw Error(ErrorKind::Usage, fmt::format("cannot listen on {}:{}: {}", address, wanted_port, gai_strerror(error)));
  std::string failure = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (config.reuse_port) ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 1024) == 0) {
      listen_fd_ = fd;
      break;
    }
    failure = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw Error(ErrorKind::Usage, fmt::format("cannot listen on {}:{}: {}", address, wanted_port, failure));
  learn_address();
}

void Server::Impl::adopt_listener(int fd) {
  int accepting = 0, type = 0;
  socklen_t size = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) != 0 || !accepting)
    throw Error(ErrorKind::Usage, fmt::format("descriptor {} is no listening socket", fd));
  size = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM)
    throw Error(ErrorKind::Usage, fmt::format("descriptor {} is no stream socket", fd));
  listen_fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (listen_fd_ < 0) throw Error(ErrorKind::Usage, fmt::format("cannot use descriptor {}: {}", fd, std::strerror(errno)));
  // Accepting never blocks the loop (another server may take a connection first).
  ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  learn_address();
}

void Server::Impl::learn_address() {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &length);
  host = address_text(bound);
  port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

void Server::Impl::arm_accept() {
  if (accept_wait_ || stopping_ || listen_fd_ < 0) return;
  accept_wait_ = store.when_ready(listen_fd_, POLLIN, [this](short) {
    accept_wait_.reset();
    accept_ready();
  });
}

void Server::Impl::accept_ready() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t length = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) warn(fmt::format("accept: {}", std::strerror(errno)));
      break;
    }
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    auto connection = std::make_shared<Connection>(*this, fd);
    connection->peer = address_text(peer);
    connections_.emplace(connection.get(), connection);
    connection->start();
  }
  arm_accept();
}

void Server::Impl::look_for_faster_code() {
  const auto now = Clock::now();
  if (now < next_faster_code_look_) return;
  next_faster_code_look_ = now + std::chrono::seconds(1);
  std::optional<Component> faster;
  try {
    faster = component.with_faster_code();
  } catch (const Error& e) {
    warn(fmt::format("the optimized code could not be loaded: {}", e.what()));
    next_faster_code_look_ = Clock::time_point::max();
    return;
  }
  if (!faster) return;
  component = std::move(*faster);
  if (proxy) {
    proxy->use_component(component);
    warn("the optimized code is ready: requests from now on run it");
  } else {
    pre_.emplace(linker.instantiate_pre(component));
    handler_.emplace(pre_->typed_async_func<HandleResult(Own<types::Request>)>(handler_name_));
    retire_all("the optimized code is ready");  // those in flight finish on the old ones
  }
}

std::optional<Server::Impl::Deadlines::iterator> Server::Impl::request_started(const std::shared_ptr<Service>& service) {
  ++in_flight_;
  if (!service) {
    look_for_faster_code();
    return std::nullopt;  // a proxy's requests have stores of their own
  }
  ++service->in_flight;
  ++service->served;
  if (service->idle_timer) store.cancel_wait(*service->idle_timer);
  service->idle_timer.reset();
  std::optional<Deadlines::iterator> deadline;
  if (ticker) {
    deadline = service->deadlines.insert(ticker->epoch() + ticker->timeout_ticks());
    apply_deadline(*service);
  }
  // Its last request: the next go to a new instance (this one goes once they end).
  if (service->served >= config.max_instance_reuse) retire(service, "");
  look_for_faster_code();
  return deadline;
}

void Server::Impl::request_ended(const std::shared_ptr<Service>& service, std::optional<Deadlines::iterator> deadline) {
  --in_flight_;
  if (service) {
    --service->in_flight;
    if (deadline) {
      service->deadlines.erase(*deadline);
      apply_deadline(*service);
    }
    if (service->in_flight == 0) {
      if (service->retired)
        forget_service(service);
      else
        arm_service_idle(service);
    }
  }
  let_waiting_on();
}

void Server::Impl::apply_deadline(Service& service) {
  if (!ticker || recovering_) return;
  const uint64_t now = ticker->epoch();
  const uint64_t earliest = service.deadlines.empty() ? UINT64_MAX : *service.deadlines.begin();
  service.store->set_epoch_deadline(earliest > now ? earliest - now : 0);
}

void Server::Impl::arm_proxy_ended() {
  proxy_ended_wait_ = store.when_ready(proxy->ended_fd(), POLLIN, [this](short) {
    proxy_ended_wait_.reset();
    proxy->clear_ended_fd();
    proxy->reap();
    let_waiting_on();
    arm_proxy_ended();
  });
}

void Server::Impl::let_waiting_on() {
  // Connections waiting for room, in the order they came: as many go on as
  // there is room for (one that finds none again goes to the back).
  for (size_t turns = waiting_.size(); turns > 0 && has_room() && !waiting_.empty(); --turns) {
    const auto connection = waiting_.front().lock();
    waiting_.pop_front();
    if (connection && connection->paused()) connection->resume();
  }
}

void Server::Impl::forget(Connection* connection) {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  // Destroyed from the loop's next step: the caller is still running.
  auto kept = std::move(it->second);
  connections_.erase(it);
  store.when_time(Clock::now(), [kept] {});
}

void Server::Impl::watch_signals() {
  if (!config.watch_signals || signals_watched_) return;
  if (signal_pipe[0] < 0 && ::pipe2(signal_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
    throw Error(ErrorKind::Usage, fmt::format("cannot watch signals: {}", std::strerror(errno)));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, &old_term_);
  ::sigaction(SIGINT, &action, &old_int_);
  signals_watched_ = true;
  std::function<void(short)> on_signal;
  signal_wait_ = store.when_ready(signal_pipe[0], POLLIN, [this](short) {
    signal_wait_.reset();
    char drain[16];
    while (::read(signal_pipe[0], drain, sizeof drain) > 0) {
    }
    warn("stopping: finishing the requests in flight");
    stop();
  });
}

void Server::Impl::unwatch_signals() {
  if (!signals_watched_) return;
  ::sigaction(SIGTERM, &old_term_, nullptr);
  ::sigaction(SIGINT, &old_int_, nullptr);
  signals_watched_ = false;
  if (signal_wait_) store.cancel_wait(*signal_wait_);
  signal_wait_.reset();
}

void Server::Impl::run() {
  watch_signals();
  if (!stop_wait_ && stop_fd_ >= 0)
    stop_wait_ = store.when_ready(stop_fd_, POLLIN, [this](short) {
      stop_wait_.reset();
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(stop_fd_, &count, sizeof count);
      stop();
    });
  arm_accept();
  if (proxy && !proxy_ended_wait_) arm_proxy_ended();
  for (;;) {
    try {
      store.run_until([this] { return stopping_ && (connections_.empty() || drained_); });
      break;
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Trap) throw;
      // A trap no service's store reported (the loop's own store runs no
      // guest): every request in a guest fails, the next get new instances.
      warn(fmt::format("guest trapped: {}", e.what()));
      retire_all("a guest trapped");
      recovering_ = true;
      std::vector<std::shared_ptr<Connection>> busy;
      for (const auto& [_, connection] : connections_) busy.push_back(connection);
      for (const auto& connection : busy) connection->fail_in_guest("the guest trapped");
      recovering_ = false;
      // Waiting requests enter the new instance from the loop, where a trap is caught.
      if (!resume_wait_)
        resume_wait_ = store.when_time(Clock::now(), [this] {
          resume_wait_.reset();
          let_waiting_on();
        });
    }
  }
  if (drain_timer_) store.cancel_wait(*drain_timer_);
  drain_timer_.reset();
  if (proxy_ended_wait_) store.cancel_wait(*proxy_ended_wait_);
  proxy_ended_wait_.reset();
  if (resume_wait_) store.cancel_wait(*resume_wait_);
  resume_wait_.reset();
  connections_.clear();
  unwatch_signals();
}

void Server::Impl::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (accept_wait_) store.cancel_wait(*accept_wait_);
  accept_wait_.reset();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  std::vector<std::shared_ptr<Connection>> all;
  for (const auto& [_, connection] : connections_) all.push_back(connection);
  for (const auto& connection : all) connection->stop();
  drain_timer_ = store.when_time(Clock::now() + config.drain_timeout, [this] {
    drain_timer_.reset();
    if (!connections_.empty()) warn(fmt::format("{} request(s) cut off after the drain timeout", connections_.size()));
    drained_ = true;
  });
}

Server::Server(const Engine& engine, Store& store, const Linker& linker, const Component& component,
               const HttpConfig& http, ServeConfig config)
    : impl_(std::make_unique<Impl>(engine, store, linker, component, http, std::move(config))) {}
Server::~Server() = default;
std::string Server::address() const { return impl_->host; }
uint16_t Server::port() const { return impl_->port; }
void Server::run() { impl_->run(); }
void Server::stop() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(impl_->stop_fd(), &one, sizeof one);
}

}  // namespace cmhost::http
