// wasi:clocks@0.3.0 (src/wasi/p3/clocks.cpp): the monotonic clock and its
// async waits on the store's timers, and the system clock.
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

void add_clocks(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
