// Helpers shared by the translation units that include wabt. They compile as
// C++17 (wabt's interpreter headers do not build as C++20 with g++ 12), so
// this header must never be included from C++20 code or a public header.
#pragma once

#include <string>

#include <wabt/error.h>
#include <wabt/feature.h>

namespace cmhost::engine::wabt_backend {

// wabt's defaults (bulk memory, reference types, SIMD, multi-value, ...) plus
// the proposals cmhost accepts on top: multi-memory, memory64, tail calls,
// legacy exceptions and threads.
wabt::Features enabled_features();

// wabt's diagnostics as one message: "at offset 0x1c: type mismatch ...",
// several joined with "; ".
std::string describe(const wabt::Errors& errors);

}  // namespace cmhost::engine::wabt_backend
