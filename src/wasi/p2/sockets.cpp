// wasi:sockets: the network handle, socket creation, name lookup, and the
// same interfaces with the network denied. TCP and UDP sockets themselves
// are in tcp.cpp and udp.cpp.
#include "sockets.hpp"

#include <netdb.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

#include "bindings.hpp"
#include "wasi/core/name_lookup.hpp"

namespace cmhost::wasi::detail {

namespace {

namespace sockets = ::cmhost::wasi::bindings::wasi::sockets;
using abi::typed::Own;
using net::ErrorCode;
using TcpResult = NetResult<Own<sockets::tcp::TcpSocket>>;
using UdpResult = NetResult<Own<sockets::udp::UdpSocket>>;
using LookupResult = NetResult<Own<sockets::ip_name_lookup::ResolveAddressStream>>;

// The network handle a guest passes to bind, connect and lookups. There is
// one network, the host's; when it is denied nothing can be done with it.
class HostNetwork final : public net::Network {};

// Every wasi:sockets interface's Host, which add_interfaces supplies.
class SocketInterfaces : public net::Host,
                         public sockets::instance_network::Host,
                         public sockets::tcp::Host,
                         public sockets::tcp_create_socket::Host,
                         public sockets::udp::Host,
                         public sockets::udp_create_socket::Host,
                         public sockets::ip_name_lookup::Host {};

class DeniedSockets final : public SocketInterfaces {
 public:
  std::unique_ptr<net::Network> instance_network(Caller&) override { return std::make_unique<HostNetwork>(); }
  TcpResult create_tcp_socket(Caller&, net::IpAddressFamily) override { return TcpResult::err(ErrorCode::access_denied); }
  UdpResult create_udp_socket(Caller&, net::IpAddressFamily) override { return UdpResult::err(ErrorCode::access_denied); }
  LookupResult resolve_addresses(Caller&, net::Network&, std::string) override {
    return LookupResult::err(ErrorCode::access_denied);
  }
};

// A lookup runs getaddrinfo on a thread of its own, so the guest keeps
// running (and can poll other things) meanwhile; the thread signals an
// eventfd the stream's pollable waits on.
struct Lookup {
  Lookup() : done_fd(std::make_shared<SocketFd>(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))) {}
  std::shared_ptr<SocketFd> done_fd;
  std::atomic<bool> done{false};
  std::optional<ErrorCode> error;
  std::vector<net::IpAddress> addresses;
};

std::optional<ErrorCode> resolver_error(int status) {
  switch (status) {
    case 0: return std::nullopt;
    case EAI_NONAME:
    case EAI_NODATA:
    case EAI_ADDRFAMILY: return ErrorCode::name_unresolvable;
    case EAI_AGAIN: return ErrorCode::temporary_resolver_failure;
    case EAI_FAIL: return ErrorCode::permanent_resolver_failure;
    case EAI_MEMORY: return ErrorCode::out_of_memory;
    default: return ErrorCode::unknown;
  }
}

void resolve(const std::string& name, Lookup& lookup) {
  const core::Resolution resolution = core::resolve_host(name);
  lookup.error = resolver_error(resolution.status);
  for (const SockAddr& address : resolution.addresses)
    lookup.addresses.push_back(ip_of(from_sockaddr(address.storage)));
}

class ResolveAddressStream final : public sockets::ip_name_lookup::ResolveAddressStream {
 public:
  explicit ResolveAddressStream(std::shared_ptr<Lookup> lookup) : lookup_(std::move(lookup)) {}

  NetResult<std::optional<net::IpAddress>> resolve_next_address(Caller&) override {
    using R = NetResult<std::optional<net::IpAddress>>;
    if (!lookup_->done.load(std::memory_order_acquire)) return R::err(ErrorCode::would_block);
    if (lookup_->error) return R::err(*std::exchange(lookup_->error, std::nullopt));
    if (next_ == lookup_->addresses.size()) return R::ok(std::nullopt);
    return R::ok(lookup_->addresses[next_++]);
  }
  std::unique_ptr<io::poll::Pollable> subscribe(Caller&) override {
    return std::make_unique<FdPollable>(lookup_->done_fd->get(), POLLIN, lookup_->done_fd);
  }

 private:
  std::shared_ptr<Lookup> lookup_;
  size_t next_ = 0;
};

// An IP address without brackets or port, answered without a lookup.
std::optional<net::IpAddress> ip_literal(const std::string& name) {
  const std::optional<SockAddr> address = core::parse_ip_literal(name);
  if (!address) return std::nullopt;
  return ip_of(from_sockaddr(address->storage));
}

class HostSockets final : public SocketInterfaces {
 public:
  explicit HostSockets(std::shared_ptr<const Handles> io) : handles(std::make_shared<SocketHandles>()) {
    handles->io = std::move(io);
  }

  std::unique_ptr<net::Network> instance_network(Caller&) override { return std::make_unique<HostNetwork>(); }

  TcpResult create_tcp_socket(Caller& caller, net::IpAddressFamily family) override {
    auto socket = new_tcp_socket(handles, family);
    if (socket.is_err()) return TcpResult::err(socket.error());
    return TcpResult::ok(handles->tcp->tcp_socket.make_own(caller.store(), std::move(socket.value())));
  }
  UdpResult create_udp_socket(Caller& caller, net::IpAddressFamily family) override {
    auto socket = new_udp_socket(handles, family);
    if (socket.is_err()) return UdpResult::err(socket.error());
    return UdpResult::ok(handles->udp->udp_socket.make_own(caller.store(), std::move(socket.value())));
  }

  LookupResult resolve_addresses(Caller& caller, net::Network&, std::string name) override {
    auto lookup = std::make_shared<Lookup>();
    if (lookup->done_fd->get() < 0) return LookupResult::err(error_code(errno));
    if (auto ip = ip_literal(name)) {
      lookup->addresses.push_back(*ip);
      finish(*lookup);
    } else if (!core::is_host_name(name)) {  // a URL, `host:port`, spaces: not a lookup
      return LookupResult::err(ErrorCode::invalid_argument);
    } else {
      // A guest cannot start threads without end: past the limit, or when
      // no thread can be made, the failure is temporary.
      if (running_lookups->load() >= kMaxRunningLookups)
        return LookupResult::err(ErrorCode::temporary_resolver_failure);
      try {
        ++*running_lookups;
        std::thread([name = std::move(name), lookup, running = running_lookups] {
          resolve(name, *lookup);
          finish(*lookup);
          --*running;
        }).detach();
      } catch (const std::system_error&) {
        --*running_lookups;
        return LookupResult::err(ErrorCode::temporary_resolver_failure);
      }
    }
    return LookupResult::ok(handles->lookup->resolve_address_stream.make_own(
        caller.store(), std::make_unique<ResolveAddressStream>(std::move(lookup))));
  }

  std::shared_ptr<SocketHandles> handles;

 private:
  static constexpr int kMaxRunningLookups = 64;
  // Shared with the lookup threads, which may outlive this object.
  std::shared_ptr<std::atomic<int>> running_lookups = std::make_shared<std::atomic<int>>(0);

  static void finish(Lookup& lookup) {
    lookup.done.store(true, std::memory_order_release);
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(lookup.done_fd->get(), &one, sizeof one);
  }
};

void add_interfaces(Linker& linker, const std::shared_ptr<SocketInterfaces>& host, SocketHandles* handles) {
  sockets::network::add_to_linker(linker, host);
  sockets::instance_network::add_to_linker(linker, host);
  auto udp = sockets::udp::add_to_linker(linker, host);
  sockets::udp_create_socket::add_to_linker(linker, host);
  auto tcp = sockets::tcp::add_to_linker(linker, host);
  sockets::tcp_create_socket::add_to_linker(linker, host);
  auto lookup = sockets::ip_name_lookup::add_to_linker(linker, host);
  if (handles) {
    handles->udp = udp;
    handles->tcp = tcp;
    handles->lookup = lookup;
  }
}

}  // namespace

void add_sockets(Linker& linker, std::shared_ptr<const Handles> handles, bool allow_network) {
  if (!allow_network) {
    add_interfaces(linker, std::make_shared<DeniedSockets>(), nullptr);
    return;
  }
  auto host = std::make_shared<HostSockets>(std::move(handles));
  add_interfaces(linker, host, host->handles.get());
}

}  // namespace cmhost::wasi::detail
