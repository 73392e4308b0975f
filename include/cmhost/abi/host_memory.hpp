// A linear memory owned by the host, with the allocator of the canonical ABI
// reference's own tests: a bump pointer that never frees and shrinks in place
// only when the new size is strictly smaller. For tests, tools, benchmarks
// and examples that exercise the ABI stage without a wasm engine.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cmhost/abi/canon.hpp"

namespace cmhost::abi {

class HostMemory final : public GuestMemory {
 public:
  // One realloc call: old_ptr, old_size, align, new_size, and the result.
  using Allocation = std::array<uint64_t, 5>;

  explicit HostMemory(size_t size, uint64_t heap_base = 1);
  explicit HostMemory(std::vector<uint8_t> bytes, uint64_t heap_base = 1);

  std::span<uint8_t> bytes() override { return bytes_; }
  uint64_t realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size) override;

  const std::vector<uint8_t>& data() const { return bytes_; }
  const std::vector<Allocation>& allocations() const { return allocations_; }
  // Grows the memory on every allocation by `bytes`, to exercise moving memory.
  void set_growth_per_allocation(size_t bytes) { growth_ = bytes; }
  // Grows the memory as far as an allocation needs, rather than trapping.
  void set_grow_on_demand(bool on) { grow_on_demand_ = on; }
  // Forget allocations and restart the bump pointer (memory content stays).
  void reset(uint64_t heap_base);
  void set_log_allocations(bool on) { log_ = on; }

 private:
  std::vector<uint8_t> bytes_;
  uint64_t bump_;
  size_t growth_ = 0;
  bool grow_on_demand_ = false;
  bool log_ = true;
  std::vector<Allocation> allocations_;
};

}  // namespace cmhost::abi
