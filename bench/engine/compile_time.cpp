// How long the ahead-of-time backend takes to compile a code-heavy core
// module (translation, the C compiler on every core, linking), into a fresh
// cache: `cmhost_compile_time MODULE.wasm [optimized|baseline]...`. Prints,
// for each tier asked for (default: both), the wall time, the CPU time of
// cmhost and its compilers, and the peak resident memory of cmhost and of
// its largest compiler process.
#include <fmt/core.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost/error.hpp"

namespace {

double cpu_seconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

struct Usage {
  double self_cpu, children_cpu;
  long children_peak_kb;
};

Usage usage_now() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return {cpu_seconds(self), cpu_seconds(children), children.ru_maxrss};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: cmhost_compile_time MODULE.wasm [optimized|baseline]...\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    fmt::print(stderr, "cannot read {}\n", argv[1]);
    return 2;
  }
  std::vector<std::string> tiers(argv + 2, argv + argc);
  if (tiers.empty()) tiers = {"baseline", "optimized"};
  int status = 0;
  for (const std::string& tier : tiers) {
    if (tier != "baseline" && tier != "optimized") {
      fmt::print(stderr, "unknown tier `{}` (optimized or baseline)\n", tier);
      return 2;
    }
    const auto cache =
        std::filesystem::temp_directory_path() / ("cmhost-compile-time-" + std::to_string(::getpid()) + "-" + tier);
    cmhost::engine::EngineConfig config;
    config.backend = cmhost::engine::Backend::AheadOfTime;
    config.cache_dir = cache.string();
    config.aot_tier = tier == "baseline" ? cmhost::engine::EngineConfig::AotTier::Baseline
                                         : cmhost::engine::EngineConfig::AotTier::Optimized;
    try {
      const auto engine = cmhost::engine::make_engine(config);
      const Usage before = usage_now();
      const auto start = std::chrono::steady_clock::now();
      const auto module = engine->compile(bytes);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      const Usage after = usage_now();
      rusage self{};
      getrusage(RUSAGE_SELF, &self);
      fmt::print("{}: {:.2f} MB, {} tier: {:.1f} s wall, {:.1f} s CPU (cmhost {:.1f}, compilers {:.1f}) on {} cores; "
                 "peak resident cmhost {:.0f} MB, largest compiler {:.0f} MB\n",
                 argv[1], bytes.size() / 1e6, tier, took.count(),
                 after.self_cpu - before.self_cpu + after.children_cpu - before.children_cpu,
                 after.self_cpu - before.self_cpu, after.children_cpu - before.children_cpu,
                 std::thread::hardware_concurrency(), self.ru_maxrss / 1024.0, after.children_peak_kb / 1024.0);
    } catch (const cmhost::Error& e) {
      fmt::print(stderr, "{}\n", e.what());
      status = 1;
    }
    std::filesystem::remove_all(cache);
  }
  return status;
}
