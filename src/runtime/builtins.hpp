// The canonical built-ins other than resource.* (CanonicalABI.md
// "Canonical Definitions": context, backpressure, task, waitable-set,
// waitable, subtask, stream, future, thread, error-context), each made a
// core function of the instance that defines it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "cmhost/engine.hpp"
#include "runtime/runtime.hpp"
#include "validate/validate.hpp"

namespace cmhost::runtime {

class CopyEnd;
class HandleTable;

class Builtins {
 public:
  // The core items a built-in's options and immediates name, resolved.
  struct Links {
    std::optional<engine::Extern> memory;
    std::optional<engine::Extern> realloc;
    std::optional<engine::Extern> table;  // thread.new-indirect
  };
  // Throws Link for built-ins cmhost does not implement (shared-everything
  // threads: thread.spawn-*, thread.available-parallelism).
  static engine::Extern make(Store& store, ComponentInstance& inst, const validate::step::CanonBuiltin& builtin,
                             const Links& links);

 private:
  struct Site;
  static engine::HostFunc make_func(const Site& site);
  static HandleTable& handles(const Site& site);
  static CopyEnd& copy_end(const Site& site, uint32_t index);
  static void check_may_leave(const Site& site);
  static bool* may_leave_flag(const Site& site);
  static Thread& other_thread(const Site& site, uint32_t index);
  static void store_event(const Site& site, uint64_t ptr, uint32_t code, uint32_t index, uint32_t payload,
                          std::span<uint64_t> results);
  static uint32_t copy(const Site& site, uint32_t index, uint64_t ptr, uint64_t length);
  static uint32_t cancel_copy(const Site& site, uint32_t index);
  static void drop_end(const Site& site, uint32_t index);
  static uint32_t cancel_subtask(const Site& site, uint32_t index);
  static uint32_t new_thread(const Site& site, uint32_t function_index, uint32_t argument);
};

}  // namespace cmhost::runtime
