#include "cmhost/core_type.hpp"

namespace cmhost {

const char* to_string(CoreType type) noexcept {
  switch (type) {
    case CoreType::I32: return "i32";
    case CoreType::I64: return "i64";
    case CoreType::F32: return "f32";
    case CoreType::F64: return "f64";
    case CoreType::V128: return "v128";
    case CoreType::FuncRef: return "funcref";
    case CoreType::ExternRef: return "externref";
  }
  return "?";
}

}  // namespace cmhost
