// What an embedder chooses of the core WebAssembly engine behind cmhost:
// the backend, metering, and the ahead-of-time cache and compiler
// (cmhost::Engine takes an EngineConfig). The interface a backend
// implements and the runtime drives is cmhost/engine/backend.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace cmhost::engine {

// The core engines cmhost can run guests on. Each is a folder of
// src/engine/ (docs/architecture.md).
enum class Backend : uint8_t {
  Interpreter,  // wabt's interpreter (src/engine/interp/): no compiler needed at run time
  AheadOfTime,  // wasm2c and the system C compiler (src/engine/aot/): native code, cached
};
const char* to_string(Backend backend) noexcept;

struct EngineConfig {
  Backend backend = Backend::Interpreter;
  // Guest code counts what it runs, one unit per loop iteration and per
  // entry of a function that makes calls, so that stores can bound it with
  // fuel and interrupt it from another thread (Store::set_fuel,
  // Store::set_epoch_deadline, Engine::increment_epoch). Modules run
  // unmodified when off.
  bool metering = false;

  // Compatibility with guests built before component-model#647 (May 2026;
  // wit-bindgen 0.58 and older, as wasmtime 45's test programs): a
  // synchronous stream or future cancel on an end that is in a waitable set
  // goes through when it completes at once, as the spec allowed then,
  // rather than trapping as it says now. A cancel that would have to wait
  // still traps. Off by default: the spec's trap.
  bool allow_sync_cancel_in_waitable_set = false;

  // Ahead of time only. Where compiled components are kept (empty:
  // $XDG_CACHE_HOME/cmhost, else ~/.cache/cmhost; created 0700 and refused
  // when others can write it).
  std::string cache_dir = {};
  // The C compiler artifacts are built with (a name on PATH, or a path).
  std::string compiler = "cc";
  // Which code components get. Optimized: the C compiler's -O2, waited for.
  // Baseline: TinyCC's unoptimised code, compiled in seconds whatever the
  // size, and slower. Tiered: Optimized for a component of up to
  // `tiered_code_bytes` of code; a bigger one gets Baseline code at once
  // while its Optimized artifact is built in a background process, which
  // the loads after it is in the cache get (Optimized when `baseline_compiler`
  // or the builder is not installed).
  enum class AotTier : uint8_t { Optimized, Baseline, Tiered };
  AotTier aot_tier = AotTier::Tiered;
  size_t tiered_code_bytes = size_t{512} << 10;
  std::string baseline_compiler = "tcc";
  // The program that runs those background builds, cmhost-aot-build
  // (empty: $CMHOST_AOT_BUILDER, else beside the executable or in its
  // ../libexec/cmhost/, where `cmake --install` puts it).
  std::string aot_builder = {};
  // Told when a component is compiled rather than found in the cache (a
  // line for a progress display); unset: nothing is said.
  std::function<void(const std::string&)> on_compile = nullptr;

  // Ahead of time only. Instances made and dropped in quick succession (a
  // server's) reuse freed linear memories: up to `memory_slots`
  // reservations (address space with its guard region, and the memory
  // image mapped into it) wait in a process-wide pool, their pages
  // dropped, so an idle one holds page tables and no data; a memory that
  // grew past `max_memory_bytes` is unmapped instead. The pool is the
  // process's, as large as the largest engine's `memory_slots`; an engine
  // with 0 slots unmaps its stores' memories when they go.
  struct PoolingConfig {
    size_t memory_slots = 0;
    uint64_t max_memory_bytes = uint64_t{64} << 20;
  };
  PoolingConfig pooling = {};
};

}  // namespace cmhost::engine
