// What serving costs per request before the guest runs: an instance of a
// wasi:http handler, made and dropped, on each engine, through
// Linker::instantiate (link and check every time) and through
// InstancePre::instantiate (linked once). Each iteration makes a store, an
// instance in it, and drops both, as `cmhost serve` does for a 0.2 proxy's
// request.
//   cmhost_instantiate_bench HANDLER.wasm... [benchmark flags]
#include <benchmark/benchmark.h>

#include <cstring>
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

std::unique_ptr<Handler> load(const std::string& path, const std::string& backend) {
  cmhost::engine::EngineConfig config;
  config.backend = backend == "aot" ? cmhost::engine::Backend::AheadOfTime : cmhost::engine::Backend::Interpreter;
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
  }
  int count = static_cast<int>(flags.size());
  benchmark::Initialize(&count, flags.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
