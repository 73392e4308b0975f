// A core module translated to C by wabt's wasm2c writer: the first step of
// the ahead-of-time backend (a C compiler makes the translation native).
// Plain types only, so C++20 code can include it; translate.cpp, which
// includes wabt, is C++17 like the interpreter's files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "shape.hpp"

namespace cmhost::engine::aot {

struct CModule {
  std::string source;  // the translation unit, cmhost's glue (glue.hpp) included
  std::string header;  // its declarations, included by the source as `header_name`
  ModuleShape shape;   // the module's imports and exports under their own names
  // A big module's functions are shared out to these further translation
  // units too (see split_functions), so that cores compile them in parallel.
  std::vector<std::string> more_sources;
};

inline constexpr size_t kSplitBytes = size_t{4} << 20;

// Translates a core module. `prefix` names its C symbols (wasm2c's `Z_`
// mangling: `Z_<prefix>_instantiate`; exports become `Z_<prefix>Z_e<k>` and
// imports `Z_<prefix>iZ_i<k>`, so every name is a plain C identifier) and
// `header_name` is what the source includes. Function prologues check the
// native stack against cmhost's limit (cmhost_aot.h) instead of counting
// calls in a process-wide counter. Throws cmhost::Error: Decode or
// Validate for a module that is not valid core wasm, Validate naming the
// feature for a valid one the translation cannot handle (SIMD, memory64,
// tail calls, threads, exception tags crossing the module's boundary). When
// `metered`, the module is first rewritten to draw on an instruction budget
// (the interpreter's fuel pass, metering/instrument.hpp): its last import is then the
// fuel global.
CModule translate(const uint8_t* bytes, size_t size, const std::string& prefix, const std::string& header_name,
                  bool metered = false, size_t max_parts = 1, size_t split_bytes = kSplitBytes);

// Rewrites wasm2c's init_memories so that each defined memory whose active
// segments all sit at constant offsets within its initial size gets its
// contents from a memory image (cmhost_rt_allocate_imaged_memory) instead of copies;
// other memories, and modules of another shape, are left as they are.
void use_memory_images(std::string& source);

// Splits a translation's function definitions over up to `parts` units of
// about `split_bytes` each (a source under twice that stays whole): every unit repeats the declarations (functions
// become hidden symbols named after `prefix`), the first keeps everything
// else. Returns the further units (none when the source is small, or not
// of the shape this version of wasm2c writes).
std::vector<std::string> split_functions(std::string& source, const std::string& prefix, size_t parts,
                                         size_t split_bytes = kSplitBytes);

}  // namespace cmhost::engine::aot
