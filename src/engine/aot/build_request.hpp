// What a background build is asked to do (tiers.hpp): the artifact's path,
// the component's hash, the build settings and the core modules' bytes, as
// one message the library writes to the builder's standard input and the
// builder (builder_main.cpp) reads back. The message carries the
// code-generation hash of the library that wrote it, so that a builder of
// another cmhost build refuses it rather than writing an artifact the
// library would refuse.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "stamp.hpp"

namespace cmhost::engine::aot {

struct BuildRequest {
  std::string path;  // the artifact to write
  std::string component_sha256;
  BuildSettings settings;
  std::vector<std::vector<uint8_t>> modules;  // filled when read back
};

// The message for a build of `modules`; throws Usage when a path or
// compiler name holds a line break (the message is line based).
std::string encode_build_request(const std::string& path, const std::string& component_sha256,
                                 const BuildSettings& settings, const std::vector<std::span<const uint8_t>>& modules);

// The request in `message`; throws Usage saying what is wrong with it,
// or that another build of cmhost wrote it.
BuildRequest decode_build_request(const std::string& message);

}  // namespace cmhost::engine::aot
