// Guest memory as the ABI stage sees it: a core memory of the engine store
// plus the canon realloc function of the same options.
#pragma once

#include <optional>

#include "cmhost/abi.hpp"
#include "cmhost/engine/backend.hpp"

namespace cmhost::runtime {

class ComponentInstance;

class CoreGuestMemory final : public abi::GuestMemory {
 public:
  CoreGuestMemory(engine::Store& store, engine::Extern memory, std::optional<engine::Extern> realloc,
                  bool* may_leave)
      : store_(store), memory_(memory), realloc_(realloc), may_leave_(may_leave) {}

  std::span<uint8_t> bytes() override { return store_.memory_bytes(memory_); }

  uint64_t realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size) override {
    if (!realloc_) throw_trap("the canonical options have no realloc function to allocate with");
    const uint64_t args[4] = {old_ptr, old_size, align, new_size};
    uint64_t result[1] = {0};
    // realloc may not call imports: the spec clears may_leave around it.
    *may_leave_ = false;
    try {
      store_.call(*realloc_, args, result);
    } catch (...) {
      *may_leave_ = true;
      throw;
    }
    *may_leave_ = true;
    return result[0];
  }

 private:
  engine::Store& store_;
  engine::Extern memory_;
  std::optional<engine::Extern> realloc_;
  bool* may_leave_;
};

}  // namespace cmhost::runtime
