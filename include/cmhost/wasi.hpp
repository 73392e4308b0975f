// WASI 0.2 for components, on the public API as any embedder could write it
// (src/wasi): wasi:cli (environment, exit, stdin/stdout/stderr, terminals),
// wasi:io (error, poll, streams), wasi:clocks, wasi:random, wasi:filesystem
// confined to preopened directories, and wasi:sockets (TCP, UDP, name
// lookup), refused with access-denied unless the network is allowed. WASI
// 0.3 alongside, as far as it goes so far: wasi:cli, wasi:clocks and
// wasi:random (docs/wasi.md lists what is there, function by function).
//
//   cmhost::Linker linker;
//   cmhost::wasi::WasiConfig config;
//   config.args = {"app", "--verbose"};
//   cmhost::wasi::add_to_linker(linker, config);
//   const auto instance = linker.instantiate(store, component);
//   const int status = cmhost::wasi::run(store, instance);
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cmhost/cmhost.hpp"

namespace cmhost::wasi {

// A host directory the guest sees as `guest_path`: nothing outside it can
// be reached through it (no `..` past it, no absolute paths, no symlinks
// leading out, resolved by the kernel beneath the directory).
struct Preopen {
  std::string host_path;
  std::string guest_path;
  // Files open for reading only; nothing beneath changes (no writes,
  // creations, removals, renames, links or times): `read-only`.
  bool read_only = false;
};

struct WasiConfig {
  std::vector<std::string> args;  // the program's name first, as argv
  std::vector<std::pair<std::string, std::string>> env;
  // stdin: the process's when unset, else these bytes, then end of stream.
  std::optional<std::string> stdin_bytes;
  // stdout and stderr: the process's when null, else appended to these.
  std::shared_ptr<std::string> stdout_buffer, stderr_buffer;
  // Or files, when no bytes or buffer is given: stdin read from this path,
  // stdout and stderr written to these (created or truncated).
  std::optional<std::string> stdin_file, stdout_file, stderr_file;
  // Clocks and random a test can fix: the wall clock at this time (ns since
  // the epoch), and random bytes, secure and insecure, from a generator
  // with this seed. Unset, the secure ones come from the kernel
  // (getrandom(2)) and the insecure ones from a generator it seeds.
  std::optional<uint64_t> wall_clock_ns;
  std::optional<uint64_t> random_seed;
  std::vector<Preopen> preopens;
  // wasi:sockets over the host's network: TCP and UDP sockets to and from
  // any address, and name lookups. Denied by default: every socket and
  // lookup is then refused with access-denied.
  bool allow_network = false;
};

// Supplies the WASI 0.2 and 0.3 interfaces cmhost implements to `linker`,
// over one configuration (one stdout, whichever version writes to it, in
// order); every 0.2.x and 0.3.x version of them links (Linker matches
// versions by semver). Objects the guest holds (streams, pollables) live in
// the store that instantiates.
void add_to_linker(Linker& linker, const WasiConfig& config);

// wasi:cli/exit called by the guest: thrown out of the call into it, to
// whoever made the call (wasi::run returns its code).
//
// An exit is the guest ending the program, not a failure, so Exit is not a
// cmhost::Error: code that catches Error to report or rewrap it (cmhost's
// own, which turns an Error inside a host stream copy into a trap with
// context; an embedder's "print the error, exit 2") lets an exit pass
// untouched, and the status the guest chose reaches the process. wasmtime
// keeps its I32Exit apart from traps the same way.
class Exit : public std::exception {
 public:
  explicit Exit(int code) : code_(code) {}
  int code() const { return code_; }
  const char* what() const noexcept override { return "the guest exited"; }

 private:
  int code_;
};

static_assert(!std::is_base_of_v<Error, Exit>, "an exit must not be caught as an error (see Exit)");

// Runs a command component's `wasi:cli/run@0.3.x#run` (async, through the
// store's event loop) when it exports one, else its `wasi:cli/run@0.2.x#run`:
// its exit status (0; 1 when `run` returns err; the code given to exit). A
// trap is thrown as cmhost::Error (Trap); a component without either export
// is Error (Usage).
int run(Store& store, const Instance& instance);

}  // namespace cmhost::wasi
