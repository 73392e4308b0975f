// An artifact's stamp: what built it (component, cmhost, code generation,
// compiler, flags), appended to the shared object as text behind a length
// and a magic number, and checked field by field before the artifact is
// loaded, so that a stale or foreign artifact is refused with the reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cmhost::engine::aot {

// How artifacts are built; two configurations that differ here build
// different artifacts.
struct BuildSettings {
  std::string compiler = "cc";  // found on PATH unless a path
  // The baseline tier: unoptimised code from TinyCC, in seconds where the
  // C compiler's -O2 takes minutes (EngineConfig::aot_tier).
  bool baseline = false;
  std::string baseline_compiler = "tcc";
  bool metered = false;         // EngineConfig::metering: instrument.hpp's rewrite before translation
  size_t split_bytes = size_t{4} << 20;  // translate.hpp's split_functions (tests split small modules)
  std::string cache_dir;  // EngineConfig::cache_dir: builds work in its `building/` (workspace.hpp)
};

// The compiler the settings' tier builds with.
inline const std::string& tier_compiler(const BuildSettings& settings) {
  return settings.baseline ? settings.baseline_compiler : settings.compiler;
}

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

// A Stamp::module_count that check_stamp does not check.
inline constexpr size_t kAnyModuleCount = static_cast<size_t>(-1);

// OpenSSL's SHA-256 of `bytes`, in hex.
std::string sha256_hex(std::span<const uint8_t> bytes);

// The stamp an artifact of `component` (bytes) built now would carry.
// Throws Usage when the compiler cannot be found.
Stamp expected_stamp(std::span<const uint8_t> component, const BuildSettings& settings, size_t module_count);
// The same for a component whose sha256_hex is `component_sha256`.
Stamp expected_stamp(const std::string& component_sha256, const BuildSettings& settings, size_t module_count);

// Appends `stamp` to the file at `path`: false when it cannot.
bool append_stamp(const std::string& path, const Stamp& stamp);

// The stamp's text at the end of the open file `fd` of `size` bytes
// (`path` names it in errors); throws Usage when there is none.
std::string read_stamp(int fd, int64_t size, const std::string& path);

// Whether the artifact at `path` holds baseline code (BuildSettings::
// baseline), as its stamp says; false when it has no stamp to say so.
bool artifact_is_baseline(const std::string& path);

// One field of a stamp's text, empty when it has none.
std::string stamp_field(const std::string& text, const std::string& name);

// Throws Usage saying which field of the stamp `text` differs from
// `expected`, and how.
void check_stamp(const std::string& text, const Stamp& expected, const std::string& path);

}  // namespace cmhost::engine::aot
