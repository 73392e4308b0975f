// Runs a script's commands so that a hang or a crash costs one command, not
// the run: the commands execute in a forked child that reports each result
// over a pipe; when one takes longer than the time limit, or the child dies,
// that command fails and a new child continues with the next one.
#pragma once

#include <optional>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "assembler.hpp"
#include "report.hpp"
#include "script.hpp"

namespace cmhost::tools::wast {

namespace engine = ::cmhost::engine;

// `binaries[i]` is the component of commands[i], if it has one. The child
// aborts on reaching the command at `crash_at_line`, if given: how the
// runner's own tests make a crash.
std::vector<Result> run_sandboxed(const engine::EngineConfig& config, const std::vector<Command>& commands,
                                  const std::vector<std::optional<Assembled>>& binaries, double timeout_seconds,
                                  std::optional<int> crash_at_line = std::nullopt);

// The same in this process, without time limits (for debuggers).
std::vector<Result> run_in_process(const engine::EngineConfig& config, const std::vector<Command>& commands,
                                   const std::vector<std::optional<Assembled>>& binaries);

}  // namespace cmhost::tools::wast
