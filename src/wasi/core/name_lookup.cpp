#include "name_lookup.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>

namespace cmhost::wasi::core {

std::optional<SockAddr> parse_ip_literal(const std::string& text) {
  SockAddr address;
  auto* in = reinterpret_cast<sockaddr_in*>(&address.storage);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (::inet_pton(AF_INET, text.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    address.length = sizeof(sockaddr_in);
  } else if (::inet_pton(AF_INET6, text.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    address.length = sizeof(sockaddr_in6);
  } else {
    return std::nullopt;
  }
  return address;
}

bool is_host_name(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  size_t label = 0;
  for (const char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || static_cast<unsigned char>(c) >= 0x80;
    if (!ok || ++label > 63) return false;
  }
  return true;
}

Resolution resolve_host(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;  // one entry per address, not one per socket type
  hints.ai_flags = AI_IDN;           // Unicode names through IDNA, as the WIT asks
  addrinfo* found = nullptr;
  Resolution out;
  out.status = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  for (const addrinfo* a = found; a; a = a->ai_next) {
    if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
    SockAddr address;
    address.length = static_cast<socklen_t>(std::min<size_t>(a->ai_addrlen, sizeof address.storage));
    std::memcpy(&address.storage, a->ai_addr, address.length);
    out.addresses.push_back(address);
  }
  if (found) ::freeaddrinfo(found);
  return out;
}

}  // namespace cmhost::wasi::core
