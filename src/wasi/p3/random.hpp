// wasi:random@0.3.0 (src/wasi/p3/random.cpp).
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

void add_random(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
