#include "engine_choice.hpp"

#include <fmt/core.h>

#include "cmhost/error.hpp"

namespace cmhost::tools {

engine::EngineConfig engine_config(const std::string& name) {
  engine::EngineConfig config;
  if (name == "interp") {
    config.backend = engine::Backend::Interpreter;
  } else if (name == "aot") {
    config.backend = engine::Backend::AheadOfTime;
    config.on_compile = [](const std::string& what) { fmt::print(stderr, "cmhost: {}\n", what); };
  } else {
    throw Error(ErrorKind::Usage, "unknown engine `" + name + "` (expected " + kEngineNames + ")");
  }
  return config;
}

}  // namespace cmhost::tools
