// What a translated module looks like from outside: its function types,
// imports and exports (under their own names, which the translation replaces
// with short generated ones), and the memories and tables it defines. The
// translation records it; an artifact carries it as text, so loading needs
// neither the module's bytes nor wabt. Plain C++17: translate.cpp and
// glue.cpp include it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cmhost::engine::aot {

// Value types as letters: i32 'i', i64 'I', f32 'f', f64 'F', funcref 'r',
// externref 'e' (v128 never: the translation refuses SIMD).
struct ShapeFuncType {
  std::string params;
  std::string results;
};

struct ShapeExtern {
  char kind = 'f';               // 'f' function, 't' table, 'm' memory, 'g' global, 'x' tag
  uint32_t type_index = 0;       // functions and tags
  uint64_t min = 0;              // tables and memories
  std::optional<uint64_t> max = std::nullopt;
  bool shared = false;           // memories
  char value = 'i';              // a global's type, a table's element type
  bool mutable_global = false;
};

struct ShapeImport {
  std::string module;
  std::string name;
  ShapeExtern type;
};

struct ShapeExport {
  std::string name;
  ShapeExtern type;
};

struct ModuleShape {
  std::vector<ShapeFuncType> types;     // the type section's order
  std::vector<ShapeImport> imports;     // translated as module "<prefix>i", names "i0", "i1", ...
  std::vector<ShapeExport> exports;     // translated as "e0", "e1", ...
  std::vector<ShapeExtern> definitions; // memories and tables the module defines

  std::string serialize() const;
  // Throws cmhost::Error (Usage) on text serialize() did not write.
  static ModuleShape parse(std::string_view text);
};

}  // namespace cmhost::engine::aot
