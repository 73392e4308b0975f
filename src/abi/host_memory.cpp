#include "cmhost/abi/host_memory.hpp"

#include <cstring>

#include "cmhost/error.hpp"

namespace cmhost::abi {

HostMemory::HostMemory(size_t size, uint64_t heap_base) : bytes_(size, 0), bump_(heap_base) {}
HostMemory::HostMemory(std::vector<uint8_t> bytes, uint64_t heap_base)
    : bytes_(std::move(bytes)), bump_(heap_base) {}

void HostMemory::reset(uint64_t heap_base) {
  bump_ = heap_base;
  allocations_.clear();
}

uint64_t HostMemory::realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align,
                             uint64_t new_size) {
  if (align == 0 || (align & (align - 1)))
    throw_trap("realloc called with alignment " + std::to_string(align));
  auto align_up = [align](uint64_t x) { return (x + align - 1) / align * align; };
  uint64_t ret;
  if (old_ptr != 0 && new_size < old_size) {
    ret = align_up(old_ptr);
  } else {
    if (growth_) bytes_.resize(bytes_.size() + growth_, 0);
    ret = align_up(bump_);
    if (grow_on_demand_ && (ret > bytes_.size() || new_size > bytes_.size() - ret)) bytes_.resize(ret + new_size, 0);
    if (ret > bytes_.size() || new_size > bytes_.size() - ret)
      throw_trap("host memory exhausted: " + std::to_string(new_size) + " bytes requested");
    if (old_size > new_size || old_ptr > bytes_.size() || old_size > bytes_.size() - old_ptr)
      throw_trap("realloc called with an invalid old range");
    bump_ = ret + new_size;
    if (old_size) std::memmove(bytes_.data() + ret, bytes_.data() + old_ptr, old_size);
  }
  if (log_) allocations_.push_back({old_ptr, old_size, align, new_size, ret});
  return ret;
}

}  // namespace cmhost::abi
