// Ahead-of-time artifacts: building one (translate every core module, add
// the glue, compile with the system C compiler into one shared object),
// stamping it, keeping it in a cache, and loading it back after checking it.
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

#include "cmhost/engine.hpp"
#include "cmhost_aot.h"

namespace cmhost::engine::wasm2c {

// How artifacts are built; two configurations that differ here build
// different artifacts.
struct BuildSettings {
  std::string compiler = "cc";  // found on PATH unless a path
  bool metered = false;         // EngineConfig::metering: instrument.hpp's rewrite before translation
  size_t split_bytes = size_t{4} << 20;  // translate.hpp's split_functions (tests split small modules)
};

// What an artifact must have been built with to be loaded now.
struct Stamp {
  std::string component_sha256;
  std::string cmhost_version;
  std::string codegen;   // CMHOST_AOT_CODEGEN of the build that compiled it
  std::string compiler;  // resolved path, size and modification time
  std::string compiler_version;
  std::string flags;
  size_t module_count = 0;

  std::string text() const;
};

// A Stamp::module_count that load_artifact_file does not check.
inline constexpr size_t kAnyModuleCount = static_cast<size_t>(-1);

// The stamp an artifact of `component` (bytes) built now would carry.
// Throws Usage when the compiler cannot be found.
Stamp expected_stamp(std::span<const uint8_t> component, const BuildSettings& settings, size_t module_count);

// Translates and compiles `modules` (the component's core modules, in
// order) into an artifact at `path`, written to a temporary file beside it
// and renamed into place. Throws Validate naming the module and the feature
// the translation cannot handle, Usage when the compiler fails.
void build_artifact(std::span<const uint8_t> component, const std::vector<std::span<const uint8_t>>& modules,
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

}  // namespace cmhost::engine::wasm2c
