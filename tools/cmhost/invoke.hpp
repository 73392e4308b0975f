#pragma once

#include <string>

#include "cmhost/engine/backend.hpp"
#include "engine_choice.hpp"

namespace cmhost::tools {

// `cmhost invoke FILE 'name(args)'`: instantiates the component and calls one
// export, printing its result as WAVE; its core modules come from `artifact`
// when one is named (`--artifact`). Returns the process exit status: 0 on
// success, 1 on a trap, 2 on usage, decode, validation or link errors and
// artifacts refused.
int run_invoke(const std::string& file, const std::string& call, bool stub_imports,
               const engine::EngineConfig& config, const CommandLineLimits& limits = {},
               const std::string& artifact = {});

// `cmhost compile FILE -o OUT`: the component's core modules compiled ahead
// of time into an artifact. Returns 0, or 2 with the error on stderr.
int run_compile(const std::string& file, const std::string& output, const engine::EngineConfig& config);

}  // namespace cmhost::tools
