#include "proxy.hpp"

#include <fmt/core.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <system_error>
#include <utility>

#include "cmhost/error.hpp"
#include "http/metrics.hpp"

namespace cmhost::http::p2 {

std::optional<std::string> incoming_handler_name(const Component& component) {
  for (const NamedExtern& e : component.type().exports)
    if (e.desc.sort == Sort::Instance && e.name.starts_with("wasi:http/incoming-handler@0.2.")) return e.name + "#handle";
  return std::nullopt;
}

ProxyRunner::ProxyRunner(const Engine& engine, const Linker& linker, const Component& component,
                         std::string handle_name, std::shared_ptr<const TypesContext> types,
                         std::function<void(Store&)> prepare, std::shared_ptr<ServeMetrics> metrics,
                         std::optional<uint64_t> deadline_ticks)
    : shared_([&] {
        InstancePre pre = linker.instantiate_pre(component);
        auto handle = pre.typed_func<HandleSignature>(handle_name);
        return std::make_shared<const Shared>(Shared{engine, linker, std::move(pre), std::move(handle), std::move(types),
                                                     std::move(prepare), std::move(metrics), deadline_ticks});
      }()),
      ended_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (ended_fd_ < 0) throw Error(ErrorKind::Usage, fmt::format("eventfd: {}", std::strerror(errno)));
}

void ProxyRunner::use_component(const Component& component) {
  auto next = std::make_shared<Shared>(*shared_);
  next->pre = next->linker.instantiate_pre(component);
  next->handle = next->pre.typed_func<HandleSignature>(shared_->handle.name());
  shared_ = std::move(next);  // threads running keep the one they started with
}

void ProxyRunner::clear_ended_fd() {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(ended_fd_, &count, sizeof count);
}

ProxyRunner::~ProxyRunner() {
  // A cancelled request's guest returns once its next wasi:io call fails:
  // wait a little for the threads still running, then let them be.
  for (Worker& worker : workers_) worker.exchange->cancel();
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (Worker& worker : workers_) {
    while (!*worker.done && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (*worker.done)
      worker.thread.join();
    else
      worker.thread.detach();
  }
  // A thread left running may still signal it: the descriptor stays open.
  if (std::all_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.done->load(); })) ::close(ended_fd_);
}

void ProxyRunner::start(IncomingHead head, std::shared_ptr<ProxyExchange> exchange) {
  reap();
  Worker& worker = workers_.emplace_back();
  worker.exchange = exchange;
  try {
    worker.thread = std::thread(
        [shared = shared_, done = worker.done, ended = ended_fd_, head = std::move(head), exchange]() mutable {
          run(*shared, std::move(head), exchange);
          *done = true;
          const uint64_t one = 1;
          [[maybe_unused]] const ssize_t n = ::write(ended, &one, sizeof one);
        });
  } catch (const std::system_error& e) {
    workers_.pop_back();
    throw Error(ErrorKind::Usage, fmt::format("cannot start a thread for the request: {}", e.what()));
  }
}

void ProxyRunner::reap() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (!*it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    it = workers_.erase(it);
  }
}

void ProxyRunner::run(const Shared& shared, IncomingHead head, const std::shared_ptr<ProxyExchange>& exchange) {
  std::optional<std::string> failure;
  bool counted = false;  // an instance in metrics' count
  std::optional<Store> store;
  try {
    store.emplace(shared.engine);
    if (shared.prepare) shared.prepare(*store);
    if (shared.deadline_ticks) store->set_epoch_deadline(*shared.deadline_ticks);
    const auto started = std::chrono::steady_clock::now();
    const Instance instance = shared.pre.instantiate(*store);
    if (shared.metrics) {
      MetricsAccess::counters(*shared.metrics).instantiation_seconds.observe(std::chrono::steady_clock::now() - started);
      ++MetricsAccess::counters(*shared.metrics).instances_live;
      counted = true;
    }
    const auto handle = shared.handle.in(instance);
    const Own<types::IncomingRequest> request = make_incoming_request(*store, shared.types, std::move(head), exchange);
    const Own<types::ResponseOutparam> outparam = make_response_outparam(*store, shared.types, exchange);
    handle.call(*store, request, outparam);
  } catch (const Error& e) {
    failure = fmt::format("{}: {}", to_string(e.kind()), e.what());
  } catch (const std::exception& e) {
    failure = fmt::format("host error: {}", e.what());
  }
  // A trap is what went wrong, not the body that dropping the store then
  // leaves unfinished: the loop hears of it first.
  if (failure) exchange->fail_response(*failure);
  // The store goes before the exchange hears that the guest is done: a
  // body dropped unfinished says so as the store drops it.
  store.reset();
  if (counted) --MetricsAccess::counters(*shared.metrics).instances_live;
  exchange->worker_done();
}

}  // namespace cmhost::http::p2
