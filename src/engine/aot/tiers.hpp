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

// The program that builds artifacts in the background (cmhost-aot-build):
// `configured` (EngineConfig::aot_builder) when set, else
// $CMHOST_AOT_BUILDER, else beside the running executable or in its
// ../libexec/cmhost/ (where `cmake --install` puts it); empty when none is
// there to run.
std::string find_builder(const std::string& configured);

// Builds the artifact at `path` in a process of its own that outlives the
// caller, at a low priority, unless one is building it already (a lock
// beside it) or it is there. The process is `builder`, started afresh
// (posix_spawn), never a fork of the caller that goes on running its code:
// the caller may have threads, whose locks a forked child would inherit
// held. Nothing is reported: a build that fails leaves no artifact, and
// the next load starts another.
void build_in_background(const std::string& builder, const std::string& component_sha256,
                         const std::vector<std::span<const uint8_t>>& modules, const BuildSettings& settings,
                         const std::string& path);

// The builder's side (builder_main.cpp): reads the request on standard
// input, leaves its parent at once (detached, in a session of its own, at
// a low priority) and builds, unless the artifact is there or another
// process holds `<path>.building`. Returns the exit status for the parent.
int run_background_build();

}  // namespace cmhost::engine::aot
