#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost/wasi.hpp"
#include "engine_choice.hpp"

namespace cmhost::tools {

// The WASI options `run` and `serve` share.
struct WasiOptions {
  std::vector<std::string> env;   // K=V
  std::vector<std::string> dirs;  // HOST[::GUEST][:ro]
  bool env_inherit = false;
  bool allow_network = false;
  bool allow_http = false;
  std::vector<std::string> forbid_headers;
};

struct RunCommand : WasiOptions {
  std::string file;
  std::vector<std::string> args;  // after `--`
  std::string invoke;  // empty: wasi:cli/run#run
  std::optional<std::string> argv0;  // the program's first argument; FILE as given by default
  std::string artifact;  // --artifact: the core modules compiled by `cmhost compile`
  CommandLineLimits limits;
};

// `cmhost run [--dir HOST[::GUEST][:ro]]... [--env K=V]... [--env-inherit] [--allow-network] [--argv0 NAME] [--invoke 'f(args)'] [--artifact A] FILE [ARGS...]`:
// the command component with WASI linked. Returns the guest's exit status
// (or 0 after --invoke printed the result), 1 on a trap, 2 on usage,
// decode, validation or link errors.
int run_command(const RunCommand& command, const engine::EngineConfig& config);

// The guest's WASI configuration from the options (Usage for a malformed
// --env or --dir); `args` starts with the program's name.
wasi::WasiConfig wasi_config(const WasiOptions& options, std::vector<std::string> args);

}  // namespace cmhost::tools
