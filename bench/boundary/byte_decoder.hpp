// The hand-written decoder of the byte protocol (guest/PROTOCOL.md): frames
// of texts and ops, decoded straight into the sink. Throws on malformed
// input.
#pragma once

#include <cstdint>
#include <span>

#include "sink.hpp"

namespace cmhost::bench::boundary {

// Returns the number of operations delivered.
uint64_t decode_bytes(std::span<const uint8_t> bytes, Sink& sink);

}  // namespace cmhost::bench::boundary
