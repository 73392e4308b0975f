// The canonical built-ins other than resource.* (CanonicalABI.md
// "Canonical Definitions": context, backpressure, task, waitable-set,
// waitable, subtask, stream, future, thread, error-context), each made a
// core function of the instance that defines it: by the behaviour that
// binary/canon_table.def's row names, a function in builtins.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "cmhost/engine/backend.hpp"
#include "runtime/runtime.hpp"
#include "validate/validate.hpp"

namespace cmhost::runtime {

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
};

}  // namespace cmhost::runtime
