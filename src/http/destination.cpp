#include "destination.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "http/fields.hpp"

namespace cmhost::http {

std::optional<Destination> parse_authority(const std::string& authority) {
  Destination out;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    out.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    const size_t colon = authority.rfind(':');
    out.host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1);
  }
  if (out.host.empty() || out.host.find_first_of("@/?# ") != std::string::npos) return std::nullopt;
  if (!port.empty()) {
    unsigned value = 0;
    const auto parsed = std::from_chars(port.data(), port.data() + port.size(), value);
    if (parsed.ec != std::errc() || parsed.ptr != port.data() + port.size() || value == 0 || value > 65535)
      return std::nullopt;
    out.port = static_cast<uint16_t>(value);
  }
  return out;
}

bool host_allowed(const HttpConfig& config, const std::string& authority, const std::string& host) {
  if (config.allowed_hosts.empty()) return true;
  return std::any_of(config.allowed_hosts.begin(), config.allowed_hosts.end(), [&](const std::string& allowed) {
    return lowercase(allowed) == lowercase(authority) || lowercase(allowed) == lowercase(host);
  });
}

bool is_connection_field(const std::string& name) {
  static const char* const names[] = {"connection", "keep-alive", "proxy-connection", "transfer-encoding",
                                      "upgrade",    "te",         "http2-settings",   "host"};
  return std::find_if(std::begin(names), std::end(names), [&](const char* hop) { return name == hop; }) !=
         std::end(names);
}

std::optional<RequestHead> request_head_of(const std::string& authority, const std::vector<FieldList::Entry>& entries,
                                           const std::string& method, bool has_body) {
  RequestHead head;
  head.fields.emplace_back("host", authority);
  for (const auto& [name, value] : entries) {
    if (name == "content-length") {
      uint64_t length = 0;
      const auto parsed = std::from_chars(value.data(), value.data() + value.size(), length);
      if (parsed.ec != std::errc() || parsed.ptr != value.data() + value.size()) return std::nullopt;
      head.declared = length;
      continue;
    }
    if (!is_connection_field(name)) head.fields.emplace_back(name, value);
  }
  head.fields.emplace_back("connection", "close");
  if (head.declared)
    head.framing = wire::Framing::content_length;
  else if (has_body)
    head.framing = wire::Framing::chunked;
  else if (method == "POST" || method == "PUT" || method == "PATCH")
    head.framing = wire::Framing::content_length, head.declared = 0;
  return head;
}

}  // namespace cmhost::http
