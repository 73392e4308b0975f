#include "filesystem.hpp"

namespace cmhost::wasi::p3 {

void add_filesystem(Linker&, const WasiConfig&) {}

}  // namespace cmhost::wasi::p3
