// Metering for both backends (wasm2c translates the metered module too).
// wabt's interpreter runs a call to completion and its public API cannot
// bound it, so a metered module is rewritten to count for itself: one unit
// at every loop header and at the entry of every function that makes calls
// (leaf functions cannot run unboundedly without a loop).
//
// The count is a slice counter in a mutable i64 global that the rewritten
// module imports (as its last import), shared by every instance in a store.
// When it goes below zero the code calls the imported function `refill`
// (its last function import), where the store looks at its fuel and its
// epoch deadline (engine/meter.hpp) and either sets a new slice or traps.
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

inline constexpr char kFuelImportModule[] = "cmhost:engine";
inline constexpr char kFuelImportName[] = "fuel";
inline constexpr char kRefillImportName[] = "refill";

// Decodes and validates `bytes` (cmhost::Error of kind Decode or Validate),
// then returns the metered module: fuel -= 1; if (fuel < 0) refill().
std::vector<uint8_t> add_fuel_metering(const uint8_t* bytes, size_t size, const wabt::Features& features);

}  // namespace cmhost::engine::wabt_backend
