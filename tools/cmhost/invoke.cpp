#include "invoke.hpp"

#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "support/files.hpp"

namespace cmhost::tools {

namespace {

struct CallText {
  std::string name;
  std::string args;
};

CallText split_call(const std::string& text) {
  const auto open = text.find('(');
  if (open == std::string::npos) return {text, ""};  // `name` alone: no arguments
  const auto close = text.find_last_not_of(" \t\n");
  if (close == std::string::npos || text[close] != ')')
    throw Error(ErrorKind::Usage, "expected `name(arguments)`, got `" + text + "`");
  return {text.substr(0, open), text.substr(open + 1, close - open - 1)};
}

}  // namespace

int run_invoke(const std::string& file, const std::string& call, bool stub_imports,
               const engine::EngineConfig& config, const CommandLineLimits& limits, const std::string& artifact) {
  try {
    Engine engine(config);
    const auto component = load_component(engine, file, artifact);
    const CallText text = split_call(call);
    Linker linker;
    linker.allow_stub_imports(stub_imports);
    Store store(engine);
    GuestLimiter limiter(engine, store, limits);
    try {
      const Instance instance = linker.instantiate(store, component);
      const Func func = instance.func(text.name);
      const auto args = parse_wave_args(func.type().params, text.args);
      const auto results = func.call(store, args);
      if (func.type().result) fmt::print("{}\n", to_wave(*func.type().result, results.at(0)));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Trap) throw;
      throw Error(ErrorKind::Trap, limiter.explain(e));
    }
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return e.kind() == ErrorKind::Trap ? 1 : 2;
  }
}

int run_compile(const std::string& file, const std::string& output, const engine::EngineConfig& config) {
  try {
    const std::vector<uint8_t> bytes = support::read_file(file);
    Engine engine(config);
    Component::write_artifact(engine, bytes, output);
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return 2;
  }
}

}  // namespace cmhost::tools
