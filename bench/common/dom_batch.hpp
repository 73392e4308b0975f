// The DOM-mutation workload of the boundary benchmark (`cmhost:bench`,
// interface `mutations`): its `operation` type and a "create N rows" batch.
#pragma once

#include <cstdint>

#include "cmhost/abi.hpp"

namespace cmhost::bench {

// variant operation { cache-string(...), register-template(...), ... }
abi::TypeRef operation_type();

// 7 prelude operations, then 8 per row: 7 + 8 * rows in all.
abi::Val build_operations(uint32_t rows);

// The guest's coverage batch (`prepare-coverage`, bench/boundary/guest):
// every case, every attribute value kind, multi-byte and long texts,
// extreme numbers, floats whose every bit matters.
abi::Val build_coverage_operations();

}  // namespace cmhost::bench
