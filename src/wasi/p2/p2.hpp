// WASI 0.2's entry points (src/wasi/p2/wasi.cpp), for cmhost::wasi's own
// (src/wasi/p3/versions.cpp), which link 0.2 and 0.3 together.
#pragma once

#include <memory>

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"
#include "wasi/core/stdio.hpp"

namespace cmhost::wasi::p2 {

// The WASI 0.2 interfaces over `config`, writing to `stdio`.
void add_to_linker(Linker& linker, const WasiConfig& config, std::shared_ptr<const core::StdioFds> stdio);

// Calls the component's `wasi:cli/run@0.2.x#run`: 0, 1 when it returns err,
// or the code given to exit.
int run(Store& store, const Instance& instance);

}  // namespace cmhost::wasi::p2
