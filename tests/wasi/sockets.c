// A command that calls wasi:sockets@0.2.12 directly (wasi-libc's preview1
// build cannot open sockets), through the canonical ABI glue below, and
// prints what happened. Made a component by make-command.mjs with the
// world in sockets/ (tests/CMakeLists.txt); tests/wasi/sockets_test.mjs
// runs it against servers it starts on 127.0.0.1.
//
//   sockets tcp-client PORT MESSAGE   connect, send, read the echo back
//   sockets tcp-server                listen on a free port, serve one line
//   sockets udp PORT MESSAGE          send a datagram, receive the echo
//   sockets lookup NAME               the addresses NAME resolves to
//   sockets errors                    what wrong calls are refused with
//   sockets denied                    what a socket and a lookup give
//   sockets unpermitted-write PORT    write without check-write (a trap)
//   sockets udp-restream              a second stream call while the
//                                     first one's streams live (a trap)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMPORT(module, name) __attribute__((import_module(module), import_name(name)))
#define NETWORK "wasi:sockets/instance-network@0.2.12"
#define LOOKUP "wasi:sockets/ip-name-lookup@0.2.12"
#define TCP "wasi:sockets/tcp@0.2.12"
#define TCP_CREATE "wasi:sockets/tcp-create-socket@0.2.12"
#define UDP "wasi:sockets/udp@0.2.12"
#define UDP_CREATE "wasi:sockets/udp-create-socket@0.2.12"
#define POLL "wasi:io/poll@0.2.12"
#define STREAMS "wasi:io/streams@0.2.12"

// result<T, error-code> where T is handles (up to three): the error code,
// when it failed, is where the handles would be.
typedef struct {
  uint8_t is_err;
  uint8_t pad[3];
  union {
    int32_t handles[3];
    uint8_t code;
  };
} NetResult;

// result<_, error-code>: the error code right after the discriminant.
typedef struct {
  uint8_t is_err;
  uint8_t code;
} VoidResult;

// An ip-socket-address, flattened as the canonical ABI passes it in
// parameters: the case, then the ipv6 case's 11 fields (ipv4 uses 5).
typedef struct {
  int32_t f[12];
} FlatAddress;

// ip-socket-address in memory: case at 0, the record at 4.
typedef struct {
  uint8_t is_ipv6;
  uint8_t pad[3];
  union {
    struct {
      uint16_t port;
      uint8_t address[4];
    } v4;
    struct {
      uint16_t port;
      uint32_t flow_info;
      uint16_t address[8];
      uint32_t scope_id;
    } v6;
  } as;
} SocketAddress;

IMPORT(NETWORK, "instance-network") int32_t instance_network(void);
IMPORT(TCP_CREATE, "create-tcp-socket") void create_tcp_socket(int32_t family, NetResult* out);
IMPORT(UDP_CREATE, "create-udp-socket") void create_udp_socket(int32_t family, NetResult* out);

#define ADDRESS_PARAMS \
  int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t
IMPORT(TCP, "[method]tcp-socket.start-bind") void tcp_start_bind(int32_t, int32_t, ADDRESS_PARAMS, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.finish-bind") void tcp_finish_bind(int32_t, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.start-connect") void tcp_start_connect(int32_t, int32_t, ADDRESS_PARAMS, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.finish-connect") void tcp_finish_connect(int32_t, NetResult*);
IMPORT(TCP, "[method]tcp-socket.start-listen") void tcp_start_listen(int32_t, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.finish-listen") void tcp_finish_listen(int32_t, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.accept") void tcp_accept(int32_t, NetResult*);
IMPORT(TCP, "[method]tcp-socket.local-address") void tcp_local_address(int32_t, uint8_t* out);
IMPORT(TCP, "[method]tcp-socket.shutdown") void tcp_shutdown(int32_t, int32_t how, VoidResult*);
IMPORT(TCP, "[method]tcp-socket.subscribe") int32_t tcp_subscribe(int32_t);
IMPORT(TCP, "[resource-drop]tcp-socket") void tcp_drop(int32_t);

IMPORT(UDP, "[method]udp-socket.start-bind") void udp_start_bind(int32_t, int32_t, ADDRESS_PARAMS, VoidResult*);
IMPORT(UDP, "[method]udp-socket.finish-bind") void udp_finish_bind(int32_t, VoidResult*);
IMPORT(UDP, "[method]udp-socket.stream")
void udp_stream(int32_t, int32_t is_some, ADDRESS_PARAMS, NetResult*);
IMPORT(UDP, "[method]incoming-datagram-stream.receive") void udp_receive(int32_t, int64_t max, uint8_t* out);
IMPORT(UDP, "[method]incoming-datagram-stream.subscribe") int32_t udp_incoming_subscribe(int32_t);
IMPORT(UDP, "[method]outgoing-datagram-stream.check-send") void udp_check_send(int32_t, uint8_t* out);
IMPORT(UDP, "[method]outgoing-datagram-stream.send") void udp_send(int32_t, const void* list, int32_t n, uint8_t* out);
IMPORT(UDP, "[resource-drop]udp-socket") void udp_drop(int32_t);
IMPORT(UDP, "[resource-drop]incoming-datagram-stream") void udp_incoming_drop(int32_t);
IMPORT(UDP, "[resource-drop]outgoing-datagram-stream") void udp_outgoing_drop(int32_t);

IMPORT(LOOKUP, "resolve-addresses") void resolve_addresses(int32_t, const char*, int32_t, NetResult*);
IMPORT(LOOKUP, "[method]resolve-address-stream.resolve-next-address") void resolve_next(int32_t, uint8_t* out);
IMPORT(LOOKUP, "[method]resolve-address-stream.subscribe") int32_t resolve_subscribe(int32_t);
IMPORT(LOOKUP, "[resource-drop]resolve-address-stream") void resolve_drop(int32_t);

IMPORT(POLL, "[method]pollable.block") void pollable_block(int32_t);
IMPORT(POLL, "[resource-drop]pollable") void pollable_drop(int32_t);
IMPORT(STREAMS, "[method]input-stream.blocking-read") void blocking_read(int32_t, int64_t len, uint8_t* out);
IMPORT(STREAMS, "[method]output-stream.blocking-write-and-flush")
void blocking_write_and_flush(int32_t, const void* data, int32_t len, uint8_t* out);
IMPORT(STREAMS, "[method]output-stream.write") void stream_write(int32_t, const void* data, int32_t len, uint8_t* out);
IMPORT(STREAMS, "[resource-drop]input-stream") void input_drop(int32_t);
IMPORT(STREAMS, "[resource-drop]output-stream") void output_drop(int32_t);

// Lists the host returns (read bytes, datagrams) are allocated here.
__attribute__((export_name("cabi_realloc"))) void* cabi_realloc(void* old, size_t old_size, size_t align,
                                                                size_t new_size) {
  (void)old_size;
  (void)align;  // malloc's alignment (16) covers every type here
  return realloc(old, new_size);
}

static const char* const kErrorCodes[] = {
    "unknown", "access-denied", "not-supported", "invalid-argument", "out-of-memory", "timeout",
    "concurrency-conflict", "not-in-progress", "would-block", "invalid-state", "new-socket-limit",
    "address-not-bindable", "address-in-use", "remote-unreachable", "connection-refused", "connection-reset",
    "connection-aborted", "datagram-too-large", "name-unresolvable", "temporary-resolver-failure",
    "permanent-resolver-failure"};

static const char* error_name(uint8_t is_err, uint8_t code) {
  if (!is_err) return "ok";
  return code < sizeof kErrorCodes / sizeof *kErrorCodes ? kErrorCodes[code] : "?";
}
#define OUTCOME(r) error_name((r).is_err, (r).code)

static void fail_if_err(const char* what, uint8_t is_err, uint8_t code) {
  if (is_err) {
    printf("%s: %s\n", what, error_name(is_err, code));
    exit(1);
  }
}
#define CHECK(what, r) fail_if_err(what, (r).is_err, (r).code)

enum { IPV4 = 0, IPV6 = 1 };

static FlatAddress ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port) {
  FlatAddress f = {{0, port, a, b, c, d}};
  return f;
}

static FlatAddress ipv6_loopback(uint16_t port) {
  FlatAddress f = {{1, port, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}};
  return f;
}

#define SPREAD(a) \
  a.f[0], a.f[1], a.f[2], a.f[3], a.f[4], a.f[5], a.f[6], a.f[7], a.f[8], a.f[9], a.f[10], a.f[11]

static void wait_on(int32_t pollable) {
  pollable_block(pollable);
  pollable_drop(pollable);
}

static int32_t tcp_socket(int32_t family) {
  NetResult r;
  create_tcp_socket(family, &r);
  CHECK("create-tcp-socket", r);
  return r.handles[0];
}

static uint16_t local_port(int32_t socket) {
  uint8_t out[40] __attribute__((aligned(4)));
  tcp_local_address(socket, out);
  if (out[0]) {
    printf("local-address: %s\n", kErrorCodes[out[4]]);
    exit(1);
  }
  const SocketAddress* a = (const SocketAddress*)(out + 4);
  return a->is_ipv6 ? a->as.v6.port : a->as.v4.port;
}

static void write_all(int32_t output, const char* text) {
  uint8_t out[12] __attribute__((aligned(4)));
  const size_t n = strlen(text);
  for (size_t at = 0; at < n; at += 4096) {
    blocking_write_and_flush(output, text + at, (int32_t)(n - at < 4096 ? n - at : 4096), out);
    if (out[0]) {
      printf("write: stream error %d\n", out[4]);
      exit(1);
    }
  }
}

// Reads until `want` bytes came, a newline (when `line`), or the end.
static size_t read_some(int32_t input, char* buffer, size_t want, int line) {
  size_t got = 0;
  while (got < want) {
    uint8_t out[12] __attribute__((aligned(4)));
    blocking_read(input, (int64_t)(want - got), out);
    if (out[0]) break;  // closed, or failed
    uint8_t* data = *(uint8_t**)(out + 4);
    const size_t n = *(uint32_t*)(out + 8);
    memcpy(buffer + got, data, n);
    if (n) free(data);
    got += n;
    if (line && got > 0 && buffer[got - 1] == '\n') break;
  }
  buffer[got] = 0;
  return got;
}

// Connects to 127.0.0.1:port, waiting on one pollable made before the
// connect started, as wasi-libc does: it must follow the socket's state.
static NetResult tcp_connect(int32_t socket, uint16_t port) {
  const int32_t network = instance_network();
  const int32_t pollable = tcp_subscribe(socket);
  NetResult r;
  VoidResult v;
  tcp_start_connect(socket, network, SPREAD(ipv4(127, 0, 0, 1, port)), &v);
  CHECK("start-connect", v);
  for (int waits = 0;; ++waits) {
    tcp_finish_connect(socket, &r);
    if (!r.is_err) break;
    if (r.code != 8) CHECK("finish-connect", r);  // would-block: wait until it can finish
    if (waits > 100) {
      printf("the socket's pollable was ready while connecting\n");
      exit(1);
    }
    pollable_block(pollable);
  }
  pollable_drop(pollable);
  return r;
}

static int tcp_client(uint16_t port, const char* message) {
  const int32_t socket = tcp_socket(IPV4);
  const NetResult r = tcp_connect(socket, port);
  const int32_t input = r.handles[0], output = r.handles[1];
  write_all(output, message);
  char echoed[256];
  read_some(input, echoed, strlen(message), 0);
  printf("echoed: %s\n", echoed);
  input_drop(input);
  output_drop(output);
  tcp_drop(socket);
  return 0;
}

static int tcp_server(void) {
  const int32_t network = instance_network();
  const int32_t socket = tcp_socket(IPV4);
  NetResult r;
  VoidResult v;
  tcp_start_bind(socket, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  CHECK("start-bind", v);
  tcp_finish_bind(socket, &v);
  CHECK("finish-bind", v);
  const int32_t pollable = tcp_subscribe(socket);  // made while bound, used while listening
  tcp_start_listen(socket, &v);
  CHECK("start-listen", v);
  tcp_finish_listen(socket, &v);
  CHECK("finish-listen", v);
  printf("listening on %u\n", local_port(socket));
  fflush(stdout);
  for (int waits = 0;; ++waits) {
    tcp_accept(socket, &r);
    if (!r.is_err) break;
    if (r.code != 8) CHECK("accept", r);
    if (waits > 100) {
      printf("the socket's pollable was ready with no connection to accept\n");
      return 1;
    }
    pollable_block(pollable);
  }
  pollable_drop(pollable);
  const int32_t client = r.handles[0], input = r.handles[1], output = r.handles[2];
  char line[256];
  read_some(input, line, sizeof line - 1, 1);
  char reply[300];
  snprintf(reply, sizeof reply, "got: %s", line);
  write_all(output, reply);
  tcp_shutdown(client, 1, &v);  // send: the peer sees the end
  CHECK("shutdown", v);
  printf("served: %s", line);
  input_drop(input);
  output_drop(output);
  tcp_drop(client);
  tcp_drop(socket);
  return 0;
}

// outgoing-datagram: data (pointer, length), then option<ip-socket-address>.
typedef struct {
  const void* data;
  uint32_t length;
  uint8_t has_address;
  uint8_t pad[3];
  SocketAddress address;
} OutgoingDatagram;

static int udp(uint16_t port, const char* message) {
  const int32_t network = instance_network();
  NetResult r;
  VoidResult v;
  create_udp_socket(IPV4, &r);
  CHECK("create-udp-socket", r);
  const int32_t socket = r.handles[0];
  udp_start_bind(socket, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  CHECK("start-bind", v);
  udp_finish_bind(socket, &v);
  CHECK("finish-bind", v);
  udp_stream(socket, 1, SPREAD(ipv4(127, 0, 0, 1, port)), &r);
  CHECK("stream", r);
  const int32_t incoming = r.handles[0], outgoing = r.handles[1];
  uint8_t out[16] __attribute__((aligned(8)));
  udp_check_send(outgoing, out);
  if (out[0] || *(uint64_t*)(out + 8) == 0) {
    printf("check-send: nothing permitted\n");
    return 1;
  }
  OutgoingDatagram datagram = {message, (uint32_t)strlen(message), 0, {0}, {0}};
  udp_send(outgoing, &datagram, 1, out);
  if (out[0] || *(uint64_t*)(out + 8) != 1) {
    printf("send: %s\n", out[0] ? kErrorCodes[out[8]] : "nothing sent");
    return 1;
  }
  for (;;) {
    udp_receive(incoming, 1, out);
    if (out[0]) {
      printf("receive: %s\n", kErrorCodes[out[4]]);
      return 1;
    }
    const uint8_t* list = *(uint8_t**)(out + 4);
    if (*(uint32_t*)(out + 8) == 1) {
      // incoming-datagram: data (pointer, length), remote-address at 8.
      const char* data = *(const char**)list;
      const uint32_t length = *(const uint32_t*)(list + 4);
      const SocketAddress* from = (const SocketAddress*)(list + 8);
      printf("udp echoed: %.*s, from the server: %s\n", (int)length, data,
             !from->is_ipv6 && from->as.v4.port == port ? "yes" : "no");
      break;
    }
    wait_on(udp_incoming_subscribe(incoming));
  }
  udp_incoming_drop(incoming);
  udp_outgoing_drop(outgoing);
  udp_drop(socket);
  return 0;
}

static int lookup(const char* name) {
  NetResult r;
  resolve_addresses(instance_network(), name, (int32_t)strlen(name), &r);
  CHECK("resolve-addresses", r);
  const int32_t stream = r.handles[0];
  for (;;) {
    // result<option<ip-address>, error-code>: the option at 2, the
    // ip-address's case at 4, its fields at 6.
    uint8_t out[24] __attribute__((aligned(2)));
    resolve_next(stream, out);
    if (out[0] && out[2] == 8) {  // would-block: not resolved yet
      wait_on(resolve_subscribe(stream));
      continue;
    }
    if (out[0]) {
      printf("lookup: %s\n", kErrorCodes[out[2]]);
      return 1;
    }
    if (!out[2]) break;
    if (out[4] == 0) {
      printf("%u.%u.%u.%u\n", out[6], out[7], out[8], out[9]);
    } else {
      const uint16_t* s = (const uint16_t*)(out + 6);
      printf("%x:%x:%x:%x:%x:%x:%x:%x\n", s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]);
    }
  }
  resolve_drop(stream);
  return 0;
}

// Each wrong call and the error code it gives.
static int errors(void) {
  const int32_t network = instance_network();
  NetResult r;
  VoidResult v;
  int32_t s = tcp_socket(IPV4);
  tcp_finish_bind(s, &v);
  printf("finish-bind before start-bind: %s\n", OUTCOME(v));
  tcp_start_listen(s, &v);
  printf("listen unbound: %s\n", OUTCOME(v));
  tcp_start_connect(s, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  printf("connect to port 0: %s\n", OUTCOME(v));
  tcp_start_connect(s, network, SPREAD(ipv4(0, 0, 0, 0, 80)), &v);
  printf("connect to 0.0.0.0: %s\n", OUTCOME(v));
  tcp_start_connect(s, network, SPREAD(ipv6_loopback(80)), &v);
  printf("connect ipv4 socket to ipv6: %s\n", OUTCOME(v));
  tcp_start_bind(s, network, SPREAD(ipv4(224, 0, 0, 1, 0)), &v);
  printf("bind multicast: %s\n", OUTCOME(v));
  tcp_start_bind(s, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  tcp_start_bind(s, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  printf("bind while binding: %s\n", OUTCOME(v));
  tcp_finish_bind(s, &v);
  tcp_start_bind(s, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  printf("bind twice: %s\n", OUTCOME(v));
  // A port nobody listens on: this socket's, which never listened.
  const uint16_t unused = local_port(s);
  const int32_t client = tcp_socket(IPV4);
  tcp_start_connect(client, network, SPREAD(ipv4(127, 0, 0, 1, unused)), &v);
  const char* refused = OUTCOME(v);  // refused at once, or when finishing
  while (!v.is_err) {
    wait_on(tcp_subscribe(client));
    tcp_finish_connect(client, &r);
    refused = OUTCOME(r);
    if (!(r.is_err && r.code == 8)) break;
  }
  printf("connect to a closed port: %s\n", refused);
  tcp_drop(client);
  tcp_drop(s);
  s = tcp_socket(IPV6);
  tcp_start_bind(s, network, SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  printf("bind ipv6 socket to ipv4: %s\n", OUTCOME(v));
  tcp_drop(s);
  resolve_addresses(network, "not a name", 10, &r);
  printf("lookup of 'not a name': %s\n", OUTCOME(r));
  resolve_addresses(network, "localhost:80", 12, &r);
  printf("lookup of 'localhost:80': %s\n", OUTCOME(r));
  create_udp_socket(IPV4, &r);
  s = r.handles[0];
  udp_stream(s, 0, SPREAD(ipv4(0, 0, 0, 0, 0)), &r);
  printf("udp stream unbound: %s\n", OUTCOME(r));
  udp_drop(s);
  return 0;
}

static int unpermitted_write(uint16_t port) {
  const int32_t socket = tcp_socket(IPV4);
  const NetResult r = tcp_connect(socket, port);
  uint8_t out[12] __attribute__((aligned(4)));
  stream_write(r.handles[1], "x", 1, out);  // no check-write before it
  printf("the write was allowed\n");
  return 0;
}

static int udp_restream(void) {
  NetResult r;
  VoidResult v;
  create_udp_socket(IPV4, &r);
  const int32_t socket = r.handles[0];
  udp_start_bind(socket, instance_network(), SPREAD(ipv4(127, 0, 0, 1, 0)), &v);
  udp_finish_bind(socket, &v);
  udp_stream(socket, 0, SPREAD(ipv4(0, 0, 0, 0, 0)), &r);
  CHECK("stream", r);
  udp_stream(socket, 0, SPREAD(ipv4(0, 0, 0, 0, 0)), &r);  // the first pair still lives
  printf("the second stream call was allowed\n");
  return 0;
}

static int denied(void) {
  NetResult r;
  create_tcp_socket(IPV4, &r);
  printf("tcp: %s\n", OUTCOME(r));
  create_udp_socket(IPV6, &r);
  printf("udp: %s\n", OUTCOME(r));
  resolve_addresses(instance_network(), "localhost", 9, &r);
  printf("lookup: %s\n", OUTCOME(r));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "tcp-client") == 0) return tcp_client((uint16_t)atoi(argv[2]), argv[3]);
  if (argc == 2 && strcmp(argv[1], "tcp-server") == 0) return tcp_server();
  if (argc == 4 && strcmp(argv[1], "udp") == 0) return udp((uint16_t)atoi(argv[2]), argv[3]);
  if (argc == 3 && strcmp(argv[1], "lookup") == 0) return lookup(argv[2]);
  if (argc == 2 && strcmp(argv[1], "errors") == 0) return errors();
  if (argc == 2 && strcmp(argv[1], "denied") == 0) return denied();
  if (argc == 3 && strcmp(argv[1], "unpermitted-write") == 0) return unpermitted_write((uint16_t)atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "udp-restream") == 0) return udp_restream();
  fprintf(stderr, "usage: sockets tcp-client PORT MESSAGE | tcp-server | udp PORT MESSAGE | lookup NAME | errors | denied"
                  " | unpermitted-write PORT | udp-restream\n");
  return 2;
}
