// A core module translated to C by wabt's wasm2c writer: the first step of
// the ahead-of-time backend (a C compiler makes the translation native).
// Plain types only, so C++20 code can include it; translate.cpp, which
// includes wabt, is C++17 like the interpreter's files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cmhost::engine::wasm2c {

struct CModule {
  std::string source;  // the translation unit
  std::string header;  // its declarations, included by the source as `header_name`
};

// Translates a core module. `prefix` names its C symbols (wasm2c's `Z_`
// mangling: `Z_<prefix>_instantiate`, `Z_<prefix>Z_<export>`) and
// `header_name` is what the source includes. Throws cmhost::Error: Decode or
// Validate for a module that is not valid core wasm, Validate naming the
// feature for a valid one the translation cannot handle (SIMD, memory64,
// tail calls, threads).
CModule translate(const uint8_t* bytes, size_t size, const std::string& prefix, const std::string& header_name);

}  // namespace cmhost::engine::wasm2c
