// wasi:sockets with the network denied (src/wasi/sockets.cpp): the guest
// gets its network, and every socket or name lookup it asks for is refused
// with access-denied, as WASI hosts do when no network is granted.
#pragma once

#include "cmhost/cmhost.hpp"

namespace cmhost::wasi::detail {

void add_denied_sockets(Linker& linker);

}  // namespace cmhost::wasi::detail
