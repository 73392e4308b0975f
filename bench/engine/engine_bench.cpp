// The core engine backends side by side: guest compute on the interpreter,
// on the ahead-of-time backend and as a native build of the same C kernels;
// call overhead across the host boundary and between components; and
// loading a small compiled component. Ends with ratios from the same run.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../common/components.hpp"
#include "../common/summary_reporter.hpp"
#include "cmhost/cmhost.hpp"
#include "compute.hpp"
#include "guest/kernels.h"

namespace {

using cmhost::Val;
using cmhost::bench::component_path;
namespace engine = cmhost::engine;

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The compute guest instantiated on one backend, its import supplied.
struct Compute {
  explicit Compute(const std::string& backend) : engine(cmhost::bench::engine_named(backend)) {}
  cmhost::Engine engine;
  cmhost::Component component = cmhost::Component::from_file(engine, component_path("compute"));
  cmhost::Store store{engine};
  cmhost::Instance instance = [this] {
    cmhost::Linker linker;
    linker.func_wrap("host-inc", [](uint32_t x) { return x + 1; });
    return linker.instantiate(store, component);
  }();
};

struct Kernel {
  const char* name;
  uint32_t n;
  double (*native)(uint32_t);
  bool floating;
};

double native_sort_hash(uint32_t n) { return static_cast<double>(kernel_sort_hash(n)); }
double native_fib(uint32_t n) { return static_cast<double>(kernel_fib(n)); }
double native_mem_loop(uint32_t n) { return static_cast<double>(kernel_mem_loop(n)); }

const Kernel kKernels[] = {
    {"sort-hash", 100000, native_sort_hash, false},
    {"fib", 27, native_fib, false},
    {"float-loop", 100000, kernel_float_loop, true},
    {"mem-loop", 2000, native_mem_loop, false},
};

void BM_Compute(benchmark::State& state, const Kernel& kernel, const std::string& backend) {
  const double expected = kernel.native(kernel.n);
  if (backend == "native") {
    for (auto _ : state) {
      const double r = kernel.native(kernel.n);
      benchmark::DoNotOptimize(r);
    }
    return;
  }
  Compute compute(backend);
  if (kernel.floating) {
    const auto f = compute.instance.typed_func<double(uint32_t)>(kernel.name);
    for (auto _ : state)
      if (f.call(compute.store, kernel.n) != expected) state.SkipWithError("result differs from native");
  } else {
    const auto f = compute.instance.typed_func<uint64_t(uint32_t)>(kernel.name);
    for (auto _ : state)
      if (static_cast<double>(f.call(compute.store, kernel.n)) != expected)
        state.SkipWithError("result differs from native");
  }
}

void BM_HostCallsGuestTyped(benchmark::State& state, const std::string& backend) {
  Compute compute(backend);
  const auto inc = compute.instance.typed_func<uint32_t(uint32_t)>("inc");
  uint32_t x = 0;
  for (auto _ : state) x = inc.call(compute.store, x);
  if (x != state.iterations()) state.SkipWithError("wrong result");
}

// The same call through the class `cmhost bindgen` generates for the world.
void BM_HostCallsGuestGenerated(benchmark::State& state, const std::string& backend) {
  Compute compute(backend);
  const cmhost_::bench::compute::Compute world(compute.instance);
  uint32_t x = 0;
  for (auto _ : state) x = world.inc(compute.store, x);
  if (x != state.iterations()) state.SkipWithError("wrong result");
}

void BM_HostCallsGuestDynamic(benchmark::State& state, const std::string& backend) {
  Compute compute(backend);
  const cmhost::Func inc = compute.instance.func("inc");
  const Val x = Val::u32(7);
  for (auto _ : state)
    if (inc.call(compute.store, {&x, 1})[0].as_u32() != 8) state.SkipWithError("wrong result");
}

// Items are guest -> host calls, 1 000 per guest call.
void BM_GuestCallsHost(benchmark::State& state, const std::string& backend) {
  Compute compute(backend);
  const auto call_host = compute.instance.typed_func<uint32_t(uint32_t)>("call-host");
  for (auto _ : state)
    if (call_host.call(compute.store, 1000) != 1000) state.SkipWithError("wrong result");
  state.SetItemsProcessed(state.iterations() * 1000);
}

// Items are component -> component calls (a synchronous lower of a lifted
// export of another component), 1 000 per host call.
void BM_ComponentCallsComponent(benchmark::State& state, const std::string& backend) {
  cmhost::Engine engine(cmhost::bench::engine_named(backend));
  const auto callee = cmhost::Component::from_file(engine, component_path("call-callee"));
  const auto caller = cmhost::Component::from_file(engine, component_path("call-caller"));
  cmhost::Store store(engine);
  const cmhost::Instance callee_instance = cmhost::Linker().instantiate(store, callee);
  cmhost::Linker linker;
  linker.define_instance("cmhost:bench/callee", callee_instance);
  const cmhost::Instance caller_instance = linker.instantiate(store, caller);
  const auto run = caller_instance.typed_func<uint32_t(uint32_t)>("run");
  for (auto _ : state)
    if (run.call(store, 1000) != 1000 * 999 / 2) state.SkipWithError("wrong result");
  state.SetItemsProcessed(state.iterations() * 1000);
}

// A small component from its compiled artifact, as a new process would load
// it: each iteration loads a fresh copy of the file (the loader would hand
// back a library it has already loaded), instantiates and calls once.
void BM_LoadArtifactAndInstantiate(benchmark::State& state) {
  cmhost::Engine engine(cmhost::bench::engine_named("aot"));
  const std::vector<uint8_t> bytes = read_file(component_path("call-callee"));
  const std::string dir = std::string(CMHOST_BENCH_AOT_CACHE) + "/load-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string original = dir + "/callee.cmhost-aot";
  cmhost::Component::write_artifact(engine, bytes, original);
  int copy = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string path = dir + "/copy-" + std::to_string(copy++);
    std::filesystem::copy_file(original, path);
    state.ResumeTiming();
    const auto component = cmhost::Component::from_bytes_with_artifact(engine, bytes, path);
    cmhost::Store store(engine);
    const auto instance = cmhost::Linker().instantiate(store, component);
    if (instance.typed_func<uint32_t(uint32_t)>("id").call(store, 7) != 7) state.SkipWithError("wrong result");
  }
  std::filesystem::remove_all(dir);
}

// The same component from the cache in a process that has loaded it before.
void BM_CachedComponentAndInstantiate(benchmark::State& state, const std::string& backend) {
  cmhost::Engine engine(cmhost::bench::engine_named(backend));
  const std::vector<uint8_t> bytes = read_file(component_path("call-callee"));
  for (auto _ : state) {
    const auto component = cmhost::Component::from_bytes(engine, bytes);
    cmhost::Store store(engine);
    const auto instance = cmhost::Linker().instantiate(store, component);
    if (instance.typed_func<uint32_t(uint32_t)>("id").call(store, 7) != 7) state.SkipWithError("wrong result");
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Compile into the cache before anything is timed.
  for (const char* name : {"compute", "call-callee", "call-caller"}) {
    cmhost::Engine engine(cmhost::bench::engine_named("aot"));
    (void)cmhost::Component::from_file(engine, component_path(name));
  }
  for (const Kernel& kernel : kKernels)
    for (const char* backend : {"native", "aot", "interp"})
      // The interpreter runs a kernel for seconds: once is enough.
      if (std::string(backend) == "interp")
        benchmark::RegisterBenchmark((std::string("compute/") + kernel.name + "/" + backend).c_str(),
                                     [&kernel, backend](benchmark::State& s) { BM_Compute(s, kernel, backend); })
            ->Unit(benchmark::kMillisecond)
            ->Iterations(1);
      else
        benchmark::RegisterBenchmark((std::string("compute/") + kernel.name + "/" + backend).c_str(),
                                     [&kernel, backend](benchmark::State& s) { BM_Compute(s, kernel, backend); })
            ->Unit(benchmark::kMillisecond)
            ->MinTime(0.5);
  for (const char* backend : {"interp", "aot"}) {
    const std::string b = backend;
    benchmark::RegisterBenchmark(("call/host-guest-typed/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_HostCallsGuestTyped(s, b); });
    benchmark::RegisterBenchmark(("call/host-guest-generated/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_HostCallsGuestGenerated(s, b); });
    benchmark::RegisterBenchmark(("call/host-guest-dynamic/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_HostCallsGuestDynamic(s, b); });
    benchmark::RegisterBenchmark(("call/guest-host/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_GuestCallsHost(s, b); });
    benchmark::RegisterBenchmark(("call/component-component/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_ComponentCallsComponent(s, b); });
    benchmark::RegisterBenchmark(("load/cached-component+instantiate/" + b).c_str(),
                                 [b](benchmark::State& s) { BM_CachedComponentAndInstantiate(s, b); })
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("load/fresh-artifact+instantiate/aot", BM_LoadArtifactAndInstantiate)
      ->Unit(benchmark::kMicrosecond)
      ->Iterations(200);

  benchmark::Initialize(&argc, argv);
  cmhost::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  // Run names carry their options ("/min_time:0.500"): found by prefix.
  const auto& times = reporter.cpu_ns_per_iteration;
  const auto time_of = [&](const std::string& name) -> std::optional<double> {
    for (const auto& [run, ns] : times)
      if (run == name || run.rfind(name + "/", 0) == 0) return ns;
    return std::nullopt;
  };
  const auto ratio = [&](const std::string& a, const std::string& b) -> std::string {
    const auto x = time_of(a), y = time_of(b);
    if (!x || !y || *y == 0) return "n/a";
    return fmt::format("{:.2f}x", *x / *y);
  };
  fmt::print("\nsummary (CPU time, this run)\n");
  for (const Kernel& kernel : kKernels) {
    const std::string base = std::string("compute/") + kernel.name + "/";
    fmt::print("  {:<11} aot {} native, interp {} native, aot {} faster than interp\n", kernel.name,
               ratio(base + "aot", base + "native"), ratio(base + "interp", base + "native"),
               ratio(base + "interp", base + "aot"));
  }
  const auto per_call = [&](const std::string& name, double per) {
    const auto x = time_of(name);
    return x ? fmt::format("{:.1f} ns", *x / per) : std::string("n/a");
  };
  for (const char* call : {"host-guest-typed", "host-guest-generated", "host-guest-dynamic"})
    fmt::print("  {:<22} interp {}, aot {}\n", call, per_call(std::string("call/") + call + "/interp", 1),
               per_call(std::string("call/") + call + "/aot", 1));
  for (const char* call : {"guest-host", "component-component"})
    fmt::print("  {:<22} interp {}, aot {} per call\n", call, per_call(std::string("call/") + call + "/interp", 1000),
               per_call(std::string("call/") + call + "/aot", 1000));
  return 0;
}
