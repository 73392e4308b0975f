#include "serve.hpp"

#include <fmt/core.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::tools {

namespace {

// HOST:PORT, [IPv6]:PORT, or :PORT (every address).
void parse_addr(const std::string& addr, http::ServeConfig& config) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string::npos) throw Error(ErrorKind::Usage, "--addr takes HOST:PORT, got `" + addr + "`");
  std::string host = addr.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = addr.substr(colon + 1);
  unsigned long value = 0;
  size_t used = 0;
  try {
    value = std::stoul(port, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (port.empty() || used != port.size() || value > 65535)
    throw Error(ErrorKind::Usage, "--addr takes HOST:PORT with a port of 0 to 65535, got `" + addr + "`");
  config.host = host;
  config.port = static_cast<uint16_t>(value);
}

// A middleware's imported wasi:http/handler@0.3.x goes to an instance of
// `file` in the server's store (its own imports from `linker`). What this
// returns links a new one each time the middleware gets a new instance, so
// a next hop that trapped is replaced along with it.
std::function<void(Store&)> next_hop_linker(Engine& engine, Linker& linker, const Component& middleware,
                                            const std::string& file) {
  std::string import;
  for (const NamedExtern& i : middleware.type().imports)
    if (i.desc.sort == Sort::Instance && i.name.starts_with("wasi:http/handler@0.3.")) import = i.name;
  const bool is_service =
      std::any_of(middleware.type().exports.begin(), middleware.type().exports.end(),
                  [](const NamedExtern& e) { return e.name.starts_with("wasi:http/handler@0.3."); });
  if (import.empty() || !is_service)
    throw Error(ErrorKind::Usage,
                "--next-hop: the served component imports no wasi:http/handler@0.3.x to link it to, or exports none");
  Component next = Component::from_file(engine, file);
  const bool serves = std::any_of(next.type().exports.begin(), next.type().exports.end(),
                                  [&](const NamedExtern& e) { return e.name == import; });
  if (!serves) throw Error(ErrorKind::Usage, "--next-hop: " + file + " does not export " + import);
  // The next hop's own imports come from the linker as it is now: one that
  // imports a handler too gets the network, never an earlier next hop.
  Linker next_imports = linker;
  linker.allow_shadowing(true);
  return [&linker, next_imports = std::move(next_imports), next = std::move(next), import](Store& store) {
    linker.define_instance(import, next_imports.instantiate(store, next), import);
  };
}

// Freed guest memories kept for the next requests' instances (a 0.2
// proxy's instance has a few; an idle one holds page tables only).
constexpr size_t kPooledMemories = 256;

// The cores this process may run on (its affinity mask, which a
// container's CPU set narrows), at least one.
size_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<size_t>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// The listening socket systemd passes (socket activation: LISTEN_PID is
// this process, LISTEN_FDS counts descriptors from 3), or -1. The variables
// are unset, as sd_listen_fds does, so that guests' environments and
// children never see them.
int activated_socket() {
  const char* pid = std::getenv("LISTEN_PID");
  const char* fds = std::getenv("LISTEN_FDS");
  if (!pid || !fds) return -1;
  const bool ours = std::strtol(pid, nullptr, 10) == static_cast<long>(::getpid());
  const long count = std::strtol(fds, nullptr, 10);
  ::unsetenv("LISTEN_PID");
  ::unsetenv("LISTEN_FDS");
  ::unsetenv("LISTEN_FDNAMES");
  if (!ours || count < 1) return -1;
  if (count > 1) fmt::print(stderr, "cmhost serve: serving the first of the {} sockets passed (descriptor 3)\n", count);
  return 3;
}

// One server with its store, its linker (a --next-hop defines an instance
// in it per store) and its limits: one per worker thread.
struct Worker {
  Linker linker;
  std::function<void(Store&)> link_next_hop;
  std::optional<Store> store;
  std::optional<GuestLimiter> limiter;
  std::optional<http::Server> server;
};

// Runs each worker's server on a thread of its own until SIGTERM or SIGINT
// (or a worker that fails), then stops them all and waits for their drain.
int run_workers(std::vector<std::unique_ptr<Worker>>& workers) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGUSR1);  // a worker that failed
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);  // the threads inherit the mask
  std::atomic<int> status{0};
  std::vector<std::thread> threads;
  for (auto& worker : workers)
    threads.emplace_back([&worker, &status] {
      try {
        worker->server->run();
      } catch (const Error& e) {
        fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
        status = e.kind() == ErrorKind::Trap ? 1 : 2;
        ::kill(::getpid(), SIGUSR1);
      }
    });
  int signal = 0;
  sigwait(&stop_signals, &signal);
  if (signal != SIGUSR1) fmt::print(stderr, "cmhost serve: stopping: finishing the requests in flight\n");
  for (auto& worker : workers) worker->server->stop();
  for (auto& thread : threads) thread.join();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return status.load();
}

}  // namespace

int serve_command(const ServeCommand& command, const engine::EngineConfig& chosen_config) {
  try {
    // Guest code that runs past --request-timeout is interrupted: metered.
    engine::EngineConfig engine_config = chosen_config;
    if (command.request_timeout_seconds) engine_config.metering = true;
    // Instances come and go with requests: their memories are reused.
    engine_config.pooling.memory_slots = std::max<size_t>(engine_config.pooling.memory_slots, kPooledMemories);
    Engine engine(engine_config);
    const auto component = load_component(engine, command.file, command.artifact);
    Linker linker;
    wasi::add_to_linker(linker, wasi_config(command, {command.file}));
    http::HttpConfig http_config;
    http_config.allow_outgoing = command.allow_http;
    http_config.forbidden_headers = command.forbid_headers;
    http::add_to_linker(linker, http_config);

    http::ServeConfig config;
    parse_addr(command.addr, config);
    config.listen_fd = activated_socket();  // instead of --addr
    if (command.request_timeout_seconds) {
      if (!(*command.request_timeout_seconds > 0) || !std::isfinite(*command.request_timeout_seconds))
        throw Error(ErrorKind::Usage, "--request-timeout takes a positive number of seconds");
      config.request_timeout =
          std::chrono::milliseconds(static_cast<int64_t>(std::ceil(*command.request_timeout_seconds * 1000)));
    }
    if (command.idle_timeout_seconds)
      config.idle_timeout =
          std::chrono::milliseconds(static_cast<int64_t>(std::ceil(*command.idle_timeout_seconds * 1000)));
    if (command.max_concurrent_requests == 0) throw Error(ErrorKind::Usage, "--max-concurrent-requests takes at least 1");
    config.max_concurrent_requests = command.max_concurrent_requests;
    if (command.max_instance_reuse == 0) throw Error(ErrorKind::Usage, "--max-instance-reuse takes at least 1");
    if (command.max_instance_concurrency == 0)
      throw Error(ErrorKind::Usage, "--max-instance-concurrency takes at least 1");
    config.max_instance_reuse = command.max_instance_reuse;
    config.max_instance_concurrency = command.max_instance_concurrency;
    if (command.instance_idle_timeout_seconds)
      config.instance_idle_timeout =
          std::chrono::milliseconds(static_cast<int64_t>(std::ceil(*command.instance_idle_timeout_seconds * 1000)));
    config.health_path = command.health_path;
    for (const auto& [option, path] : {std::pair{"--health-path", &command.health_path},
                                       std::pair{"--metrics-path", &command.metrics_path}})
      if (!path->empty() && path->front() != '/')
        throw Error(ErrorKind::Usage, std::string(option) + " takes a path that starts with /, got `" + *path + "`");
    config.metrics_path = command.metrics_path;
    if (!config.metrics_path.empty()) config.metrics = std::make_shared<http::ServeMetrics>();  // all workers'

    const size_t worker_count = command.workers.value_or(usable_cores());
    if (worker_count == 0) throw Error(ErrorKind::Usage, "--workers takes at least 1");
    config.reuse_port = worker_count > 1;
    config.warn = [](const std::string& line) { fmt::print(stderr, "cmhost serve: {}\n", line); };
    if (command.log) config.log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };

    // Each worker: a server on a thread of its own, with a store, linker
    // and limits of its own; the engine and the component are shared. The
    // first binds the address (its port, when 0 was asked for, is everyone's).
    std::vector<std::unique_ptr<Worker>> workers;
    for (size_t i = 0; i < worker_count; ++i) {
      auto worker = std::make_unique<Worker>();
      worker->linker = linker;
      if (!command.next_hop.empty())
        worker->link_next_hop = next_hop_linker(engine, worker->linker, component, command.next_hop);
      http::ServeConfig worker_config = config;
      if (i > 0) worker_config.port = workers.front()->server->port();
      // One worker alone watches the signals itself; several are stopped
      // by the main thread, which waits for them.
      worker_config.watch_signals = worker_count == 1;
      // Only when there is something to prepare: an instance of a store
      // left as it is comes from the linked-once InstancePre.
      if (command.limits.max_memory_bytes || command.limits.fuel || worker->link_next_hop)
        worker_config.prepare_request_store = [limits = command.limits,
                                               link = worker->link_next_hop](Store& store) {
          if (limits.max_memory_bytes) {
            StoreLimits store_limits = store.limits();
            store_limits.total_memory_bytes = limits.max_memory_bytes;
            store.set_limits(store_limits);
          }
          if (limits.fuel) store.set_fuel(limits.fuel);
          if (link) link(store);
        };
      worker->store.emplace(engine);
      worker->limiter.emplace(engine, *worker->store, command.limits);
      worker->server.emplace(engine, *worker->store, worker->linker, component, http_config, worker_config);
      workers.push_back(std::move(worker));
    }
    fmt::print(stderr, "Serving HTTP on http://{}/\n", workers.front()->server->address());
    std::fflush(stderr);
    if (workers.size() == 1) {
      workers.front()->server->run();
      return 0;
    }
    return run_workers(workers);
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return e.kind() == ErrorKind::Trap ? 1 : 2;
  }
}

}  // namespace cmhost::tools
