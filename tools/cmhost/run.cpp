#include "run.hpp"

#include <fmt/core.h>

#include <cstring>
#include <fstream>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "cmhost/wasi.hpp"

extern char** environ;

namespace cmhost::tools {

namespace {

// A core module (a preview1 program) starts with version 1; a component
// with its layer's version.
bool is_core_module(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  char header[8] = {};
  in.read(header, sizeof header);
  return in.gcount() == 8 && std::memcmp(header, "\0asm\x01\0\0\0", 8) == 0;
}

// Runs wasi:cli/run, or the export --invoke names.
int run_instance(const RunCommand& command, const Instance& instance, Store& store) {
  if (command.invoke.empty()) return wasi::run(store, instance);
  const auto open = command.invoke.find('(');
  const std::string name = command.invoke.substr(0, open);
  std::string args;
  if (open != std::string::npos) {
    const auto close = command.invoke.find_last_of(')');
    if (close == std::string::npos || close < open)
      throw Error(ErrorKind::Usage, "expected `name(arguments)`, got `" + command.invoke + "`");
    args = command.invoke.substr(open + 1, close - open - 1);
  }
  const Func func = instance.func(name);
  try {
    const auto results = func.call(store, parse_wave_args(func.type().params, args));
    if (func.type().result) fmt::print("{}\n", to_wave(*func.type().result, results.at(0)));
  } catch (const wasi::Exit& exit) {
    return exit.code();
  }
  return 0;
}

}  // namespace

wasi::WasiConfig wasi_config(const WasiOptions& options, std::vector<std::string> args) {
  wasi::WasiConfig wasi;
  wasi.args = std::move(args);
  if (options.env_inherit)
    for (char** e = environ; *e; ++e) {
      const std::string entry(*e);
      const size_t eq = entry.find('=');
      if (eq != std::string::npos) wasi.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
  for (const std::string& entry : options.env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorKind::Usage, "--env takes NAME=VALUE, got `" + entry + "`");
    wasi.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (std::string dir : options.dirs) {
    wasi::Preopen preopen;
    if (dir.size() > 3 && dir.compare(dir.size() - 3, 3, ":ro") == 0) {
      preopen.read_only = true;
      dir.resize(dir.size() - 3);
    }
    const size_t sep = dir.find("::");
    preopen.host_path = dir.substr(0, sep);
    preopen.guest_path = sep == std::string::npos ? preopen.host_path : dir.substr(sep + 2);
    if (preopen.host_path.empty()) throw Error(ErrorKind::Usage, "--dir takes HOST[::GUEST][:ro], got `" + dir + "`");
    wasi.preopens.push_back(std::move(preopen));
  }
  wasi.allow_network = options.allow_network;
  return wasi;
}

int run_command(const RunCommand& command, const engine::EngineConfig& config) {
  try {
    if (is_core_module(command.file))
      throw Error(ErrorKind::Usage, command.file +
                                        " is a core module, not a component: make it one first, e.g. with jco's "
                                        "`componentNew` and its wasi_snapshot_preview1.command.wasm adapter");
    Engine engine(config);
    const auto component = load_component(engine, command.file, command.artifact);
    std::vector<std::string> args{command.argv0.value_or(command.file)};
    args.insert(args.end(), command.args.begin(), command.args.end());
    const wasi::WasiConfig wasi = wasi_config(command, std::move(args));
    Linker linker;
    wasi::add_to_linker(linker, wasi);
    http::HttpConfig http;
    http.allow_outgoing = command.allow_http;
    http.forbidden_headers = command.forbid_headers;
    http::add_to_linker(linker, http);
    Store store(engine);
    GuestLimiter limiter(engine, store, command.limits);
    try {
      return run_instance(command, linker.instantiate(store, component), store);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Trap) throw;
      throw Error(ErrorKind::Trap, limiter.explain(e));
    }
  } catch (const Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return e.kind() == ErrorKind::Trap ? 1 : 2;
  }
}


}  // namespace cmhost::tools
