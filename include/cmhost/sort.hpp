// The sorts of the Component Model's index spaces, component and core, in
// one enum: what an import, export or alias is (a function, an instance, a
// type, a core memory...).
#pragma once

#include <cstdint>

namespace cmhost {

enum class Sort : uint8_t {
  CoreFunc, CoreTable, CoreMemory, CoreGlobal, CoreTag, CoreType, CoreModule, CoreInstance,
  Func, Value, Type, Component, Instance,
};
// As the text format writes it: `func`, `core memory`, ...
const char* to_string(Sort sort) noexcept;
inline bool is_core(Sort sort) { return sort <= Sort::CoreInstance; }

}  // namespace cmhost
