// Ahead-of-time artifacts: building one (translate every core module, add
// the glue, compile with the system C compiler into one shared object:
// artifact.cpp, compiler.hpp), stamping it (stamp.hpp), keeping it in a
// cache (cache.cpp), and loading it back after checking it (load.cpp).
//
// An artifact file is the shared object followed by a stamp (what built it
// from what: the component's SHA-256, cmhost's version, the compiler and its
// flags, and the code-generation hash: a SHA-256 the build computes over
// the translator, glue and runtime support, so that an artifact another
// build of cmhost produced is never run) and a fixed trailer giving the
// stamp's length. A loaded artifact is
// never unloaded: funcrefs into its code may live as long as the process.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cmhost/engine/backend.hpp"
#include "cmhost_aot.h"
#include "stamp.hpp"

namespace cmhost::engine::aot {

// Translates and compiles `modules` (the component's core modules, in
// order) into an artifact at `path`, in a private build directory under the
// cache (workspace.hpp), then moved into place whole. Throws Validate
// naming the module and the feature the translation cannot handle, Usage
// when the compiler fails or a signal stopped the build.
void build_artifact(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
                    const BuildSettings& settings, const std::string& path);
// The same for a component whose sha256_hex is `component_sha256`.
void build_artifact(const std::string& component_sha256, const std::vector<std::span<const uint8_t>>& modules,
                    const BuildSettings& settings, const std::string& path);

// A loaded artifact's table of modules; valid for the rest of the process.
struct LoadedArtifact {
  const cmhost_aot_artifact* table = nullptr;
};

// Loads the artifact at `path` after checking that it is a regular file of
// ours that nobody else can write, and that its stamp is `expected`. Throws
// Usage saying what differs.
LoadedArtifact load_artifact_file(const std::string& path, const Stamp& expected);

// The cache directory (EngineConfig::cache_dir, else $XDG_CACHE_HOME/cmhost,
// else ~/.cache/cmhost), created 0700 if missing. Throws Usage when it is
// not a directory of ours closed to others.
std::string cache_directory(const std::string& configured);

// The cache file for an artifact with that stamp: another code-generation
// hash, compiler or flags name another file.
std::string cache_path(const std::string& directory, const Stamp& stamp);

}  // namespace cmhost::engine::aot
