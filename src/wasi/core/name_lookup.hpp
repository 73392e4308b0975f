// Name lookup at the POSIX level, as every WASI version's
// wasi:sockets/ip-name-lookup uses it: IP literals answered without the
// resolver, the syntax a name must have to be looked up, and getaddrinfo
// itself (which blocks: each version runs it off its guest's thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sockets.hpp"

namespace cmhost::wasi::core {

// An IPv4 address in dotted-quad form or an IPv6 address in text form
// (neither with brackets nor a port), as an address with port 0.
std::optional<SockAddr> parse_ip_literal(const std::string& text);

// Whether `name` has a host name's syntax: dot-separated labels of ASCII
// letters, digits, '-' and '_', or UTF-8 (an internationalised name), at
// most 63 bytes each and 253 in all. A URL, `host:port`, spaces or an
// empty name do not.
bool is_host_name(const std::string& name);

// getaddrinfo's answer for `name` (internationalised names through IDNA):
// its status (0 or an EAI_ code) and one address per IPv4 or IPv6 address
// found, in the resolver's order, port 0. Blocks until the resolver
// answers.
struct Resolution {
  int status = 0;
  std::vector<SockAddr> addresses;
};
Resolution resolve_host(const std::string& name);

}  // namespace cmhost::wasi::core
