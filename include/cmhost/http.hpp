// wasi:http for components, on the public API as any embedder could write
// it (src/http): the wasi:http types a component imports (0.3.x and
// 0.2.x), and a server of HTTP/1.1 (Boost.Beast's parser and serializer,
// on the store's event loop and reactor: no thread per connection) that
// calls a component's exported handler for each request.
//
//   cmhost::Linker linker;
//   cmhost::wasi::add_to_linker(linker, wasi_config);
//   cmhost::http::add_to_linker(linker, http_config);
//   cmhost::http::ServeConfig serve;
//   serve.port = 8080;
//   cmhost::http::Server server(engine, store, linker, component, http_config, serve);
//   server.run();   // until stop(), or SIGTERM/SIGINT when watch_signals is set
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cmhost/cmhost.hpp"

namespace cmhost::http {

class ServeMetrics;
struct MetricsAccess;

struct HttpConfig {
  // Field names a guest may not set, beyond wasi:http's default forbidden
  // set (connection, keep-alive, proxy-authenticate, proxy-authorization,
  // proxy-connection, transfer-encoding, upgrade, host, http2-settings).
  std::vector<std::string> forbidden_headers;
  // Outgoing requests (wasi:http/client): refused with HTTP-request-denied
  // unless allowed; when `allowed_hosts` is not empty, only to those
  // authorities (host or host:port).
  bool allow_outgoing = false;
  std::vector<std::string> allowed_hosts;
};

// Supplies wasi:http@0.3.x's types and client, and wasi:http@0.2.x's types
// and outgoing-handler, to `linker` (every 0.3.x and 0.2.x version links),
// which must hold WASI already (cmhost::wasi::add_to_linker: 0.2's bodies
// are its wasi:io streams). Objects the guest holds live in the store that
// instantiates.
void add_to_linker(Linker& linker, const HttpConfig& config);

struct ServeConfig {
  std::string host = "0.0.0.0";
  uint16_t port = 8080;  // 0: the kernel picks one (Server::port says which)
  // A request whose response has not ended by then gets a 500 (or, once
  // its headers are out, a closed connection); zero: no limit. On an
  // engine that meters (EngineConfig::metering), guest code still running
  // for it is interrupted too, one to three ticks of a quarter of the
  // timeout (5 ms to 1 s) later: the server moves the engine's epoch on
  // (Engine::increment_epoch) and sets the stores' epoch deadlines. A 0.3
  // service's requests in one instance share its store: what runs there
  // when the earliest of their deadlines passes is interrupted, whichever
  // request it runs for, and the instance is retired.
  std::chrono::milliseconds request_timeout{0};
  // Requests in the guest at once; more wait (their connections unread).
  size_t max_concurrent_requests = 128;
  // A 0.3 service's instances, each in a store of its own that the
  // server's store drives (Store::drive): one serves up to
  // max_instance_reuse requests, at most max_instance_concurrency at once
  // (more go to another instance, made as needed), and is retired after
  // that many, after a trap or a timeout, or after instance_idle_timeout
  // without a request (zero: never for idleness). A retired instance ends
  // the requests it has, then its store goes. 0.2 proxies: an instance
  // per request.
  size_t max_instance_reuse = 128;
  size_t max_instance_concurrency = 16;
  std::chrono::milliseconds instance_idle_timeout{10000};
  // Let other sockets listen on the same address and port
  // (SO_REUSEPORT): several servers, each on a thread with a store of its
  // own, share the connections (`cmhost serve --workers`).
  bool reuse_port = false;
  // A socket already listening to serve instead of binding host:port (one
  // systemd passes, socket activation): each server given it serves a copy
  // (dup), so several share its connections; the caller keeps its own.
  int listen_fd = -1;
  // A GET of exactly this path (no query) is answered by the server itself
  // with `metrics` in Prometheus's text format: requests by status, their
  // latency, instantiation time, instances alive. Empty: none.
  std::string metrics_path;
  // What is counted, shared by the servers given the same (workers); unset
  // with a metrics_path: the server counts on its own.
  std::shared_ptr<ServeMetrics> metrics;
  // A GET or HEAD of exactly this path (no query) is answered by the server
  // itself, never the guest: 200 "ok" while it serves, 503 "draining" once
  // stopping. Empty: every path goes to the guest.
  std::string health_path;
  // What a client may send: the request line and header fields together,
  // how many fields, and the body.
  size_t max_header_bytes = 64 * 1024;
  size_t max_header_count = 100;
  uint64_t max_body_bytes = 64ull << 20;
  // A connection that sends nothing for this long (between requests, or in
  // the middle of one) is closed.
  std::chrono::milliseconds idle_timeout{30000};
  // Once stopping, in-flight requests get this long to end.
  std::chrono::milliseconds drain_timeout{10000};
  // Stop gracefully on SIGTERM and SIGINT (the process's handlers for them
  // are replaced while run() runs).
  bool watch_signals = false;
  // One line per request (method, target, status, bytes, time).
  std::function<void(const std::string& line)> log;
  // What the server reports that is not a response: a guest's trap, a
  // timeout, an instance made anew.
  std::function<void(const std::string& line)> warn;
  // Runs on each store made for an instance before the instance is made
  // (a 0.2 proxy's, one per request, on the thread that serves it; a 0.3
  // service's, one per instance): limits, fuel, what the linker gives
  // that store's instance (it is linked anew for each).
  std::function<void(Store& store)> prepare_request_store;
};

// Counters of one or more servers (ServeConfig::metrics), safe from any
// thread.
class ServeMetrics {
 public:
  ServeMetrics();
  ~ServeMetrics();
  ServeMetrics(const ServeMetrics&) = delete;
  ServeMetrics& operator=(const ServeMetrics&) = delete;
  // In Prometheus's text exposition format.
  std::string text() const;

  struct Counters;  // src/http/metrics.hpp

 private:
  friend struct MetricsAccess;  // the servers that count
  std::unique_ptr<Counters> counters_;
};

// Serves `component` with `linker` (which has WASI and wasi:http from
// add_to_linker with `http`), whichever world it exports:
// - wasi:http/handler@0.3.x (a service): an instance serves many requests,
//   concurrently, in a store of its own that `store`'s loop drives
//   (ServeConfig::max_instance_reuse and after). A guest trap or a timeout
//   fails the requests in that instance and the next go to a new one.
// - wasi:http/incoming-handler@0.2.x (a proxy): each request gets a store
//   and an instance of its own, on a thread of its own (the guest's wasi:io
//   waits block that thread, never the loop); `store` only runs the loop.
// A request that fails gets a 500, or a closed connection once headers were sent.
class Server {
 public:
  // Listens at once: Error (Usage) when the address cannot be bound, or
  // when the component exports neither world.
  Server(const Engine& engine, Store& store, const Linker& linker, const Component& component, const HttpConfig& http,
         ServeConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The address it listens on, as host:port.
  std::string address() const;
  uint16_t port() const;
  // Runs the store's event loop, serving, until stopped and drained.
  void run();
  // Stop accepting; requests in flight end (within drain_timeout), then
  // run() returns. Any thread may call it (one server of several, each on
  // a thread of its own, stops the others).
  void stop();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cmhost::http
