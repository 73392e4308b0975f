#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "engine_choice.hpp"

namespace cmhost::tools {

struct RunCommand {
  std::string file;
  std::vector<std::string> args;  // after `--`
  std::vector<std::string> env;   // K=V
  std::vector<std::string> dirs;  // HOST[::GUEST][:ro]
  bool env_inherit = false;
  bool allow_network = false;
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

}  // namespace cmhost::tools
