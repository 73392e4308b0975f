// `--engine=interp|aot`, on every command that runs guests.
#pragma once

#include <string>

#include "cmhost/engine.hpp"

namespace cmhost::tools {

inline constexpr const char* kEngineNames = "interp|aot";

// The engine configuration an `--engine` value names: `aot` compiles each
// component on first use into the cache, saying so on stderr. Usage for
// other names.
engine::EngineConfig engine_config(const std::string& name);

}  // namespace cmhost::tools
