// `--engine=interp|aot`, `--artifact`, `--fuel`, `--timeout` and
// `--max-memory`, on every command that runs guests.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cmhost/cmhost.hpp"

namespace cmhost::tools {

inline constexpr const char* kEngineNames = "interp|aot|aot-baseline|aot-optimized";

// What the command line bounds a guest with.
struct CommandLineLimits {
  std::optional<uint64_t> fuel;             // units of guest code (loop iterations and calls)
  std::optional<double> timeout_seconds;    // wall-clock time of the guest's run
  std::optional<uint64_t> max_memory_bytes;  // the store's linear memories together
};

// The engine configuration an `--engine` value names: `aot` compiles each
// component on first use into the cache, saying so on stderr (a big one to
// baseline code first, EngineConfig::AotTier::Tiered; `aot-baseline` and
// `aot-optimized` pick one tier); fuel or a timeout meter the guest code.
// Usage for other names.
// `compat` holds `--compat` values: sync-cancel-in-set sets
// allow_sync_cancel_in_waitable_set (Usage for other names).
engine::EngineConfig engine_config(const std::string& name, const CommandLineLimits& limits = {},
                                   const std::vector<std::string>& compat = {});

// The component in `file`; with an `artifact` (`--artifact`, written by
// `cmhost compile`), its core modules come from that file rather than the
// engine's compiler or cache, after the checks of
// Component::from_bytes_with_artifact.
Component load_component(Engine& engine, const std::string& file, const std::string& artifact);

// Applies the limits to a store for as long as it lives: a timeout starts a
// timer thread that moves the engine's epoch past the store's deadline.
class GuestLimiter {
 public:
  GuestLimiter(Engine& engine, Store& store, const CommandLineLimits& limits);
  ~GuestLimiter();
  GuestLimiter(const GuestLimiter&) = delete;
  GuestLimiter& operator=(const GuestLimiter&) = delete;
  // A trap's message, saying which limit ended the run when one did.
  std::string explain(const Error& trap) const;

 private:
  const CommandLineLimits limits_;
  Store& store_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread timer_;
};

}  // namespace cmhost::tools
