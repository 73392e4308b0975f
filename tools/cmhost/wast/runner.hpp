// `cmhost wast FILE.wast... | DIR...`: runs component-model test scripts
// such as the official suite's and reports a result per top-level command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "assembler.hpp"

namespace cmhost::tools::wast {

namespace engine = ::cmhost::engine;

struct WastOptions {
  std::vector<std::string> paths;  // .wast files, or directories searched recursively
  bool json = false;
  bool verbose = false;
  double timeout_seconds = 10;
  bool sandbox = true;  // fork per script, so hangs and crashes cost one command
  std::optional<std::string> expect_file;
  std::optional<std::string> write_expect_file;
  std::optional<std::string> inject_crash;  // `file:line`: that command crashes (tests of the runner)
  AssemblerConfig assembler;
  engine::EngineConfig engine;  // the backend the scripts run on
};

// Returns the exit status: 0 all passed (or all as expected), 1 otherwise,
// 2 when the scripts cannot be run at all.
int run_wast(const WastOptions& options);

}  // namespace cmhost::tools::wast
