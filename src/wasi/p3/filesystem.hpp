// wasi:filesystem@0.3.0 (src/wasi/p3/filesystem.cpp, its streams in
// filesystem_streams.cpp) on the generated bindings (src/wasi/p3/bindings.hpp)
// and the core's files, which 0.2 shares (src/wasi/core/files.hpp).
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

// Defines wasi:filesystem/types and preopens@0.3.0, opening the
// configuration's preopens now: Error (Usage) naming one that cannot be.
void add_filesystem(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
