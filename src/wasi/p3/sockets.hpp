// wasi:sockets@0.3.0 (src/wasi/p3/sockets.cpp) on the generated bindings
// (src/wasi/p3/bindings.hpp) and the WASI core.
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

void add_sockets(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
