// What every WASI version's generated bindings spell alike: the same WIT
// shapes (ip-socket-address, the open flags) under other namespaces. The
// conversions between them and the core's values are written once here,
// as templates over a version's binding types.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>
#include <variant>

#include "files.hpp"
#include "sockets.hpp"

namespace cmhost::wasi::core {

// wasi:sockets ip-socket-address (a variant of ipv4(ipv4-socket-address)
// and ipv6(ipv6-socket-address), each case's payload in `value`) to and
// from a socket address.
template <class IpSocketAddress>
SockAddr to_sockaddr(const IpSocketAddress& address) {
  if (const auto* v4 = std::get_if<0>(&address)) {
    const auto bytes = std::apply([](auto... b) { return std::array<uint8_t, 4>{b...}; }, v4->value.address);
    return to_sockaddr(Ipv4Parts{v4->value.port, bytes});
  }
  const auto& v6 = std::get<1>(address).value;
  const auto segments = std::apply([](auto... s) { return std::array<uint16_t, 8>{s...}; }, v6.address);
  return to_sockaddr(Ipv6Parts{v6.port, v6.flow_info, segments, v6.scope_id});
}

template <class IpSocketAddress>
IpSocketAddress from_sockaddr(const sockaddr_storage& address) {
  using V4Case = std::variant_alternative_t<0, IpSocketAddress>;
  using V6Case = std::variant_alternative_t<1, IpSocketAddress>;
  using V4 = decltype(V4Case::value);
  using V6 = decltype(V6Case::value);
  const auto parts = parts_of(address);
  if (const auto* v4 = std::get_if<Ipv4Parts>(&parts)) {
    const auto bytes = std::apply([](auto... b) { return decltype(V4::address){b...}; }, v4->address);
    return V4Case{V4{v4->port, bytes}};
  }
  const auto& v6 = std::get<Ipv6Parts>(parts);
  const auto segments = std::apply([](auto... s) { return decltype(V6::address){s...}; }, v6.address);
  return V6Case{V6{v6.port, v6.flow_info, segments, v6.scope_id}};
}

// wasi:filesystem path-flags: whether a final symlink is followed.
template <class PathFlags>
bool follows(PathFlags path_flags) {
  return path_flags.has(PathFlags::symlink_follow);
}

// wasi:filesystem open-at's path-flags, open-flags and descriptor-flags as
// the core's request. The sync flags are dropped: writes are as durable as
// the host makes them.
template <class PathFlags, class OpenFlags, class DescriptorFlags>
OpenRequest open_request(PathFlags path_flags, OpenFlags open_flags, DescriptorFlags flags) {
  return OpenRequest{.follow = follows(path_flags),
                     .create = open_flags.has(OpenFlags::create),
                     .directory = open_flags.has(OpenFlags::directory),
                     .exclusive = open_flags.has(OpenFlags::exclusive),
                     .truncate = open_flags.has(OpenFlags::truncate),
                     .read = flags.has(DescriptorFlags::read),
                     .write = flags.has(DescriptorFlags::write),
                     .mutate = flags.has(DescriptorFlags::mutate_directory)};
}

}  // namespace cmhost::wasi::core
