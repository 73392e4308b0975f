// wasi:filesystem@0.3.0 (src/wasi/p3/filesystem.cpp) on the generated bindings
// (src/wasi/p3/bindings.hpp) and the WASI core.
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

void add_filesystem(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
