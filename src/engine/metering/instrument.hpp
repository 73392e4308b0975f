// Rewrites of a core module that let a store see what its code does, for
// both backends (wasm2c translates the metered module too).
//
// Metering: wabt's interpreter runs a call to completion and its public API
// cannot bound it, so a metered module counts for itself: one unit at every
// loop header and at the entry of every function that makes calls (leaf
// functions cannot run unboundedly without a loop). The count is a slice
// counter in a mutable i64 global the module imports, shared by every
// instance in a store. When it goes below zero the code calls the imported
// function `refill`, where the store looks at its fuel and its epoch
// deadline (metering/meter.hpp) and either sets a new slice or traps.
//
// Growth guards (the interpreter only; the ahead-of-time runtime asks the
// store itself): wabt's interpreter grows a memory or table up to the
// maximum it was made with and cannot ask anyone, so `memory.grow M` becomes
// `i32.const M; call memory.grow` (and `table.grow T` likewise), imported
// functions where the store checks its limits against what its memories and
// tables hold at that moment. The interpreter needs them only for a store
// whose code grows more than one memory (wabt_backend.cpp): one memory
// alone is bounded exactly by its maximum.
//
// The engine's imports (module kEngineImportModule) come after the module's
// own, in the order `InstrumentedModule::imports` lists them.
//
// C++17 translation units only (see wabt_support.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wabt {
class Features;
}

namespace cmhost::engine::wabt_backend {

inline constexpr char kEngineImportModule[] = "cmhost:engine";

// What the engine provides to an instrumented module.
enum class EngineImport {
  Refill,              // func () -> ()
  MemoryGrow32,        // func (delta: i32, memory: i32) -> i32: old pages, or -1
  MemoryGrow64,        // func (delta: i64, memory: i32) -> i64
  TableGrowFuncref,    // func (init: funcref, delta: i32, table: i32) -> i32: old size, or -1
  TableGrowExternref,  // func (init: externref, delta: i32, table: i32) -> i32
  Fuel,                // global (mut i64): the slice counter
};
const char* engine_import_name(EngineImport import);

struct Instrumentation {
  bool meter = false;
  bool guard_growth = false;
};

struct InstrumentedModule {
  std::vector<uint8_t> bytes;
  std::vector<EngineImport> imports;  // appended after the module's own, in this order
};

// What the module's code grows, read without building the module (a
// malformed module answers what was read before the fault and is left to
// the loader to report).
struct GrowthSites {
  std::vector<uint32_t> memories;  // indices of the memories memory.grow names
  bool tables = false;             // any table.grow
  bool any() const { return tables || !memories.empty(); }
};
GrowthSites find_growth(const uint8_t* bytes, size_t size, const wabt::Features& features);

// Decodes and validates `bytes` (cmhost::Error of kind Decode or Validate),
// then returns the rewritten module.
InstrumentedModule instrument(const uint8_t* bytes, size_t size, const wabt::Features& features,
                              Instrumentation what);

}  // namespace cmhost::engine::wabt_backend
