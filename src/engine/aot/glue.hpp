// The C that links translated modules to cmhost (cmhost_aot.h): appended to
// each module's translation, plus one entry file per artifact. Plain C++17.
#pragma once

#include <cstddef>
#include <string>

#include "shape.hpp"

namespace cmhost::engine::aot {

// For the module translated with `prefix` (translate.hpp): a trampoline
// per import (through the instance's import slots), an invoker and a host
// thunk per function type, and the module's `cmhost_module_<prefix>`.
std::string module_glue(const ModuleShape& shape, const std::string& prefix);

// The artifact's one exported symbol, listing `cmhost_module_<prefix>` of
// the prefixes "m0", "m1", ... in order.
std::string artifact_entry(size_t module_count);

// The prefix translate() is given for module `index` of an artifact.
std::string module_prefix(size_t index);

}  // namespace cmhost::engine::aot
