#pragma once

namespace cmhost::tools {

// Lowers a sample value into a host memory, prints its layout, the bytes and
// core values it became, and the WAVE text of the value lifted back.
int run_abi_demo();

}  // namespace cmhost::tools
