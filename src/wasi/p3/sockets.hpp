// wasi:sockets@0.3.0 (src/wasi/p3/sockets.cpp, tcp.cpp, udp.cpp,
// ip_name_lookup.cpp) on the generated bindings (src/wasi/p3/bindings.hpp)
// and the WASI core's sockets: TCP, UDP and name lookup over the host's
// network when WasiConfig::allow_network, else access-denied.
#pragma once

#include "cmhost/cmhost.hpp"
#include "cmhost/wasi.hpp"

namespace cmhost::wasi::p3 {

void add_sockets(Linker& linker, const WasiConfig& config);

}  // namespace cmhost::wasi::p3
