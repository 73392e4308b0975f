// A store's caps on the memories and tables its instances define
// (engine::MemoryLimits), checked the same way by every backend as an
// instance is made and as a memory or table grows, by the guest or the
// host. C++17: wabt_backend.cpp includes it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "cmhost/error.hpp"

namespace cmhost::engine {

struct StoreCaps {
  std::optional<uint64_t> memory_bytes;        // each memory
  std::optional<uint64_t> total_memory_bytes;  // the store's memories together
  std::optional<uint64_t> table_elements;      // the store's tables together
  bool any() const { return memory_bytes || total_memory_bytes || table_elements; }
};

// Traps naming the limit when memory `index`, starting at `initial_bytes`,
// does not fit beside the `in_use` bytes of the store's memories.
inline void check_memory_start(const StoreCaps& caps, size_t index, uint64_t initial_bytes, uint64_t in_use) {
  if (caps.memory_bytes && initial_bytes > *caps.memory_bytes)
    throw Error(ErrorKind::Trap, "memory limit: memory " + std::to_string(index) + " starts at " +
                                     std::to_string(initial_bytes) + " bytes, above the store's limit of " +
                                     std::to_string(*caps.memory_bytes) + " bytes per memory");
  if (caps.total_memory_bytes && initial_bytes > *caps.total_memory_bytes - std::min(in_use, *caps.total_memory_bytes))
    throw Error(ErrorKind::Trap, "memory limit: memory " + std::to_string(index) + " of " +
                                     std::to_string(initial_bytes) + " bytes would take the store's memories past its limit of " +
                                     std::to_string(*caps.total_memory_bytes) + " bytes in total (" +
                                     std::to_string(in_use) + " in use)");
}

// Traps naming the limit when table `index`, starting with `initial`
// elements, does not fit beside the `in_use` elements of the store's tables.
inline void check_table_start(const StoreCaps& caps, size_t index, uint64_t initial, uint64_t in_use) {
  if (caps.table_elements && initial > *caps.table_elements - std::min(in_use, *caps.table_elements))
    throw Error(ErrorKind::Trap, "table limit: table " + std::to_string(index) + " of " + std::to_string(initial) +
                                     " elements would take the store's tables past its limit of " +
                                     std::to_string(*caps.table_elements) + " elements in total (" +
                                     std::to_string(in_use) + " in use)");
}

// The most bytes a memory made now may grow to (nullopt: its own maximum):
// its own cap, and what the total leaves beside the `in_use` bytes.
inline std::optional<uint64_t> memory_room(const StoreCaps& caps, uint64_t in_use) {
  std::optional<uint64_t> room = caps.memory_bytes;
  if (caps.total_memory_bytes) {
    const uint64_t left = *caps.total_memory_bytes - std::min(in_use, *caps.total_memory_bytes);
    room = room ? std::min(*room, left) : left;
  }
  return room;
}

// Whether a memory of `bytes` may grow by `more`, beside the store's
// memories' `in_use` bytes (this one's included).
inline bool memory_growth_allowed(const StoreCaps& caps, uint64_t bytes, uint64_t more, uint64_t in_use) {
  if (caps.memory_bytes && (more > *caps.memory_bytes || bytes > *caps.memory_bytes - more)) return false;
  return !caps.total_memory_bytes || (more <= *caps.total_memory_bytes && in_use <= *caps.total_memory_bytes - more);
}

// Whether a table may grow by `more` elements beside the store's tables'
// `in_use` elements.
inline bool table_growth_allowed(const StoreCaps& caps, uint64_t more, uint64_t in_use) {
  return !caps.table_elements || (more <= *caps.table_elements && in_use <= *caps.table_elements - more);
}

}  // namespace cmhost::engine
