#include "serve.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>

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

}  // namespace

int serve_command(const ServeCommand& command, const engine::EngineConfig& chosen_config) {
  try {
    // Guest code that runs past --request-timeout is interrupted: metered.
    engine::EngineConfig engine_config = chosen_config;
    if (command.request_timeout_seconds) engine_config.metering = true;
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
    config.watch_signals = true;
    config.warn = [](const std::string& line) { fmt::print(stderr, "cmhost serve: {}\n", line); };
    if (command.log) config.log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };

    // A 0.2 proxy's requests each get a store, a 0.3 service's instances
    // share one: the limits apply to each request's store, and afresh to
    // the shared store whenever it makes an instance.
    std::function<void(Store&)> link_next_hop;
    if (!command.next_hop.empty()) link_next_hop = next_hop_linker(engine, linker, component, command.next_hop);
    config.prepare_request_store = [limits = command.limits, &link_next_hop](Store& store) {
      if (limits.max_memory_bytes) {
        StoreLimits store_limits = store.limits();
        store_limits.total_memory_bytes = limits.max_memory_bytes;
        store.set_limits(store_limits);
      }
      if (limits.fuel) store.set_fuel(limits.fuel);
      if (link_next_hop) link_next_hop(store);
    };
    Store store(engine);
    GuestLimiter limiter(engine, store, command.limits);
    http::Server server(engine, store, linker, component, http_config, config);
    fmt::print(stderr, "Serving HTTP on http://{}/\n", server.address());
    std::fflush(stderr);
    server.run();
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return e.kind() == ErrorKind::Trap ? 1 : 2;
  }
}

}  // namespace cmhost::tools
