// wasi:cli@0.3.0 (src/wasi/p3/cli.cpp): environment, exit, stdin, stdout,
// stderr and the terminal interfaces, over the same configuration and the
// same stdio descriptors as WASI 0.2, so both versions write to one stdout
// in the order their writes happen.
#pragma once

#include <memory>

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"
#include "wasi/core/stdio.hpp"

namespace cmhost::wasi::p3 {

void add_cli(Linker& linker, const WasiConfig& config, std::shared_ptr<const core::StdioFds> stdio);

// Calls a component's `wasi:cli/run@0.3.x#run` (an async export) through
// the store's event loop: the status (0, or 1 when it returns err; the code
// given to exit). The status follows `run`'s task, not tasks it left behind.
int run(Store& store, const Func& command);

}  // namespace cmhost::wasi::p3
