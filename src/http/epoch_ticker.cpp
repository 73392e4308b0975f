#include "epoch_ticker.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "cmhost/engine/backend.hpp"

namespace cmhost::http {

EpochTicker::EpochTicker(const Engine& engine, std::chrono::milliseconds timeout)
    : engine_(engine),
      period_(std::clamp(timeout / 4, std::chrono::milliseconds(5), std::chrono::milliseconds(1000))),
      // The first tick may come at once: one more than the timeout's, and
      // one more again so that the request's own timer ends it first.
      timeout_ticks_(static_cast<uint64_t>((timeout + period_ - std::chrono::milliseconds(1)) / period_) + 2) {
  thread_ = std::thread([this] {
    std::unique_lock lock(mutex_);
    while (!stop_.wait_for(lock, period_, [this] { return stopping_; })) engine_.increment_epoch();
  });
}

EpochTicker::~EpochTicker() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  thread_.join();
}

std::shared_ptr<EpochTicker> EpochTicker::shared(const Engine& engine, std::chrono::milliseconds timeout) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int64_t>, std::weak_ptr<EpochTicker>> tickers;
  const std::lock_guard lock(mutex);
  const auto key = std::make_pair(static_cast<const void*>(&Engine(engine).core()), int64_t{timeout.count()});
  if (auto existing = tickers[key].lock()) return existing;
  std::erase_if(tickers, [](const auto& entry) { return entry.second.expired(); });
  auto ticker = std::make_shared<EpochTicker>(engine, timeout);
  tickers[key] = ticker;
  return ticker;
}

bool EpochTicker::can_interrupt(const Engine& engine) { return Engine(engine).core().config().metering; }

uint64_t EpochTicker::epoch() { return engine_.core().epoch(); }

}  // namespace cmhost::http
