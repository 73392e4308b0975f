// The value types of core WebAssembly that cross between stages: the
// canonical ABI flattens component values into them, the core engine
// interface speaks them, and the decoder maps its richer reference types
// onto them.
#pragma once

#include <cstdint>

namespace cmhost {

enum class CoreType : uint8_t { I32, I64, F32, F64, V128, FuncRef, ExternRef };
// As the text format writes it: `i32`, `funcref`, ...
const char* to_string(CoreType type) noexcept;

}  // namespace cmhost
