// wasi:http/outgoing-handler@0.2.x: a guest's requests over plain
// HTTP/1.1 (client.cpp).
#pragma once

#include <memory>

#include "cmhost/http.hpp"
#include "http/p2/types.hpp"

namespace cmhost::http::p2 {

void add_client(Linker& linker, std::shared_ptr<const TypesContext> types);

}  // namespace cmhost::http::p2
