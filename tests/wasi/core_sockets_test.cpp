// The sockets' POSIX level (src/wasi/core/sockets.cpp), below what the
// sockets guest reaches: how sockets open, the option rules (zero refused,
// clamping, buffer sizes read back as set) and the address kinds.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>

#include "../../src/wasi/core/sockets.hpp"

namespace {

namespace core = cmhost::wasi::core;

core::SockAddr address(const char* ip, uint16_t port = 0) {
  core::SockAddr a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
  if (::inet_pton(AF_INET, ip, &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    a.length = sizeof *in;
  } else {
    EXPECT_EQ(::inet_pton(AF_INET6, ip, &in6->sin6_addr), 1) << ip;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    a.length = sizeof *in6;
  }
  return a;
}

std::shared_ptr<core::SocketFd> fresh_socket(int family, int type) {
  auto socket = core::open_socket(family, type);
  EXPECT_EQ(socket.error, 0) << std::strerror(socket.error);
  return socket.value;
}

TEST(WasiCoreSockets, SocketsAreNonBlockingAndIpv6OnesIpv6Only) {
  for (const int family : {AF_INET, AF_INET6}) {
    const auto socket = fresh_socket(family, SOCK_STREAM);
    ASSERT_TRUE(socket);
    EXPECT_TRUE(::fcntl(socket->get(), F_GETFL) & O_NONBLOCK);
    EXPECT_TRUE(::fcntl(socket->get(), F_GETFD) & FD_CLOEXEC);
  }
  const auto v6 = fresh_socket(AF_INET6, SOCK_DGRAM);
  ASSERT_TRUE(v6);
  const auto v6_only = core::get_option(v6->get(), IPPROTO_IPV6, IPV6_V6ONLY);
  EXPECT_TRUE(v6_only.ok());
  EXPECT_EQ(v6_only.value, 1u);
}

TEST(WasiCoreSockets, AnUnknownFamilyFailsWithItsErrno) {
  const auto socket = core::open_socket(AF_MAX, SOCK_STREAM);
  EXPECT_FALSE(socket.ok());
  EXPECT_EQ(socket.error, EAFNOSUPPORT);
}

TEST(WasiCoreSockets, OptionsRefuseZeroAndClampToTheirMaximum) {
  const auto socket = fresh_socket(AF_INET, SOCK_STREAM);
  ASSERT_TRUE(socket);
  EXPECT_EQ(core::set_option(socket->get(), IPPROTO_TCP, TCP_KEEPCNT, 0, 127), EINVAL);
  EXPECT_EQ(core::set_option(socket->get(), IPPROTO_TCP, TCP_KEEPCNT, 1000, 127), 0);
  EXPECT_EQ(core::get_option(socket->get(), IPPROTO_TCP, TCP_KEEPCNT).value, 127u);
  EXPECT_EQ(core::set_buffer_size(socket->get(), SO_RCVBUF, 0), EINVAL);
}

TEST(WasiCoreSockets, BufferSizesReadBackAsSet) {
  const auto socket = fresh_socket(AF_INET, SOCK_DGRAM);
  ASSERT_TRUE(socket);
  ASSERT_EQ(core::set_buffer_size(socket->get(), SO_SNDBUF, 16384), 0);
  const auto size = core::get_buffer_size(socket->get(), SO_SNDBUF);
  EXPECT_TRUE(size.ok());
  EXPECT_EQ(size.value, 16384u);
}

TEST(WasiCoreSockets, HopLimitsFollowTheFamily) {
  for (const int family : {AF_INET, AF_INET6}) {
    const auto socket = fresh_socket(family, SOCK_DGRAM);
    ASSERT_TRUE(socket);
    EXPECT_EQ(core::set_hop_limit(socket->get(), family, 0), EINVAL);
    ASSERT_EQ(core::set_hop_limit(socket->get(), family, 7), 0);
    EXPECT_EQ(core::get_hop_limit(socket->get(), family).value, 7u);
    const int level = family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6;
    const int name = family == AF_INET ? IP_TTL : IPV6_UNICAST_HOPS;
    EXPECT_EQ(core::get_option(socket->get(), level, name).value, 7u);
  }
}

TEST(WasiCoreSockets, LocalAndRemoteAddresses) {
  const auto socket = fresh_socket(AF_INET, SOCK_DGRAM);
  ASSERT_TRUE(socket);
  const core::SockAddr loopback = address("127.0.0.1");
  ASSERT_EQ(::bind(socket->get(), loopback.get(), loopback.length), 0);
  const auto local = core::local_address_of(socket->get());
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local.value.family(), AF_INET);
  EXPECT_EQ(local.value.length, sizeof(sockaddr_in));
  EXPECT_NE(core::port_of(local.value), 0);
  EXPECT_EQ(core::remote_address_of(socket->get()).error, ENOTCONN);
}

TEST(WasiCoreSockets, AddressKinds) {
  EXPECT_TRUE(core::is_multicast(address("224.0.0.1")));
  EXPECT_TRUE(core::is_multicast(address("ff02::1")));
  EXPECT_FALSE(core::is_multicast(address("10.0.0.1")));
  EXPECT_TRUE(core::is_broadcast(address("255.255.255.255")));
  EXPECT_FALSE(core::is_broadcast(address("10.255.255.255")));
  EXPECT_TRUE(core::is_v4_mapped(address("::ffff:10.0.0.1")));
  EXPECT_FALSE(core::is_v4_mapped(address("10.0.0.1")));
  EXPECT_TRUE(core::is_unspecified(address("0.0.0.0")));
  EXPECT_TRUE(core::is_unspecified(address("::")));
  EXPECT_FALSE(core::is_unspecified(address("::1")));
  EXPECT_EQ(core::port_of(address("10.0.0.1", 8080)), 8080);
  EXPECT_EQ(core::port_of(address("::1", 443)), 443);
}

}  // namespace
