#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cmhost/engine/backend.hpp"
#include "engine_choice.hpp"
#include "run.hpp"

namespace cmhost::tools {

struct ServeCommand : WasiOptions {
  std::string file;
  std::string addr = "0.0.0.0:8080";
  std::string artifact;
  std::string next_hop;  // a component for a middleware's imported handler
  std::optional<double> request_timeout_seconds;
  std::optional<double> idle_timeout_seconds;
  size_t max_concurrent_requests = 128;
  size_t max_instance_reuse = 128;
  size_t max_instance_concurrency = 16;
  std::optional<double> instance_idle_timeout_seconds;
  std::string health_path;
  std::string metrics_path;
  std::optional<size_t> workers;  // unset: one per core the process may run on
  bool log = false;
  CommandLineLimits limits;
};

// `cmhost serve [--addr HOST:PORT] [--log] [--request-timeout S] [WASI options] FILE`:
// serves the component's wasi:http/handler@0.3.x over HTTP/1.1 until
// SIGTERM or SIGINT, then finishes the requests in flight and returns 0;
// 2 on usage, decode, validation or link errors.
int serve_command(const ServeCommand& command, const engine::EngineConfig& config);

}  // namespace cmhost::tools
