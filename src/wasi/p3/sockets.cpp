#include "sockets.hpp"

namespace cmhost::wasi::p3 {

void add_sockets(Linker&, const WasiConfig&) {}

}  // namespace cmhost::wasi::p3
