// The cmhost command line. It uses only the public API.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <csignal>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "abi_check.hpp"
#include "abi_demo.hpp"
#include "engine_choice.hpp"
#include "wit/bindgen.hpp"
#include "inspect.hpp"
#include "run.hpp"
#include "serve.hpp"
#include "invoke.hpp"
#include "wast/runner.hpp"

namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// $XDG_CACHE_HOME/cmhost/wast, else ~/.cache/cmhost/wast; none without either.
std::optional<std::string> default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/cmhost/wast";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/cmhost/wast";
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  // A write to a closed pipe or socket (the guest's stdout piped into
  // `head`, a peer gone) is an error the guest sees (EPIPE), as in Rust
  // programs and wasmtime, not the end of the process.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"cmhost: a WebAssembly Component Model host runtime"};
  app.require_subcommand(1);

  std::vector<std::string> vector_files;
  bool verbose = false;
  auto* check = app.add_subcommand("abi-check", "Check canonical ABI reference vectors (JSON Lines)");
  check->add_option("files", vector_files, "Vector files; the kind comes from each file's stem")
      ->required()
      ->check(CLI::ExistingFile);
  check->add_flag("-v,--verbose", verbose, "Also print each trap's reason next to the expected one");

  auto* demo = app.add_subcommand("abi-demo", "Lower a sample value, show its memory layout, lift it back");

  std::string inspect_file;
  auto* inspect = app.add_subcommand("inspect", "Print a component's world as WIT, as `wasm-tools component wit` does");
  inspect->add_option("file", inspect_file, "Component binary (.wasm)")->required();

  std::string component_file, call_text;
  bool stub_imports = false;
  auto* invoke = app.add_subcommand("invoke", "Instantiate a component and call one export");
  invoke->add_option("file", component_file, "Component binary (.wasm)")->required();
  invoke->add_option("call", call_text, "The call in WAVE, e.g. 'add(1, 2)' or 'ns:pkg/iface#f(\"x\")'")
      ->required();
  invoke->add_flag("--stub-imports", stub_imports,
                   "Supply missing imported functions with stubs that trap when called");
  std::string engine_name = "interp";
  std::vector<std::string> compat;
  const auto add_engine_option = [&](CLI::App* command) {
    command
        ->add_option("--engine", engine_name,
                     "interp: wabt's interpreter; aot: native code through wasm2c and the C compiler, compiled on "
                     "first use into $XDG_CACHE_HOME/cmhost (else ~/.cache/cmhost); a component of over 512 KiB of "
                     "code runs TinyCC's baseline code while its optimized code is built in the background; "
                     "aot-baseline, aot-optimized: one of the two")
        ->capture_default_str()
        ->check(CLI::IsMember({"interp", "aot", "aot-baseline", "aot-optimized"}));
    command
        ->add_option("--compat", compat,
                     "Run guests built for an earlier rule of the Component Model (repeatable): "
                     "sync-cancel-in-set lets a synchronous stream or future cancel through while its end is in a "
                     "waitable set, as guests built with wit-bindgen 0.58 and older do (component-model#647)")
        ->check(CLI::IsMember({"sync-cancel-in-set"}))
        ->allow_extra_args(false);
  };
  add_engine_option(invoke);
  std::string artifact_file;
  const auto add_artifact_option = [&](CLI::App* command) {
    command->add_option("--artifact", artifact_file,
                        "Take the core modules from this artifact (written by `cmhost compile` for FILE) instead of "
                        "compiling them or using the cache; implies --engine=aot");
  };
  add_artifact_option(invoke);
  cmhost::tools::CommandLineLimits limits;
  const CLI::Validator whole_number(
      [](std::string& input) {
        return !input.empty() && input.find_first_not_of("0123456789") == std::string::npos
                   ? std::string()
                   : "expected a whole number, got `" + input + "`";
      },
      "UINT");
  // A timer's wait must be representable: positive, finite, at most a year.
  const CLI::Validator seconds(
      [](std::string& input) {
        char* end = nullptr;
        const double value = std::strtod(input.c_str(), &end);
        return end != input.c_str() && *end == '\0' && std::isfinite(value) && value > 0 && value <= 31'536'000
                   ? std::string()
                   : "expected seconds above 0 and at most 31536000 (a year), got `" + input + "`";
      },
      "SECONDS");
  const auto add_limit_options = [&](CLI::App* command) {
    command->add_option("--fuel", limits.fuel,
                        "Units of guest code (loop iterations and calls) the run may take; past them it traps")
        ->check(whole_number);
    command->add_option("--timeout", limits.timeout_seconds,
                        "Seconds the guest may run; then it traps (exit status 1)")
        ->check(seconds);
    command->add_option("--max-memory", limits.max_memory_bytes,
                        "Bytes of linear memory the guest's memories may hold together; growing past them fails")
        ->check(whole_number);
  };
  add_limit_options(invoke);

  std::string compile_file, compile_output;
  auto* compile = app.add_subcommand("compile", "Compile a component's core modules to native code ahead of time");
  compile->add_option("file", compile_file, "Component binary (.wasm)")->required();
  compile->add_option("-o,--output", compile_output, "The artifact to write (default: FILE with .cmhost-aot)");
  bool compile_metered = false;
  compile->add_flag("--metered", compile_metered,
                    "Make the guest code count what it runs, as --fuel and --timeout need when the artifact is run "
                    "with them (--artifact)");
  bool compile_baseline = false;
  compile->add_flag("--baseline", compile_baseline,
                    "Compile with TinyCC, unoptimised: seconds for any component, slower code (the tier a big "
                    "component runs first while its optimized code is built)");

  cmhost::tools::RunCommand run;
  auto* run_cmd = app.add_subcommand("run", "Run a WASI command component (wasi:cli/run), or call an export with WASI linked");
  // Options come before FILE; FILE and everything after it (the program's
  // arguments, dashes and all) are left for the program, as `wasmtime run` does.
  run_cmd->prefix_command();
  run_cmd->footer("Usage: cmhost run [OPTIONS] FILE [--] [ARGS...]");
  const auto add_wasi_options = [](CLI::App* command, cmhost::tools::WasiOptions& options) {
    command->add_option("--env", options.env, "An environment variable NAME=VALUE for the guest (repeatable)")
        ->allow_extra_args(false);
    command->add_flag("--env-inherit", options.env_inherit, "Give the guest this process's environment");
    command->add_flag("--allow-network", options.allow_network,
                      "Let the guest use the host's network through wasi:sockets (TCP, UDP, name lookup)");
    command->add_flag("--allow-http", options.allow_http, "Let the guest send HTTP requests (wasi:http's client)");
    command->add_option("--forbid-header", options.forbid_headers,
                        "A header field the guest may not set, beyond wasi:http's default forbidden ones (repeatable)")
        ->allow_extra_args(false);
    command->add_option("--dir", options.dirs,
                        "Preopen a host directory as GUEST (default: the host path), read-only with :ro; the guest "
                        "reaches nothing outside it (repeatable)")
        ->allow_extra_args(false);
  };
  add_wasi_options(run_cmd, run);
  run_cmd->add_option("--invoke", run.invoke, "Call this export instead of wasi:cli/run, e.g. 'f(1, \"x\")'");
  run_cmd->add_option("--argv0", run.argv0, "The program's first argument (default: FILE as given)");
  add_engine_option(run_cmd);
  add_artifact_option(run_cmd);
  add_limit_options(run_cmd);

  cmhost::tools::ServeCommand serve;
  auto* serve_cmd = app.add_subcommand("serve", "Serve a wasi:http component (handler@0.3 or incoming-handler@0.2) over HTTP/1.1");
  serve_cmd->add_option("file", serve.file, "Component binary (.wasm)")->required();
  serve_cmd->add_option("--addr", serve.addr,
                        "The address to listen on, HOST:PORT (port 0: any free one); a socket systemd passes "
                        "(LISTEN_FDS, socket activation) is served instead")
      ->capture_default_str();
  serve_cmd->add_flag("--log", serve.log, "Log one line per request to stderr");
  serve_cmd->add_option("--request-timeout", serve.request_timeout_seconds,
                        "Seconds a request may take; past them the client gets a 500, the instance is retired, and guest "
                        "code still running is interrupted")
      ->check(seconds);
  serve_cmd->add_option("--idle-timeout", serve.idle_timeout_seconds,
                        "Seconds a client may send nothing (between requests or within one) before it is closed "
                        "(default 30)")
      ->check(seconds);
  serve_cmd->add_option("--max-concurrent-requests", serve.max_concurrent_requests,
                        "Requests in the guest at once; more wait")
      ->capture_default_str()
      ->check(whole_number);
  serve_cmd->add_option("--max-instance-reuse", serve.max_instance_reuse,
                        "Requests one instance of a wasi:http@0.3 service serves before it is retired (it ends those "
                        "it has, then goes); 0.2 proxies get an instance per request")
      ->capture_default_str()
      ->check(whole_number);
  serve_cmd->add_option("--max-instance-concurrency", serve.max_instance_concurrency,
                        "Requests one instance of a 0.3 service serves at once; more go to another instance")
      ->capture_default_str()
      ->check(whole_number);
  serve_cmd->add_option("--instance-idle-timeout", serve.instance_idle_timeout_seconds,
                        "Seconds an instance of a 0.3 service may go without a request before it is retired "
                        "(default 10)")
      ->check(seconds);
  serve_cmd->add_option("--workers", serve.workers,
                        "Servers, each on a thread with a store of its own, sharing the address (SO_REUSEPORT), the "
                        "engine and the compiled component; each has its own --max-concurrent-requests (default: one "
                        "per core the process may run on)")
      ->check(whole_number);
  serve_cmd->add_option("--health-path", serve.health_path,
                        "A path the server answers itself, without the guest: 200 `ok` while it serves, 503 once it "
                        "drains (for a load balancer's health checks)");
  serve_cmd->add_option("--metrics-path", serve.metrics_path,
                        "A path the server answers itself with its metrics, in Prometheus's text format: requests by "
                        "status, latency, instantiation time, instances alive (all workers together)");
  serve_cmd->add_option("--max-memory", serve.limits.max_memory_bytes,
                        "Bytes of linear memory the guest's memories may hold together; growing past them fails")
      ->check(whole_number);
  serve_cmd->add_option("--fuel", serve.limits.fuel,
                        "Units of guest code (loop iterations and calls) each 0.2 proxy's request, or each 0.3 "
                        "service's instance, may take; past them it traps (500)")
      ->check(whole_number);
  serve_cmd->add_option("--next-hop", serve.next_hop,
                        "A component exporting wasi:http/handler@0.3.x that a served middleware's imported handler "
                        "calls (default: the network, as wasi:http/client)");
  add_wasi_options(serve_cmd, serve);
  add_engine_option(serve_cmd);
  add_artifact_option(serve_cmd);

  cmhost::tools::BindgenCommand bindgen;
  bindgen.node_modules = env_or("CMHOST_JCO_DIR", CMHOST_DEFAULT_NODE_MODULES);
  bindgen.node = env_or("CMHOST_NODE", "node");
  bindgen.wit_encoder = CMHOST_WIT_ENCODER;
  auto* bindgen_cmd = app.add_subcommand("bindgen", "Generate a C++ header of typed host bindings for a world");
  bindgen_cmd->add_option("input", bindgen.input, "A component binary (.wasm), or a WIT file or directory")
      ->required();
  bindgen_cmd->add_option("--world", bindgen.world,
                          "The world of a WIT package (`name` or `ns:pkg/name`); needed when it has several");
  bindgen_cmd->add_option("-o,--output", bindgen.output, "The header to write (default: stdout)");
  bindgen_cmd->add_option("--split", bindgen.split_dir,
                          "Write one header per interface and world.hpp including them into this directory");
  bindgen_cmd->add_option("--namespace", bindgen.root_namespace,
                          "C++ namespace of the world's own items (default: the world's package and name)");
  bindgen_cmd->add_option("--interface-namespace", bindgen.interface_namespace,
                          "C++ namespace holding the interfaces' namespaces, e.g. myapp::bindings (default: the "
                          "global namespace)");
  std::string containers = "owning";
  bindgen_cmd
      ->add_option("--containers", containers,
                   "Strings, lists and maps as owning (std::string, std::vector, std::map), frame (FrameString, "
                   "FrameVector: from the thread's frame arena) or pmr (std::pmr) containers; or views: owning, "
                   "and exports' results read in place (std::string_view, ListView) by a callback")
      ->capture_default_str()
      ->check(CLI::IsMember({"owning", "frame", "pmr", "views"}));
  bindgen_cmd->add_option("--jco-dir", bindgen.node_modules,
                          "node_modules holding the pinned jco, for WIT input (default: $CMHOST_JCO_DIR, else the "
                          "source tree's)")
      ->capture_default_str();

  cmhost::tools::wast::WastOptions wast;
  wast.assembler.node_modules = env_or("CMHOST_JCO_DIR", CMHOST_DEFAULT_NODE_MODULES);
  wast.assembler.helper_script = CMHOST_WAST_ASSEMBLER;
  wast.assembler.node = env_or("CMHOST_NODE", "node");
  std::string cache_dir;
  bool no_cache = false;
  std::string expect_file, write_expect_file;
  auto* wast_cmd = app.add_subcommand("wast", "Run component-model test scripts (.wast), such as the official suite");
  wast_cmd->add_option("paths", wast.paths, "Scripts, or directories searched for *.wast")->required();
  wast_cmd->add_flag("--json", wast.json, "Print one JSON object with every result instead of text");
  wast_cmd->add_flag("-v,--verbose", wast.verbose,
                     "Also show passing assertions with the expected message next to cmhost's");
  wast_cmd->add_option("--command-timeout", wast.timeout_seconds,
                       "Seconds a script command may take before it counts as a hang")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  wast_cmd->add_option("--expect", expect_file,
                       "Expectations file (`file:line status outcome reason` per command that is not a plain "
                       "pass, and `commands: N`); exit non-zero only when the results differ from it");
  wast_cmd->add_option("--write-expect", write_expect_file,
                       "Write every command that did not pass to this expectations file");
  wast_cmd->add_option("--jco-dir", wast.assembler.node_modules,
                       "node_modules holding the pinned jco (default: $CMHOST_JCO_DIR, else the source tree's)")
      ->capture_default_str();
  wast_cmd->add_option("--cache-dir", cache_dir,
                       "Where assembled components are cached (default: $XDG_CACHE_HOME/cmhost/wast)");
  wast_cmd->add_flag("--no-cache", no_cache, "Assemble every component text again");
#ifdef CMHOST_TEST_HOOKS
  // Only in cmhost-test-hooks, the CLI the runner's own tests use to show
  // how a crash is reported; never in the cmhost that is installed.
  std::string inject_crash;
  wast_cmd->add_option("--inject-crash", inject_crash, "Crash in the command at FILE:LINE");
#endif
  add_engine_option(wast_cmd);
  bool in_process = false;
  wast_cmd->add_flag("--in-process", in_process,
                     "Run the scripts in this process, without time limits or crash isolation (for debuggers)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  // An artifact is native code: it runs on the ahead-of-time engine, which
  // an explicit --engine=interp contradicts.
  const auto engine_for = [&](CLI::App* command) -> std::optional<std::string> {
    if (artifact_file.empty()) return engine_name;
    if (command->get_option("--engine")->count() > 0 && engine_name != "aot") {
      fmt::print(stderr,
                 "cmhost: usage error: --artifact holds native code compiled ahead of time: it runs on "
                 "--engine=aot, not --engine={}\n",
                 engine_name);
      return std::nullopt;
    }
    return "aot";
  };
  try {
    if (*check) return cmhost::tools::run_abi_check(vector_files, verbose);
    if (*demo) return cmhost::tools::run_abi_demo();
    if (*inspect) return cmhost::tools::run_inspect(inspect_file);
    if (*bindgen_cmd) {
      using Containers = cmhost::tools::BindgenOptions::Containers;
      bindgen.containers = containers == "frame"   ? Containers::Frame
                           : containers == "pmr"   ? Containers::Pmr
                           : containers == "views" ? Containers::Views
                                                   : Containers::Owning;
      return cmhost::tools::run_bindgen(bindgen);
    }
    if (*run_cmd) {
      std::vector<std::string> words = run_cmd->remaining();
      if (words.empty()) {
        fmt::print(stderr, "cmhost: usage error: run needs a component file\n");
        return 2;
      }
      run.file = words.front();
      // A `--` right after FILE separates it from the program's arguments
      // (as `jco run` and `cargo run -- ARGS` take it); a later one is theirs.
      auto first_arg = words.begin() + 1;
      if (first_arg != words.end() && *first_arg == "--") ++first_arg;
      run.args.assign(first_arg, words.end());
      run.limits = limits;
      run.artifact = artifact_file;
      const auto engine = engine_for(run_cmd);
      if (!engine) return 2;
      return cmhost::tools::run_command(run, cmhost::tools::engine_config(*engine, limits, compat));
    }
    if (*serve_cmd) {
      serve.artifact = artifact_file;
      const auto engine = engine_for(serve_cmd);
      if (!engine) return 2;
      return cmhost::tools::serve_command(serve, cmhost::tools::engine_config(*engine, serve.limits, compat));
    }
    if (*invoke) {
      const auto engine = engine_for(invoke);
      if (!engine) return 2;
      return cmhost::tools::run_invoke(component_file, call_text, stub_imports,
                                       cmhost::tools::engine_config(*engine, limits, compat), limits, artifact_file);
    }
    if (*compile) {
      if (compile_output.empty()) {
        const auto dot = compile_file.rfind('.');
        const auto slash = compile_file.rfind('/');
        const bool has_extension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
        compile_output = (has_extension ? compile_file.substr(0, dot) : compile_file) + ".cmhost-aot";
      }
      cmhost::engine::EngineConfig config = cmhost::tools::engine_config("aot");
      config.metering = compile_metered;
      if (compile_baseline) config.aot_tier = cmhost::engine::EngineConfig::AotTier::Baseline;
      return cmhost::tools::run_compile(compile_file, compile_output, config);
    }
    if (*wast_cmd) {
      wast.assembler.cache_dir = no_cache ? std::nullopt : cache_dir.empty() ? default_cache_dir() : cache_dir;
      if (!expect_file.empty()) wast.expect_file = expect_file;
      if (!write_expect_file.empty()) wast.write_expect_file = write_expect_file;
      wast.sandbox = !in_process;
      wast.engine = cmhost::tools::engine_config(engine_name);
#ifdef CMHOST_TEST_HOOKS
      if (!inject_crash.empty()) wast.inject_crash = inject_crash;
#endif
      return cmhost::tools::wast::run_wast(wast);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "cmhost: {}\n", e.what());
    return 2;
  }
  return 0;
}
