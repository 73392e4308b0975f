// Where a guest's outgoing request goes, for the clients of both wasi:http
// versions: the authority parsed, checked against HttpConfig's allow-list,
// and the fields the client sets itself rather than the guest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <vector>

#include "cmhost/http.hpp"
#include "http/fields.hpp"
#include "http/wire.hpp"

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

// An outgoing request's head fields (Host first, the guest's but the
// connection's own, `Connection: close`: one request per connection) and
// the framing of its body: its content-length, else chunked when it has a
// body, else none (a zero length for POST, PUT and PATCH). Nullopt when the
// guest's content-length is no number.
struct RequestHead {
  std::vector<wire::Field> fields;
  wire::Framing framing = wire::Framing::until_close;
  std::optional<uint64_t> declared;
};
std::optional<RequestHead> request_head_of(const std::string& authority, const std::vector<FieldList::Entry>& entries,
                                           const std::string& method, bool has_body);

}  // namespace cmhost::http
