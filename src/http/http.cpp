// cmhost::http's entry point for linkers (cmhost/http.hpp): wasi:http@0.3's
// types and client, wasi:http@0.2's types and outgoing-handler.
#include "cmhost/http.hpp"

#include "http/p2/client.hpp"
#include "http/p2/types.hpp"
#include "http/p3/client.hpp"
#include "http/p3/types.hpp"

namespace cmhost::http {

void add_to_linker(Linker& linker, const HttpConfig& config) {
  auto types = p3::add_types(linker, config);
  p3::add_client(linker, config, std::move(types));
  // 0.2's bodies are WASI 0.2's wasi:io streams: without them on the
  // linker, a 0.2 guest's imports go unmet and say so.
  if (p2::has_wasi_io(linker)) p2::add_client(linker, p2::add_types(linker, config));
}

}  // namespace cmhost::http
