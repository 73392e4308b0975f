// Handle tables: the per-instance table of the spec (index 0 never used,
// freed slots reused) and the store's table of handles held by the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cmhost/error.hpp"
#include "cmhost/runtime.hpp"

namespace cmhost::runtime {

struct ResourceHandle {
  ResourceTypeRef type;
  uint32_t rep = 0;
  bool own = true;
  uint32_t num_lends = 0;     // borrows of this own handle lent to calls in progress
  uint64_t borrow_scope = 0;  // borrows: the call that must drop it before returning
};

class HandleTable {
 public:
  static constexpr uint32_t kMaxLength = (1u << 28) - 1;

  uint32_t add(ResourceHandle h) {
    if (!free_.empty()) {
      const uint32_t i = free_.back();
      free_.pop_back();
      slots_[i] = Slot{true, std::move(h)};
      return i;
    }
    if (slots_.size() > kMaxLength) throw_trap("handle table is full (2^28-1 handles)");
    slots_.push_back(Slot{true, std::move(h)});
    return static_cast<uint32_t>(slots_.size() - 1);
  }

  ResourceHandle* find(uint32_t i) {
    if (i >= slots_.size() || !slots_[i].used) return nullptr;
    return &slots_[i].handle;
  }

  ResourceHandle& get(uint32_t i) {
    if (i >= slots_.size() || !slots_[i].used)
      throw_trap("unknown handle index " + std::to_string(i));
    return slots_[i].handle;
  }

  ResourceHandle remove(uint32_t i) {
    ResourceHandle h = std::move(get(i));
    slots_[i].used = false;
    slots_[i].handle = {};
    free_.push_back(i);
    return h;
  }

 private:
  struct Slot {
    bool used = false;
    ResourceHandle handle;
  };
  std::vector<Slot> slots_ = std::vector<Slot>(1);  // index 0 is never handed out
  std::vector<uint32_t> free_;
};

}  // namespace cmhost::runtime
