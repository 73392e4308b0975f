// Moves an engine's epoch on at a steady period, on a thread of its own, so
// that guest code still running past its request's timeout is interrupted
// (Store::set_epoch_deadline) even when it never returns to the loop: a
// 0.2 proxy spinning on its thread, a 0.3 service spinning on the loop's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "cmhost/cmhost.hpp"

namespace cmhost::http {

class EpochTicker {
 public:
  // Ticks every quarter of `timeout` (5 ms to 1 s): a deadline of
  // timeout_ticks() passes one to three periods after the timeout.
  EpochTicker(const Engine& engine, std::chrono::milliseconds timeout);
  ~EpochTicker();
  EpochTicker(const EpochTicker&) = delete;
  EpochTicker& operator=(const EpochTicker&) = delete;

  // Whether the engine's guest code can be interrupted (EngineConfig::metering).
  static bool can_interrupt(const Engine& engine);
  // The ticker of `engine` for `timeout`, shared by every server of the
  // process that asks for the same: two tickers on one engine would move
  // its epoch on twice as fast, cutting each other's requests short.
  static std::shared_ptr<EpochTicker> shared(const Engine& engine, std::chrono::milliseconds timeout);

  // The engine's epoch now.
  uint64_t epoch();
  // Ticks from now that pass no sooner than the timeout.
  uint64_t timeout_ticks() const { return timeout_ticks_; }

 private:
  Engine engine_;
  std::chrono::milliseconds period_;
  uint64_t timeout_ticks_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace cmhost::http
