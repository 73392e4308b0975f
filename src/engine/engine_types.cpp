#include <string>

#include "cmhost/engine/backend.hpp"

namespace cmhost::engine {

// In the spec's notation: "[i32 i64] -> [f32]".
std::string to_string(const FuncType& t) {
  auto list = [](const std::vector<CoreType>& types) {
    std::string text = "[";
    for (size_t i = 0; i < types.size(); ++i) {
      if (i) text += ' ';
      text += to_string(types[i]);
    }
    return text + "]";
  };
  return list(t.params) + " -> " + list(t.results);
}

const char* to_string(ExternKind k) noexcept {
  switch (k) {
    case ExternKind::Func: return "func";
    case ExternKind::Table: return "table";
    case ExternKind::Memory: return "memory";
    case ExternKind::Global: return "global";
    case ExternKind::Tag: return "tag";
  }
  return "?";
}

}  // namespace cmhost::engine
