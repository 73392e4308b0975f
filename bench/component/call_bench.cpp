// Synchronous calls with almost nothing to copy: the host calling a lifted
// export, and one component calling another's export through a lowered
// import (n calls from one guest loop, so the host's entry cost is shared).
// These are the fast paths the concurrency machinery must leave alone.
#include <benchmark/benchmark.h>

#include <string>

#include "cmhost/cmhost.hpp"
#include "../common/components.hpp"

namespace {

using cmhost::Val;

using cmhost::bench::component_path;

struct Setup {
  cmhost::Engine engine;
  cmhost::Component callee = cmhost::Component::from_file(engine, component_path("call-callee"));
  cmhost::Component caller = cmhost::Component::from_file(engine, component_path("call-caller"));
  cmhost::Store store{engine};
  cmhost::Instance callee_instance = cmhost::Linker().instantiate(store, callee);
  cmhost::Instance caller_instance = [this] {
    cmhost::Linker linker;
    linker.define_instance("cmhost:bench/callee", callee_instance);
    return linker.instantiate(store, caller);
  }();
};

void BM_HostCallsExport(benchmark::State& state) {
  Setup setup;
  const cmhost::Func id = setup.callee_instance.func("id");
  const Val x = Val::u32(7);
  for (auto _ : state) {
    auto r = id.call(setup.store, {&x, 1});
    if (r[0].as_u32() != 7) state.SkipWithError("wrong result");
  }
  state.SetItemsProcessed(state.iterations());
}

// The same call typed: the signature checked once, no Vals.
void BM_HostCallsExportTyped(benchmark::State& state) {
  Setup setup;
  const auto id = setup.callee_instance.typed_func<uint32_t(uint32_t)>("id");
  for (auto _ : state) {
    if (id.call(setup.store, 7) != 7) state.SkipWithError("wrong result");
  }
  state.SetItemsProcessed(state.iterations());
}

// Items are the cross-component calls; time per item is one call.
void BM_ComponentCallsComponent(benchmark::State& state) {
  Setup setup;
  const cmhost::Func run = setup.caller_instance.func("run");
  const auto n = static_cast<uint32_t>(state.range(0));
  const Val arg = Val::u32(n);
  for (auto _ : state) {
    auto r = run.call(setup.store, {&arg, 1});
    if (r[0].as_u32() != n * (n - 1) / 2) state.SkipWithError("wrong result");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_HostCallsExport);
BENCHMARK(BM_HostCallsExportTyped);
BENCHMARK(BM_ComponentCallsComponent)->Arg(1000);

}  // namespace

BENCHMARK_MAIN();
