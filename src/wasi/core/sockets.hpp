// Sockets at the POSIX level, as every WASI version's wasi:sockets uses
// them (src/wasi/p2/socket_support.hpp maps them to WASI 0.2's types): the
// socket's descriptor and addresses, opening a socket, its addresses and
// options, and the classification of addresses bind, connect and send check.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>

namespace cmhost::wasi::core {

// A socket's descriptor, closed when the socket and every stream and
// pollable made from it are gone (a guest may drop them in any order).
class SocketFd {
 public:
  explicit SocketFd(int fd) : fd_(fd) {}
  ~SocketFd();
  SocketFd(const SocketFd&) = delete;
  SocketFd& operator=(const SocketFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct SockAddr {
  sockaddr_storage storage{};
  socklen_t length = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const { return storage.ss_family; }
};

// What a call here gives: its value, or the errno it failed with. A value
// wasi:sockets itself refuses (a zero option) fails with EINVAL, as the
// kernel does for one it refuses: each WASI version maps that errno to its
// invalid-argument, so one int carries every failure and no version's
// error codes are needed here. Calls without a value return the errno
// alone, 0 when they succeed.
template <typename T>
struct [[nodiscard]] SysResult {
  T value{};
  int error = 0;
  bool ok() const { return error == 0; }
};

// A fresh non-blocking socket of `family` (AF_INET or AF_INET6; IPv6 ones
// are IPv6-only, so an IPv4-mapped address never reaches them).
SysResult<std::shared_ptr<SocketFd>> open_socket(int family, int type);

SysResult<SockAddr> local_address_of(int fd);
SysResult<SockAddr> remote_address_of(int fd);

// Socket options as wasi:sockets exposes them: a zero value is refused,
// values past `max` are clamped, buffer sizes read back as set (Linux
// reports twice the size asked for), hop limits are those of the family's
// unicast traffic.
SysResult<uint64_t> get_option(int fd, int level, int name);
[[nodiscard]] int set_option(int fd, int level, int name, uint64_t value, uint64_t max);
SysResult<uint64_t> get_buffer_size(int fd, int name);
[[nodiscard]] int set_buffer_size(int fd, int name, uint64_t value);
SysResult<uint8_t> get_hop_limit(int fd, int family);
[[nodiscard]] int set_hop_limit(int fd, int family, uint8_t value);

// The address kinds bind, connect and send refuse, of either family.
bool is_multicast(const SockAddr& address);
bool is_broadcast(const SockAddr& address);  // 255.255.255.255
bool is_v4_mapped(const SockAddr& address);  // ::ffff:a.b.c.d
bool is_unspecified(const SockAddr& address);  // 0.0.0.0 or ::
uint16_t port_of(const SockAddr& address);  // in host order

}  // namespace cmhost::wasi::core
