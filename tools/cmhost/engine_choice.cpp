#include "engine_choice.hpp"

#include <fmt/core.h>

#include <chrono>

#include "cmhost/error.hpp"

namespace cmhost::tools {

engine::EngineConfig engine_config(const std::string& name, const CommandLineLimits& limits,
                                   const std::vector<std::string>& compat) {
  engine::EngineConfig config;
  if (name == "interp") {
    config.backend = engine::Backend::Interpreter;
  } else if (name == "aot" || name == "aot-baseline" || name == "aot-optimized") {
    config.backend = engine::Backend::AheadOfTime;
    config.on_compile = [](const std::string& what) { fmt::print(stderr, "cmhost: {}\n", what); };
    if (name == "aot-baseline") config.aot_tier = engine::EngineConfig::AotTier::Baseline;
    if (name == "aot-optimized") config.aot_tier = engine::EngineConfig::AotTier::Optimized;
  } else {
    throw Error(ErrorKind::Usage, "unknown engine `" + name + "` (expected " + kEngineNames + ")");
  }
  config.metering = limits.fuel.has_value() || limits.timeout_seconds.has_value();
  for (const std::string& rule : compat) {
    if (rule != "sync-cancel-in-set") throw Error(ErrorKind::Usage, "unknown --compat `" + rule + "`");
    config.allow_sync_cancel_in_waitable_set = true;
  }
  return config;
}

Component load_component(Engine& engine, const std::string& file, const std::string& artifact) {
  return artifact.empty() ? Component::from_file(engine, file)
                          : Component::from_file_with_artifact(engine, file, artifact);
}

GuestLimiter::GuestLimiter(Engine& engine, Store& store, const CommandLineLimits& limits) : limits_(limits), store_(store) {
  if (limits.max_memory_bytes) {
    StoreLimits store_limits = store.limits();
    store_limits.total_memory_bytes = limits.max_memory_bytes;
    store.set_limits(store_limits);
  }
  if (limits.fuel) store.set_fuel(limits.fuel);
  if (limits.timeout_seconds) {
    store.set_epoch_deadline(1);
    const auto timeout = std::chrono::duration<double>(*limits.timeout_seconds);
    timer_ = std::thread([this, &engine, timeout] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!stop_.wait_for(lock, timeout, [this] { return stopping_; })) engine.increment_epoch();
    });
  }
}

GuestLimiter::~GuestLimiter() {
  if (!timer_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  timer_.join();
}

std::string GuestLimiter::explain(const Error& trap) const {
  if (limits_.timeout_seconds && store_.interrupted())
    return fmt::format("timed out after {} s (--timeout): {}", *limits_.timeout_seconds, trap.what());
  if (limits_.fuel && store_.fuel() == uint64_t{0}) return fmt::format("{} (--fuel {})", trap.what(), *limits_.fuel);
  return trap.what();
}

}  // namespace cmhost::tools
