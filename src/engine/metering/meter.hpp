// What a metered store's guest code draws on: fuel, and a deadline on the
// engine's epoch. Metered code (metering/instrument.hpp) counts down a slice counter
// at every loop header and calling function's entry, and calls the store
// when the slice is spent; only then does the store look at its fuel and at
// the epoch, which another thread may have moved. So a bump of the epoch is
// seen within one slice, and reading it costs nothing per unit.
//
// Shared by the backends; C++17 (wabt_backend.cpp includes it).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "cmhost/error.hpp"

namespace cmhost::engine {

class Meter {
 public:
  // Units between two looks at the fuel and the epoch: about 0.1 to 1 ms of
  // interpreted code, well under a millisecond compiled.
  static constexpr int64_t kSlice = 10000;
  static constexpr uint64_t kNoDeadline = std::numeric_limits<uint64_t>::max();

  explicit Meter(std::shared_ptr<const std::atomic<uint64_t>> epoch) : epoch_(std::move(epoch)) {}

  // Called when metered code took `slice` below zero: pays the unit being
  // spent from a new slice and returns that slice's remaining count, or
  // throws Error (Trap) when the fuel is spent or the deadline has passed.
  int64_t next_slice() {
    check_deadline();
    if (!fuel_) return kSlice - 1;
    if (reserve_ == 0) {
      throw Error(ErrorKind::Trap, "out of fuel: the store's fuel of " + std::to_string(granted_) +
                                       " units is spent (Store::set_fuel)");
    }
    const uint64_t slice = std::min<uint64_t>(reserve_, kSlice);
    reserve_ -= slice;
    return static_cast<int64_t>(slice) - 1;
  }

  // Traps when the epoch deadline has passed.
  void check_deadline() const {
    if (deadline_passed()) {
      throw Error(ErrorKind::Trap, "interrupted: the engine's epoch reached the store's deadline of " +
                                       std::to_string(deadline_));
    }
  }
  bool deadline_passed() const {
    return deadline_ != kNoDeadline && epoch_->load(std::memory_order_relaxed) >= deadline_;
  }

  // The fuel left, given what remains of the current slice; nullopt when
  // unlimited.
  std::optional<uint64_t> fuel(int64_t slice) const {
    if (!fuel_) return std::nullopt;
    return reserve_ + static_cast<uint64_t>(std::max<int64_t>(slice, 0));
  }
  // New fuel (nullopt: unlimited). The caller sets its slice counter to 0,
  // so the next unit asks for a slice.
  void set_fuel(std::optional<uint64_t> units) {
    fuel_ = units.has_value();
    reserve_ = units.value_or(0);
    granted_ = reserve_;
  }

  uint64_t epoch() const { return epoch_->load(std::memory_order_relaxed); }
  // Guest code traps once the epoch is at least `epoch`.
  void set_deadline(uint64_t epoch) { deadline_ = epoch; }
  uint64_t deadline() const { return deadline_; }

 private:
  std::shared_ptr<const std::atomic<uint64_t>> epoch_;
  bool fuel_ = false;
  uint64_t reserve_ = 0;  // fuel not yet handed to a slice
  uint64_t granted_ = 0;  // the last set_fuel, for the message
  uint64_t deadline_ = kNoDeadline;
};

}  // namespace cmhost::engine
