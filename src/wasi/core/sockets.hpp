// Sockets at the POSIX level, as every WASI version's wasi:sockets uses
// them (src/wasi/p2/socket_support.hpp and src/wasi/p3/socket_support.hpp
// map them to each version's types): the socket's descriptor and
// addresses, opening, binding, connecting, listening and accepting, sends
// and receives that never wait, the socket's options, and the
// classification of addresses bind, connect and send check.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>

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

// An address as wasi:sockets writes it: the port in host order, IPv4 as
// four bytes, IPv6 as eight 16-bit segments in host order with its flow
// information and scope as they are.
struct Ipv4Parts {
  uint16_t port = 0;
  std::array<uint8_t, 4> address{};
};
struct Ipv6Parts {
  uint16_t port = 0;
  uint32_t flow_info = 0;
  std::array<uint16_t, 8> address{};
  uint32_t scope_id = 0;
};
SockAddr to_sockaddr(const Ipv4Parts& address);
SockAddr to_sockaddr(const Ipv6Parts& address);
// An AF_INET address's parts, else an AF_INET6 one's (the kernel gives
// sockets of these two families only).
std::variant<Ipv4Parts, Ipv6Parts> parts_of(const sockaddr_storage& address);
// 0.0.0.0:0 or [::]:0: where a socket binds when it binds implicitly.
SockAddr any_address(int family);

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

// bind(2); with `reuse_address`, SO_REUSEADDR first (as wasmtime does for
// TCP: a listener restarted at once takes its port back while old
// connections linger in TIME_WAIT; UDP goes without, so a port in use is
// address-in-use).
[[nodiscard]] int bind_address(int fd, const SockAddr& address, bool reuse_address);
// Starts a connect of a non-blocking socket (EINTR retried): 0 when it
// connected at once, EINPROGRESS while it goes on (the socket turns
// writable when it ends), else the errno.
[[nodiscard]] int start_connect(int fd, const SockAddr& address);
// How a connect that went on ended, once the socket is writable: 0, or
// the errno it failed with (SO_ERROR).
[[nodiscard]] int connect_outcome(int fd);
// Connects a datagram socket to `address`. Linux refuses (EINVAL) a new
// peer the socket's current source address cannot reach (connected to
// loopback, then to a public address): the association is dissolved and
// the connect tried once more, so the source follows the new route.
[[nodiscard]] int connect_datagram(int fd, const SockAddr& address);
// Dissolves a datagram socket's association (a connect to AF_UNSPEC).
[[nodiscard]] int disconnect(int fd);
// listen(2), the backlog clamped to what the kernel takes.
[[nodiscard]] int listen_with(int fd, uint64_t backlog);
// A connection waiting on a listening socket, as a non-blocking socket
// (EINTR retried); EAGAIN when none waits.
SysResult<std::shared_ptr<SocketFd>> accept_connection(int fd);

// Sends and receives that never wait (MSG_DONTWAIT; a send to a peer gone
// is EPIPE, never SIGPIPE), EINTR retried: the count (0 from a receive at
// the end of a stream), or -1 with errno (EAGAIN: the socket would block).
ssize_t send_some(int fd, const uint8_t* data, size_t n);
ssize_t receive_some(int fd, uint8_t* data, size_t n);
// A datagram to `to`, or to the connected peer when `to` is null; one
// received, its sender in `from` when not null.
ssize_t send_datagram(int fd, const uint8_t* data, size_t n, const SockAddr* to);
ssize_t receive_datagram(int fd, uint8_t* data, size_t n, SockAddr* from);

// Socket options as wasi:sockets exposes them: a zero value is refused,
// values past `max` are clamped, buffer sizes read back as set (Linux
// reports twice the size asked for), hop limits are those of the family's
// unicast traffic, keep-alive times are nanoseconds (the kernel keeps
// whole seconds: rounded up, at most 32767).
SysResult<uint64_t> get_option(int fd, int level, int name);
[[nodiscard]] int set_option(int fd, int level, int name, uint64_t value, uint64_t max);
[[nodiscard]] int set_flag(int fd, int level, int name, bool on);
SysResult<uint64_t> get_buffer_size(int fd, int name);
[[nodiscard]] int set_buffer_size(int fd, int name, uint64_t value);
SysResult<uint8_t> get_hop_limit(int fd, int family);
[[nodiscard]] int set_hop_limit(int fd, int family, uint8_t value);
SysResult<uint64_t> get_keep_alive_time(int fd, int name);  // TCP_KEEPIDLE or TCP_KEEPINTVL
[[nodiscard]] int set_keep_alive_time(int fd, int name, uint64_t nanoseconds);

// The address kinds bind, connect and send refuse, of either family.
bool is_multicast(const SockAddr& address);
bool is_broadcast(const SockAddr& address);  // 255.255.255.255
bool is_unicast(const SockAddr& address);  // neither of the two above
bool is_v4_mapped(const SockAddr& address);  // ::ffff:a.b.c.d
// ::a.b.c.d (deprecated IPv4-compatible IPv6), other than :: and ::1.
bool is_v4_compatible(const SockAddr& address);
bool is_unspecified(const SockAddr& address);  // 0.0.0.0 or ::
uint16_t port_of(const SockAddr& address);  // in host order
// Of `family` (AF_INET or AF_INET6) and, for IPv6, not IPv4-mapped
// (cmhost's IPv6 sockets are IPv6-only).
bool is_of_family(const SockAddr& address, int family);

}  // namespace cmhost::wasi::core
