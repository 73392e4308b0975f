// Canonical ABI stage benchmarks. Ends with a summary of ratios measured in
// this same run (bench/README.md records the latest).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "../common/dom_batch.hpp"
#include "../common/summary_reporter.hpp"
#include "cmhost/abi.hpp"

namespace {

using cmhost::abi::AbiContext;
using cmhost::abi::CanonOptions;
using cmhost::abi::HostMemory;
using cmhost::abi::Type;
using cmhost::abi::TypeRef;
using cmhost::abi::Val;
using cmhost::abi::ValueAbi;

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kHeapBase = 16;

// A memory holding `value` of `type`, lowered flat; the flat values to lift it back.
struct Lowered {
  HostMemory memory;
  std::vector<uint64_t> flat;
  Lowered(const TypeRef& type, const Val& value, size_t memory_size) : memory(memory_size, kHeapBase) {
    memory.set_log_allocations(false);
    AbiContext cx(&memory, CanonOptions{});
    ValueAbi(type, cmhost::abi::AddrWidth::I32).lower_flat(cx, value, flat);
  }
};

void BM_Memcpy_1MiB(benchmark::State& state) {
  std::vector<uint8_t> src(kMiB, 7), dst(kMiB);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kMiB);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * int64_t(kMiB));
}
BENCHMARK(BM_Memcpy_1MiB);

void BM_LiftListU8_1MiB(benchmark::State& state) {
  const auto type = Type::list(Type::u8());
  std::vector<uint8_t> bytes(kMiB);
  for (size_t i = 0; i < kMiB; ++i) bytes[i] = uint8_t(i * 31);
  Lowered in(type, Val::bytes(bytes), 2 * kMiB + 64);
  ValueAbi abi(type, cmhost::abi::AddrWidth::I32);
  AbiContext cx(&in.memory, CanonOptions{});
  for (auto _ : state) {
    Val v = abi.lift_flat(cx, in.flat);
    benchmark::DoNotOptimize(v.packed_bytes().data());
  }
  state.SetBytesProcessed(state.iterations() * int64_t(kMiB));
}
BENCHMARK(BM_LiftListU8_1MiB);

// Lowers `value` of `type` into a fresh heap once per iteration.
void lower_loop(benchmark::State& state, const TypeRef& type, const Val& value, size_t memory_size) {
  HostMemory memory(memory_size, kHeapBase);
  memory.set_log_allocations(false);
  ValueAbi abi(type, cmhost::abi::AddrWidth::I32);
  AbiContext cx(&memory, CanonOptions{});
  std::vector<uint64_t> flat;
  for (auto _ : state) {
    memory.reset(kHeapBase);
    flat.clear();
    abi.lower_flat(cx, value, flat);
    benchmark::DoNotOptimize(flat.data());
    benchmark::ClobberMemory();
  }
}

void BM_LowerListU8_1MiB(benchmark::State& state) {
  std::vector<uint8_t> bytes(kMiB, 3);
  lower_loop(state, Type::list(Type::u8()), Val::bytes(bytes), 2 * kMiB);
  state.SetBytesProcessed(state.iterations() * int64_t(kMiB));
}
BENCHMARK(BM_LowerListU8_1MiB);

TypeRef endpoint_list_type() {
  return Type::list(Type::record({{"s", Type::string()}, {"port", Type::option(Type::u16())}}));
}

// Lifts a list `value` of `type` from guest memory once per iteration.
void lift_list_loop(benchmark::State& state, const TypeRef& type, const Val& value, size_t memory_size) {
  Lowered in(type, value, memory_size);
  ValueAbi abi(type, cmhost::abi::AddrWidth::I32);
  AbiContext cx(&in.memory, CanonOptions{});
  for (auto _ : state) {
    Val v = abi.lift_flat(cx, in.flat);
    benchmark::DoNotOptimize(v.items().data());
  }
  state.SetItemsProcessed(state.iterations() * int64_t(value.list_size()));
}

void BM_LiftRecordList(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  std::vector<Val> items;
  for (uint32_t i = 0; i < n; ++i)
    items.push_back(Val::record({Val::string("host-" + std::to_string(i) + ".example.org"),
                                 i % 3 ? Val::some(Val::u16(uint16_t(i))) : Val::none()}));
  lift_list_loop(state, endpoint_list_type(), Val::list(std::move(items)), size_t{n} * 48 + 4096);
}
BENCHMARK(BM_LiftRecordList)->Arg(100)->Arg(1000)->Arg(10000);

void BM_LiftOperations(benchmark::State& state) {
  const auto rows = static_cast<uint32_t>(state.range(0));
  lift_list_loop(state, Type::list(cmhost::bench::operation_type()),
                 cmhost::bench::build_operations(rows), size_t{rows} * 512 + 65536);
}
BENCHMARK(BM_LiftOperations)->Arg(1000);

void BM_LowerOperations(benchmark::State& state) {
  const auto rows = static_cast<uint32_t>(state.range(0));
  const Val batch = cmhost::bench::build_operations(rows);
  lower_loop(state, Type::list(cmhost::bench::operation_type()), batch, size_t{rows} * 512 + 65536);
  state.SetItemsProcessed(state.iterations() * int64_t(batch.list_size()));
}
BENCHMARK(BM_LowerOperations)->Arg(1000);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cmhost::bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  auto& t = reporter.ns_per_iteration;
  auto& e = reporter.ns_per_item;
  std::printf("\nSummary (same run):\n");
  if (t.count("BM_Memcpy_1MiB")) {
    const double memcpy_ns = t["BM_Memcpy_1MiB"];
    if (t.count("BM_LiftListU8_1MiB"))
      std::printf("  list<u8> 1 MiB lift:  %.0f ns = %.2fx memcpy (%.0f ns)\n", t["BM_LiftListU8_1MiB"],
                  t["BM_LiftListU8_1MiB"] / memcpy_ns, memcpy_ns);
    if (t.count("BM_LowerListU8_1MiB"))
      std::printf("  list<u8> 1 MiB lower: %.0f ns = %.2fx memcpy\n", t["BM_LowerListU8_1MiB"],
                  t["BM_LowerListU8_1MiB"] / memcpy_ns);
  }
  std::vector<double> per_element;
  for (const char* n : {"BM_LiftRecordList/100", "BM_LiftRecordList/1000", "BM_LiftRecordList/10000"})
    if (e.count(n)) {
      per_element.push_back(e[n]);
      std::printf("  %s: %.1f ns/element\n", n, e[n]);
    }
  if (per_element.size() == 3) {
    const auto [lo, hi] = std::minmax_element(per_element.begin(), per_element.end());
    std::printf("  record-list lift spread (max/min - 1): %.0f%%\n", (*hi / *lo - 1) * 100);
  }
  for (const char* n : {"BM_LiftOperations/1000", "BM_LowerOperations/1000"})
    if (e.count(n)) std::printf("  %s: %.1f ns/element (8007 operations)\n", n, e[n]);
  return 0;
}
