// The cmhost command line. It uses only the public API.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "abi_check.hpp"
#include "abi_demo.hpp"
#include "inspect.hpp"
#include "invoke.hpp"

int main(int argc, char** argv) {
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*check) return cmhost::tools::run_abi_check(vector_files, verbose);
    if (*demo) return cmhost::tools::run_abi_demo();
    if (*inspect) return cmhost::tools::run_inspect(inspect_file);
    if (*invoke) return cmhost::tools::run_invoke(component_file, call_text, stub_imports);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cmhost: {}\n", e.what());
    return 2;
  }
  return 0;
}
