// wasi:http/client@0.3.0: outgoing requests (client.cpp).
#pragma once

#include <memory>

#include "cmhost/http.hpp"
#include "http/p3/types.hpp"

namespace cmhost::http::p3 {

void add_client(Linker& linker, const HttpConfig& config, std::shared_ptr<const TypesContext> types);

}  // namespace cmhost::http::p3
