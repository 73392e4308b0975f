// Tiers of the ahead-of-time backend (EngineConfig::aot_tier): a big
// module's optimized build takes the C compiler minutes, so it first gets
// baseline code (TinyCC, seconds) and its optimized artifact is built in a
// background process, for the loads that come once it is in the cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stamp.hpp"

namespace cmhost::engine::aot {

// The bytes of code (the code sections) of core modules, as their section
// headers say; a module too damaged to tell counts its whole size.
size_t code_bytes(const std::vector<std::span<const uint8_t>>& modules);

// Whether `settings`' tier compiler can be found.
bool tier_compiler_available(const BuildSettings& settings);

// Builds the artifact at `path` in a process of its own that outlives the
// caller, at a low priority, unless one is building it already (a lock
// beside it) or it is there. Nothing is reported: a build that fails
// leaves no artifact, and the next load starts another.
void build_in_background(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                         const BuildSettings& settings, const std::string& path);

}  // namespace cmhost::engine::aot
