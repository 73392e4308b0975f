// How long the ahead-of-time backend takes to compile a code-heavy core
// module (translation, the C compiler on every core, linking), into a fresh
// cache: `cmhost_compile_time MODULE.wasm`. Prints the size and the seconds.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost/error.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: cmhost_compile_time MODULE.wasm\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    fmt::print(stderr, "cannot read {}\n", argv[1]);
    return 2;
  }
  const auto cache = std::filesystem::temp_directory_path() / ("cmhost-compile-time-" + std::to_string(::getpid()));
  cmhost::engine::EngineConfig config;
  config.backend = cmhost::engine::Backend::AheadOfTime;
  config.cache_dir = cache.string();
  int status = 0;
  try {
    const auto engine = cmhost::engine::make_engine(config);
    const auto start = std::chrono::steady_clock::now();
    const auto module = engine->compile(bytes);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    fmt::print("{}: {:.2f} MB, {} imports, {} exports, compiled ahead of time in {:.1f} s on {} cores\n", argv[1],
               bytes.size() / 1e6, module->imports().size(), module->exports().size(), took.count(),
               std::thread::hardware_concurrency());
  } catch (const cmhost::Error& e) {
    fmt::print(stderr, "{}\n", e.what());
    status = 1;
  }
  std::filesystem::remove_all(cache);
  return status;
}
