// The guest side of serving a wasi:http@0.2 proxy: each request gets a
// fresh store and instance on a thread of its own (guests such as
// StarlingMonkey rely on a fresh instance; their wasi:io calls block that
// thread, never the server's loop), talking to the loop through its
// ProxyExchange.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "http/p2/exchange.hpp"
#include "http/p2/types.hpp"

namespace cmhost::http::p2 {

// The name of the component's exported wasi:http/incoming-handler@0.2.x
// `handle`, if it exports one.
std::optional<std::string> incoming_handler_name(const Component& component);

class ProxyRunner {
 public:
  // `prepare` runs on each request's store before the instance is made
  // (limits, fuel); `deadline_ticks`, when given, is each store's epoch
  // deadline from its start (Store::set_epoch_deadline): a guest running
  // past it is interrupted.
  ProxyRunner(const Engine& engine, const Linker& linker, const Component& component, std::string handle_name,
              std::shared_ptr<const TypesContext> types, std::function<void(Store&)> prepare,
              std::shared_ptr<ServeMetrics> metrics, std::optional<uint64_t> deadline_ticks);
  // Cancels the requests still running (their guests' body streams fail)
  // and joins their threads; one whose guest never returns is left to the
  // process's end.
  ~ProxyRunner();
  ProxyRunner(const ProxyRunner&) = delete;
  ProxyRunner& operator=(const ProxyRunner&) = delete;

  // The component requests started from now on are served by (the same
  // one, with other code: Component::with_faster_code).
  void use_component(const Component& component);
  // Runs the request on a new thread; the exchange says when it is done.
  // Error (Usage) when no thread can be started.
  void start(IncomingHead head, std::shared_ptr<ProxyExchange> exchange);
  // Joins the threads whose requests are done.
  void reap();
  // Threads not reaped yet: a guest may run on after its response ended
  // (it timed out, its client left), and still counts against the bound
  // on requests at once.
  size_t live() const { return workers_.size(); }
  // Readable when a thread ended since the last clear (the server reaps
  // then, and lets waiting connections on).
  int ended_fd() const { return ended_fd_; }
  void clear_ended_fd();

 private:
  // What a request's thread uses, shared: a thread left running outlives the runner.
  using HandleSignature = void(Own<types::IncomingRequest>, Own<types::ResponseOutparam>);
  struct Shared {
    Engine engine;
    Linker linker;
    InstancePre pre;  // linked once: each request only instantiates
    TypedExport<TypedFunc<HandleSignature>> handle;  // checked once
    std::shared_ptr<const TypesContext> types;
    std::function<void(Store&)> prepare;
    std::shared_ptr<ServeMetrics> metrics;  // counts instantiations and instances, when set
    std::optional<uint64_t> deadline_ticks;
  };
  struct Worker {
    std::thread thread;
    std::shared_ptr<ProxyExchange> exchange;
    std::shared_ptr<std::atomic<bool>> done = std::make_shared<std::atomic<bool>>(false);
  };
  static void run(const Shared& shared, IncomingHead head, const std::shared_ptr<ProxyExchange>& exchange);

  std::shared_ptr<const Shared> shared_;
  std::list<Worker> workers_;  // touched by the loop's thread only
  int ended_fd_ = -1;
};

}  // namespace cmhost::http::p2
