// A cross-component call passing list<string>: the caller's lowered import
// wired straight to the callee's lifted export (one compiled copy, memory to
// memory), against the same call routed through a host function that lifts
// the list into Vals and lowers them into the callee. Ends with the ratios
// of the same run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include "../common/summary_reporter.hpp"
#include "cmhost/cmhost.hpp"
#include "../common/components.hpp"

namespace {

using cmhost::Val;

using cmhost::bench::component_path;

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
  const Val args[2] = {Val::u32(static_cast<uint32_t>(state.range(0))), Val::bool_(state.range(1) == 1024)};
  const Val& n = args[0];
  for (auto _ : state) {
    auto r = run.call(setup.store, args);
    if (r[0].as_u32() != n.as_u32()) state.SkipWithError("the callee saw another list length");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_CrossCallDirect(benchmark::State& state) { run_calls(state, false); }
void BM_CrossCallThroughHostVals(benchmark::State& state) { run_calls(state, true); }
// Arguments: the number of strings, and their length in bytes (16 or 1024).
#define CROSS_CALL_ARGS ArgsProduct({{10, 100, 1000}, {16, 1024}})
BENCHMARK(BM_CrossCallDirect)->CROSS_CALL_ARGS;
BENCHMARK(BM_CrossCallThroughHostVals)->CROSS_CALL_ARGS;

}  // namespace

// `--count direct|host N BYTES CALLS`: makes CALLS calls of one lane and
// nothing else, with callgrind's instrumentation on only around them, so
// `valgrind --tool=callgrind --instr-atstart=no` counts the instructions
// per call: a measure that other load on the machine cannot disturb.
int count_instructions(char** argv) {
  Setup setup(std::string(argv[2]) == "host");
  const Val args[2] = {Val::u32(static_cast<uint32_t>(std::stoul(argv[3]))), Val::bool_(std::stoul(argv[4]) == 1024)};
  const cmhost::Func run = setup.source_instance->func("run");
  run.call(setup.store, args);  // warm up
  const int calls = std::stoi(argv[5]);
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = 0; i < calls; ++i) run.call(setup.store, args);
  CALLGRIND_STOP_INSTRUMENTATION;
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 6 && std::string(argv[1]) == "--count") return count_instructions(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cmhost::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::printf("\nSummary (same run, CPU time): list<string> from one component to another\n");
  auto& t = reporter.cpu_ns_per_iteration;
  for (const char* bytes : {"16", "1024"})
    for (const char* n : {"10", "100", "1000"}) {
      const std::string args = std::string(n) + "/" + bytes;
      const std::string direct = "BM_CrossCallDirect/" + args, host = "BM_CrossCallThroughHostVals/" + args;
      if (!t.count(direct) || !t.count(host)) continue;
      const double strings = std::stod(n);
      std::printf("  %5s strings of %4s bytes: direct %9.0f ns (%6.1f ns/string), through host Vals %9.0f ns "
                  "(%6.1f ns/string): direct is %.2fx faster\n",
                  n, bytes, t[direct], t[direct] / strings, t[host], t[host] / strings, t[host] / t[direct]);
    }
  return 0;
}
