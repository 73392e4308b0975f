// Where a guest's outgoing request goes, for the clients of both wasi:http
// versions: the authority parsed, checked against HttpConfig's allow-list,
// and the fields the client sets itself rather than the guest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cmhost/http.hpp"

namespace cmhost::http {

// host[:port] or [v6]:port; the port 1 to 65535, 80 when absent.
struct Destination {
  std::string host;
  uint16_t port = 80;
};
std::optional<Destination> parse_authority(const std::string& authority);

// Whether `config` lets a request go to `authority` (whose host is `host`):
// any, or one on its allowed_hosts (host or host:port, any case).
bool host_allowed(const HttpConfig& config, const std::string& authority, const std::string& host);

// A field of the connection (its framing, its persistence, Host), which the
// client writes itself.
bool is_connection_field(const std::string& name);

}  // namespace cmhost::http
