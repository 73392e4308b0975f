// Small text helpers shared by every stage's messages and name checks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cmhost::support {

// `0x` and at least two lowercase hex digits: 0x0f, 0x1a2b.
std::string hex(uint64_t value);

// Semantic Versioning 2.0: MAJOR.MINOR.PATCH(-PRERELEASE)?(+BUILD)?
bool is_semver(std::string_view text);

// The spec's canonversion: 1, 0.2, 0.0.3, 0.0.0 (the part of a version
// that identifies an interface; Explainer.md "Import and Export Definitions").
bool is_canon_version(std::string_view text);

}  // namespace cmhost::support
