// What serving costs per request before the guest runs: an instance of a
// wasi:http handler, made and dropped, on each engine, through
// Linker::instantiate (link and check every time) and through
// InstancePre::instantiate (linked once), and on aot with pooled memories
// too (EngineConfig::pooling, as `cmhost serve` sets it). Each iteration
// makes a store, an instance in it, and drops both, as `cmhost serve` does
// for a 0.2 proxy's request. `idle-pooled` reports the resident memory an
// idle pooled instance's memories keep (beyond its touched pages, dropped).
//   cmhost_instantiate_bench HANDLER.wasm... [benchmark flags]
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "cmhost/http.hpp"
#include "cmhost/wasi.hpp"

namespace {

struct Handler {
  cmhost::Engine engine;
  cmhost::Component component;
  cmhost::Linker linker;
  cmhost::InstancePre pre;
};

std::unique_ptr<Handler> load(const std::string& path, const std::string& backend, size_t pooled_memories = 0) {
  cmhost::engine::EngineConfig config;
  config.backend = backend == "aot" ? cmhost::engine::Backend::AheadOfTime : cmhost::engine::Backend::Interpreter;
  config.pooling.memory_slots = pooled_memories;
  cmhost::Engine engine(config);
  cmhost::Component component = cmhost::Component::from_file(engine, path);
  cmhost::Linker linker;
  cmhost::wasi::add_to_linker(linker, cmhost::wasi::WasiConfig{});
  cmhost::http::add_to_linker(linker, cmhost::http::HttpConfig{});
  cmhost::InstancePre pre = linker.instantiate_pre(component);
  return std::make_unique<Handler>(Handler{std::move(engine), std::move(component), std::move(linker), std::move(pre)});
}

void BM_LinkerInstantiate(benchmark::State& state, const Handler& handler) {
  for (auto _ : state) {
    cmhost::Store store(handler.engine);
    benchmark::DoNotOptimize(handler.linker.instantiate(store, handler.component));
  }
}

void BM_PreInstantiate(benchmark::State& state, const Handler& handler) {
  for (auto _ : state) {
    cmhost::Store store(handler.engine);
    benchmark::DoNotOptimize(handler.pre.instantiate(store));
  }
}

// The process's resident bytes and its page tables' (/proc/self/status:
// VmRSS and VmPTE), together.
int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  int64_t total = 0;
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0 || line.rfind("VmPTE:", 0) == 0) total += std::stoll(line.substr(6)) * 1024;
  return total;
}

// kIdle instances made and dropped at once, their memories left in the
// pool: what the process holds for them after (resident pages and page
// tables), per instance.
void BM_IdlePooled(benchmark::State& state, const Handler& handler) {
  constexpr int kIdle = 64;
  for (auto _ : state) {
    const int64_t empty = resident_bytes();
    {  // the first ones fill the pool (page tables for the slots' pages)
      std::vector<cmhost::Store> warm;
      warm.reserve(kIdle);
      for (int i = 0; i < kIdle; ++i) handler.pre.instantiate(warm.emplace_back(handler.engine));
    }
    const int64_t before = resident_bytes();
    state.counters["first_fill_KiB_per_idle_instance"] = static_cast<double>(before - empty) / 1024.0 / kIdle;
    {
      std::vector<cmhost::Store> stores;
      stores.reserve(kIdle);
      for (int i = 0; i < kIdle; ++i) handler.pre.instantiate(stores.emplace_back(handler.engine));
    }
    state.counters["resident_KiB_per_idle_instance"] =
        static_cast<double>(resident_bytes() - before) / 1024.0 / kIdle;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> flags{argv[0]};
  std::vector<std::string> handlers;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) == 0)
      flags.push_back(argv[i]);
    else
      handlers.emplace_back(argv[i]);
  }
  if (handlers.empty()) {
    std::fprintf(stderr, "usage: %s HANDLER.wasm... [benchmark flags]\n", argv[0]);
    return 2;
  }
  std::vector<std::unique_ptr<Handler>> loaded;  // compiled (and cached) before anything is timed
  for (const std::string& path : handlers) {
    const std::string name = std::filesystem::path(path).stem().string();
    for (const char* backend : {"interp", "aot"}) {
      loaded.push_back(load(path, backend));
      const Handler& handler = *loaded.back();
      const std::string suffix = name + "/" + backend;
      benchmark::RegisterBenchmark(("instantiate/linker/" + suffix).c_str(),
                                   [&handler](benchmark::State& s) { BM_LinkerInstantiate(s, handler); })
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(("instantiate/pre/" + suffix).c_str(),
                                   [&handler](benchmark::State& s) { BM_PreInstantiate(s, handler); })
          ->Unit(benchmark::kMicrosecond);
    }
    loaded.push_back(load(path, "aot", 256));
    const Handler& pooled = *loaded.back();
    benchmark::RegisterBenchmark(("instantiate/pre-pooled/" + name + "/aot").c_str(),
                                 [&pooled](benchmark::State& s) { BM_PreInstantiate(s, pooled); })
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("idle-pooled/" + name + "/aot").c_str(),
                                 [&pooled](benchmark::State& s) { BM_IdlePooled(s, pooled); })
        ->Iterations(1);
  }
  int count = static_cast<int>(flags.size());
  benchmark::Initialize(&count, flags.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
