// wasi:sockets/ip-name-lookup@0.3.0: an IP literal is answered at once, a
// host name by getaddrinfo on the store's pool of blocking work
// (Store::run_blocking: at most four threads for the whole process, never
// one per lookup); anything else is invalid-argument. With the network
// denied every lookup is access-denied, as in WASI 0.2.
#include <netdb.h>

#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "socket_support.hpp"
#include "wasi/core/name_lookup.hpp"

namespace cmhost::wasi::p3 {

namespace {

namespace lookup = bindings::p3::wasi::sockets::ip_name_lookup;
using LookupResult = abi::typed::Result<std::vector<net::IpAddress>, lookup::ErrorCode>;

// An address as the guest sees it: IPv4-mapped IPv6 ones as the IPv4
// address they stand for.
net::IpAddress ip_of(const SockAddr& address) {
  SockAddr canonical = address;
  if (core::is_v4_mapped(address)) {
    const auto& in6 = *reinterpret_cast<const sockaddr_in6*>(&address.storage);
    core::Ipv4Parts v4;
    std::memcpy(v4.address.data(), in6.sin6_addr.s6_addr + 12, 4);
    canonical = core::to_sockaddr(v4);
  }
  const net::IpSocketAddress with_port = from_sockaddr(canonical.storage);
  if (const auto* v4 = std::get_if<net::ip_socket_address::Ipv4>(&with_port))
    return net::ip_address::Ipv4{v4->value.address};
  return net::ip_address::Ipv6{std::get<net::ip_socket_address::Ipv6>(with_port).value.address};
}

// An IP address written as one: IPv4, IPv6, or IPv6 in brackets (as a
// URL's host writes it).
std::optional<net::IpAddress> ip_literal(const std::string& name) {
  const bool bracketed = name.size() >= 2 && name.front() == '[' && name.back() == ']';
  const std::optional<SockAddr> address = core::parse_ip_literal(bracketed ? name.substr(1, name.size() - 2) : name);
  if (!address || (bracketed && address->family() != AF_INET6)) return std::nullopt;
  return ip_of(*address);
}

lookup::ErrorCode resolver_error(int status) {
  namespace code = lookup::error_code;
  switch (status) {
    case EAI_NONAME:
    case EAI_NODATA:
    case EAI_ADDRFAMILY: return code::NameUnresolvable{};
    case EAI_AGAIN: return code::TemporaryResolverFailure{};
    case EAI_FAIL: return code::PermanentResolverFailure{};
    default: return code::Other{std::optional<std::string>(::gai_strerror(status))};
  }
}

LookupResult lookup_result(const core::Resolution& resolution) {
  if (resolution.status != 0) return LookupResult::err(resolver_error(resolution.status));
  // The WIT promises at least one address: a name without any is unresolvable.
  if (resolution.addresses.empty()) return LookupResult::err(lookup::error_code::NameUnresolvable{});
  std::vector<net::IpAddress> addresses;
  addresses.reserve(resolution.addresses.size());
  for (const SockAddr& address : resolution.addresses) addresses.push_back(ip_of(address));
  return LookupResult::ok(std::move(addresses));
}

// What made the resolver's call fail (it throws only when memory runs out).
std::optional<std::string> describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    return std::string("the lookup failed: ") + e.what();
  } catch (...) {
    return std::string("the lookup failed");
  }
}

// One lookup under way: its completion, and whether the guest cancelled it
// (the resolver cannot be stopped; its answer is then dropped).
struct PendingLookup {
  explicit PendingLookup(TypedCompletion<LookupResult> c) : completion(std::move(c)) {}
  TypedCompletion<LookupResult> completion;
  bool settled = false;
};

class NameLookup final : public lookup::Host {
 public:
  explicit NameLookup(bool allow_network) : allow_network_(allow_network) {}

  void resolve_addresses(Caller& caller, std::string name, TypedCompletion<LookupResult> completion) override {
    if (!allow_network_) return completion.complete(LookupResult::err(lookup::error_code::AccessDenied{}));
    if (const auto ip = ip_literal(name)) return completion.complete(LookupResult::ok(std::vector{*ip}));
    // A URL, `host:port`, spaces: not a name to look up.
    if (!core::is_host_name(name)) return completion.complete(LookupResult::err(lookup::error_code::InvalidArgument{}));

    auto pending = std::make_shared<PendingLookup>(std::move(completion));
    // The pool's thread sees the name and the answer's slot, never the
    // completion, which stays with the loop.
    auto resolution = std::make_shared<core::Resolution>();
    caller.store().run_blocking([name = std::move(name), resolution] { *resolution = core::resolve_host(name); },
                                [pending, resolution](std::exception_ptr failure) {
                                  if (pending->settled) return;
                                  pending->settled = true;
                                  if (failure)
                                    return pending->completion.complete(
                                        LookupResult::err(lookup::error_code::Other{describe(failure)}));
                                  pending->completion.complete(lookup_result(*resolution));
                                });
    pending->completion.on_cancel([weak = std::weak_ptr<PendingLookup>(pending)] {
      const auto cancelled = weak.lock();
      if (!cancelled || cancelled->settled) return;
      cancelled->settled = true;
      cancelled->completion.cancel();
    });
  }

 private:
  bool allow_network_;
};

}  // namespace

void add_ip_name_lookup(Linker& linker, const WasiConfig& config) {
  lookup::add_to_linker(linker, std::make_shared<NameLookup>(config.allow_network));
}

}  // namespace cmhost::wasi::p3
