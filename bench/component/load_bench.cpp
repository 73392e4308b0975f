// Loading a component of about 2 MB: cmhost's own decoding and planning,
// the interpreter's module load, and full instantiation, side by side.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "binary/binary.hpp"
#include "cmhost/cmhost.hpp"
#include "cmhost/engine/backend.hpp"
#include "validate/validate.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

void leb(Bytes& out, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    out.push_back(v ? (b | 0x80) : b);
  } while (v);
}

void section(Bytes& out, uint8_t id, const Bytes& body) {
  out.push_back(id);
  leb(out, body.size());
  out.insert(out.end(), body.begin(), body.end());
}

void name(Bytes& out, std::string_view s) {
  leb(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

enum class Shape { BigData, BigCode };

// A core module exporting memory and `sum(i32 i32) -> i32`, of about `size`
// bytes: one big data segment (a C guest with a big table), or thousands of
// functions (a code-heavy guest).
Bytes core_module(size_t size, Shape shape) {
  const size_t data_size = shape == Shape::BigData ? size : 1024;
  // Each filler function: (i32 i32) -> i32, 292 bytes of adds and xors.
  const size_t filler_funcs = shape == Shape::BigCode ? size / 292 : 0;
  Bytes m = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  section(m, 1, {0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f});           // type: (i32 i32) -> i32
  Bytes funcs;
  leb(funcs, 1 + filler_funcs);
  for (size_t i = 0; i <= filler_funcs; ++i) funcs.push_back(0x00);
  section(m, 3, funcs);
  Bytes memory = {0x01, 0x00};                                          // one memory, min pages
  leb(memory, data_size / 65536 + 2);
  section(m, 5, memory);
  Bytes exports = {0x02};
  name(exports, "memory");
  exports.insert(exports.end(), {0x02, 0x00});
  name(exports, "sum");
  exports.insert(exports.end(), {0x00, 0x00});
  section(m, 7, exports);
  Bytes code;
  leb(code, 1 + filler_funcs);
  code.insert(code.end(), {0x07, 0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b});  // local.get 0 1 i32.add
  for (size_t f = 0; f < filler_funcs; ++f) {
    Bytes body = {0x00, 0x20, 0x00};  // no locals; local.get 0
    for (uint32_t k = 0; k < 48; ++k) body.insert(body.end(), {0x20, 0x01, 0x6a, 0x41, uint8_t(k & 0x3f), 0x73});
    body.push_back(0x0b);  // (x + b) ^ k, 48 times
    leb(code, body.size());
    code.insert(code.end(), body.begin(), body.end());
  }
  section(m, 10, code);
  Bytes data = {0x01, 0x00, 0x41, 0x00, 0x0b};                         // active, memory 0, offset 0
  leb(data, data_size);
  for (size_t i = 0; i < data_size; ++i) data.push_back(uint8_t(i * 2654435761u >> 24));
  section(m, 11, data);
  return m;
}

// A component around it: `sum: func(a: u32, b: u32) -> u32`.
Bytes component(size_t size, Shape shape) {
  Bytes c = {0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00};
  section(c, 1, core_module(size, shape));
  section(c, 2, {0x01, 0x00, 0x00, 0x00});  // core instance 0 = instantiate module 0
  Bytes alias = {0x01, 0x00, 0x00, 0x01, 0x00};  // core func alias: export of core instance 0
  name(alias, "sum");
  section(c, 6, alias);
  Bytes type = {0x01, 0x40, 0x02};  // func (param "a" u32) (param "b" u32) (result u32)
  name(type, "a");
  type.push_back(0x79);
  name(type, "b");
  type.push_back(0x79);
  type.insert(type.end(), {0x00, 0x79});
  section(c, 7, type);
  section(c, 8, {0x01, 0x00, 0x00, 0x00, 0x00, 0x00});  // canon lift core func 0, no options, type 0
  Bytes exports = {0x01, 0x00};
  name(exports, "sum");
  exports.insert(exports.end(), {0x01, 0x00, 0x00});  // func 0, no ascribed type
  section(c, 11, exports);
  return c;
}

constexpr size_t kSize = 2 << 20;

const Bytes& component_of(Shape shape) {
  static const Bytes big_data = component(kSize, Shape::BigData);
  static const Bytes big_code = component(kSize, Shape::BigCode);
  return shape == Shape::BigData ? big_data : big_code;
}

Shape shape_of(const benchmark::State& state) { return state.range(0) ? Shape::BigCode : Shape::BigData; }

void BM_DecodeAndPlan(benchmark::State& state) {
  const Bytes& bytes = component_of(shape_of(state));
  for (auto _ : state) {
    auto decoded = cmhost::binary::decode_component(bytes);
    auto plan = cmhost::validate::validate_component(decoded, bytes);
    benchmark::DoNotOptimize(plan.root.get());
  }
  state.counters["component_bytes"] = double(bytes.size());
}
BENCHMARK(BM_DecodeAndPlan)->ArgName("code_heavy")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_InterpreterModuleLoad(benchmark::State& state) {
  const Bytes module = core_module(kSize, shape_of(state));
  cmhost::Engine engine;
  for (auto _ : state) benchmark::DoNotOptimize(engine.core().compile(module).get());
}
BENCHMARK(BM_InterpreterModuleLoad)->ArgName("code_heavy")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_LoadAndInstantiate(benchmark::State& state) {
  const Bytes& bytes = component_of(shape_of(state));
  cmhost::Engine engine;
  for (auto _ : state) {
    auto component = cmhost::Component::from_bytes(engine, bytes);
    cmhost::Store store(engine);
    auto instance = cmhost::Linker().instantiate(store, component);
    auto sum = instance.func("sum").call(store, std::vector<cmhost::Val>{cmhost::Val::u32(2), cmhost::Val::u32(3)});
    if (sum.at(0).as_u32() != 5) state.SkipWithError("sum(2, 3) != 5");
  }
}
BENCHMARK(BM_LoadAndInstantiate)->ArgName("code_heavy")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
