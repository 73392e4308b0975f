// A cross-component call passing list<string>: the caller's lowered import
// wired straight to the callee's lifted export (one compiled copy, memory to
// memory), against the same call routed through a host function that lifts
// the list into Vals and lowers them into the callee. Ends with the ratios
// of the same run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#include "../common/summary_reporter.hpp"
#include "cmhost/cmhost.hpp"

namespace {

using cmhost::Val;

std::string component_path(const char* name) { return std::string(CMHOST_BENCH_COMPONENTS) + "/" + name + ".wasm"; }

struct Setup {
  cmhost::Engine engine;
  cmhost::Component sink = cmhost::Component::from_file(engine, component_path("sink"));
  cmhost::Component source = cmhost::Component::from_file(engine, component_path("source"));
  cmhost::Store store{engine};
  cmhost::Instance sink_instance = cmhost::Linker().instantiate(store, sink);
  std::optional<cmhost::Instance> source_instance;

  explicit Setup(bool through_host) {
    cmhost::Linker linker;
    if (through_host) {
      const cmhost::Func take = sink_instance.func("take");
      linker.define_func("cmhost:bench/sink#take", take.type(),
                         [this, take](std::span<const Val> args) { return take.call(store, args); });
    } else {
      linker.define_instance("cmhost:bench/sink", sink_instance);
    }
    source_instance = linker.instantiate(store, source);
  }
};

void run_calls(benchmark::State& state, bool through_host) {
  Setup setup(through_host);
  const cmhost::Func run = setup.source_instance->func("run");
  const Val n = Val::u32(static_cast<uint32_t>(state.range(0)));
  for (auto _ : state) {
    auto r = run.call(setup.store, {&n, 1});
    if (r[0].as_u32() != n.as_u32()) state.SkipWithError("the callee saw another list length");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_CrossCallDirect(benchmark::State& state) { run_calls(state, false); }
void BM_CrossCallThroughHostVals(benchmark::State& state) { run_calls(state, true); }
BENCHMARK(BM_CrossCallDirect)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);
BENCHMARK(BM_CrossCallThroughHostVals)->Arg(10)->Arg(100)->Arg(1000)->Arg(10000);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cmhost::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::printf("\nSummary (same run): list<string> from one component to another\n");
  for (const char* n : {"10", "100", "1000", "10000"}) {
    const std::string direct = std::string("BM_CrossCallDirect/") + n;
    const std::string host = std::string("BM_CrossCallThroughHostVals/") + n;
    auto& t = reporter.ns_per_iteration;
    if (!t.count(direct) || !t.count(host)) continue;
    const double strings = std::stod(n);
    std::printf("  %5s strings: direct %10.0f ns (%5.1f ns/string), through host Vals %10.0f ns (%5.1f ns/string): "
                "direct is %.2fx faster\n",
                n, t[direct], t[direct] / strings, t[host], t[host] / strings, t[host] / t[direct]);
  }
  return 0;
}
