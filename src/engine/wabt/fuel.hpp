// Instruction-budget metering for the wabt backend. wabt's interpreter runs a
// call to completion and its public API cannot bound it, so a metered module
// is rewritten to count for itself: one unit of fuel at every loop header
// and at the entry of every function that makes calls (leaf functions cannot
// run unboundedly without a loop), and a trap once the fuel is gone.
//
// The fuel lives in a mutable i64 global that the rewritten module imports
// (as its last import), so that every instance in a store draws on the same
// budget: the store resets it before each outermost call and reads it after a
// trap to tell exhaustion from a real `unreachable`.
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

// Decodes and validates `bytes` (cmhost::Error of kind Decode or Validate),
// then returns the metered module. The fuel check decrements first and traps
// when the result is negative, so fuel < 0 after a trap means exhaustion.
std::vector<uint8_t> add_fuel_metering(const uint8_t* bytes, size_t size, const wabt::Features& features);

}  // namespace cmhost::engine::wabt_backend
