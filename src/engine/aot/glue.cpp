#include "glue.hpp"

#include <sstream>

#include "cmhost/error.hpp"

namespace cmhost::engine::aot {

namespace {

const char* c_type(char letter) {
  switch (letter) {
    case 'i': return "u32";
    case 'I': return "u64";
    case 'f': return "f32";
    case 'F': return "f64";
    case 'r': return "wasm_rt_funcref_t";
    case 'e': return "wasm_rt_externref_t";
  }
  throw Error(ErrorKind::Validate, std::string("no C type for value type `") + letter + "`");
}

// wasm2c's name for a multi-value result struct and its fields.
char multi_letter(char letter) {
  switch (letter) {
    case 'i': return 'i';
    case 'I': return 'j';
    case 'f': return 'f';
    case 'F': return 'd';
    case 'r': return 'r';
    case 'e': return 'e';
  }
  throw Error(ErrorKind::Validate, std::string("no C type for value type `") + letter + "`");
}

std::string return_type(const std::string& results) {
  if (results.empty()) return "void";
  if (results.size() == 1) return c_type(results[0]);
  std::string name = "struct wasm_multi_";
  for (char r : results) name += multi_letter(r);
  return name;
}

std::string multi_field(const std::string& results, size_t i) { return multi_letter(results[i]) + std::to_string(i); }

bool numeric(const ShapeFuncType& t) {
  for (char c : t.params + t.results)
    if (c == 'r' || c == 'e') return false;
  return true;
}

std::string to_bits(char letter, const std::string& expr) {
  switch (letter) {
    case 'f': return "cmhost_f32_bits(" + expr + ")";
    case 'F': return "cmhost_f64_bits(" + expr + ")";
    default: return "(uint64_t)" + expr;
  }
}

std::string from_bits(char letter, const std::string& expr) {
  switch (letter) {
    case 'i': return "(u32)" + expr;
    case 'f': return "cmhost_f32_from(" + expr + ")";
    case 'F': return "cmhost_f64_from(" + expr + ")";
    default: return expr;
  }
}

// "(void*, u32, f64)" for a function type called with its context first.
std::string pointer_params(const ShapeFuncType& t) {
  std::string out = "(void*";
  for (char p : t.params) out += std::string(", ") + c_type(p);
  return out + ")";
}

std::string c_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n\"\n  \"";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* table_type(char element) {
  return element == 'e' ? "wasm_rt_externref_table_t" : "wasm_rt_funcref_table_t";
}

}  // namespace

std::string module_prefix(size_t index) { return "m" + std::to_string(index); }

std::string module_glue(const ModuleShape& shape, const std::string& p) {
  std::ostringstream c;
  const std::string glue = p + "_glue";
  const std::string instance = "Z_" + p + "_instance_t";
  const std::string import_module = p + "i";
  const size_t slot_count = shape.imports.empty() ? 1 : shape.imports.size();
  c << "\n/* cmhost glue for " << p << " */\n#include \"cmhost_aot.h\"\n\n";
  c << "typedef struct " << glue << " {\n  " << instance << " inst;\n  cmhost_aot_slot slots[" << slot_count
    << "];\n} " << glue << ";\n\n";

  bool imports_functions = false;
  for (const ShapeImport& i : shape.imports) imports_functions |= i.type.kind == 'f';
  if (!shape.imports.empty()) {
    // The instance's pointer for its import module holds its own address
    // (see instantiate below), and funcrefs wasm2c makes of imported
    // functions carry that same address: either way, the glue is found
    // from the field's address.
    const std::string ctx_type = "struct Z_" + import_module + "_instance_t*";
    if (imports_functions)
      c << "#define " << p << "_SLOTS(ctx) (((" << glue << "*)((char*)(ctx) - offsetof(" << instance << ", Z_"
        << import_module << "_instance)))->slots)\n\n";
    else  // wasm2c keeps no pointer then: the accessors get the glue itself
      c << "#define " << p << "_SLOTS(ctx) (((" << glue << "*)(ctx))->slots)\n\n";
    for (size_t k = 0; k < shape.imports.size(); ++k) {
      const ShapeExtern& e = shape.imports[k].type;
      const std::string symbol = "Z_" + import_module + "Z_i" + std::to_string(k);
      switch (e.kind) {
        case 'f': {
          const ShapeFuncType& t = shape.types[e.type_index];
          const std::string ret = return_type(t.results);
          c << ret << " " << symbol << "(" << ctx_type << " ctx";
          for (size_t i = 0; i < t.params.size(); ++i) c << ", " << c_type(t.params[i]) << " p" << i;
          c << ") {\n  cmhost_aot_slot* s = &" << p << "_SLOTS(ctx)[" << k << "];\n  "
            << (ret == "void" ? "" : "return ") << "((" << ret << " (*)" << pointer_params(t)
            << ")s->code)(s->context";
          for (size_t i = 0; i < t.params.size(); ++i) c << ", p" << i;
          c << ");\n}\n";
          break;
        }
        case 'm':
          c << "wasm_rt_memory_t* " << symbol << "(" << ctx_type << " ctx) { return (wasm_rt_memory_t*)" << p
            << "_SLOTS(ctx)[" << k << "].code; }\n";
          break;
        case 't':
          c << table_type(e.value) << "* " << symbol << "(" << ctx_type << " ctx) { return (" << table_type(e.value)
            << "*)" << p << "_SLOTS(ctx)[" << k << "].code; }\n";
          break;
        case 'g':
          c << c_type(e.value) << "* " << symbol << "(" << ctx_type << " ctx) { return (" << c_type(e.value) << "*)"
            << p << "_SLOTS(ctx)[" << k << "].code; }\n";
          break;
        default: throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot link imported exception tags");
      }
    }
    c << "\n";
  }

  // Multi-value structs of types the module's own code may not use (so its
  // header may not define them), guarded as wasm2c guards its own.
  for (const ShapeFuncType& t : shape.types) {
    if (t.results.size() < 2) continue;
    const std::string name = return_type(t.results).substr(7);
    c << "#ifndef " << name << "\n#define " << name << " " << name << "\nstruct " << name << " {";
    for (size_t i = 0; i < t.results.size(); ++i) c << " " << c_type(t.results[i]) << " " << multi_field(t.results, i) << ";";
    c << " };\n#endif\n";
  }

  // Invokers and host thunks, by type index.
  for (size_t k = 0; k < shape.types.size(); ++k) {
    const ShapeFuncType& t = shape.types[k];
    if (!numeric(t)) continue;
    const std::string ret = return_type(t.results);
    c << "static void " << p << "_invoke_" << k
      << "(void* code, void* context, const uint64_t* a, uint64_t* r) {\n  (void)a, (void)r;\n  ";
    if (ret != "void") c << ret << " v = ";
    c << "((" << ret << " (*)" << pointer_params(t) << ")code)(context";
    for (size_t i = 0; i < t.params.size(); ++i) c << ", " << from_bits(t.params[i], "a[" + std::to_string(i) + "]");
    c << ");\n";
    if (t.results.size() == 1) c << "  r[0] = " << to_bits(t.results[0], "v") << ";\n";
    if (t.results.size() > 1)
      for (size_t i = 0; i < t.results.size(); ++i)
        c << "  r[" << i << "] = " << to_bits(t.results[i], "v." + multi_field(t.results, i)) << ";\n";
    c << "}\n";

    c << "static " << ret << " " << p << "_host_" << k << "(void* binding";
    for (size_t i = 0; i < t.params.size(); ++i) c << ", " << c_type(t.params[i]) << " p" << i;
    c << ") {\n  uint64_t a[" << (t.params.empty() ? 1 : t.params.size()) << "], r["
      << (t.results.empty() ? 1 : t.results.size()) << "];\n";
    for (size_t i = 0; i < t.params.size(); ++i)
      c << "  a[" << i << "] = " << to_bits(t.params[i], "p" + std::to_string(i)) << ";\n";
    c << "  cmhost_rt_call_host(binding, a, r);\n";
    if (t.results.size() == 1) c << "  return " << from_bits(t.results[0], "r[0]") << ";\n";
    if (t.results.size() > 1) {
      c << "  " << ret << " v;\n";
      for (size_t i = 0; i < t.results.size(); ++i)
        c << "  v." << multi_field(t.results, i) << " = " << from_bits(t.results[i], "r[" + std::to_string(i) + "]")
          << ";\n";
      c << "  return v;\n";
    }
    c << "}\n";
  }

  c << "\nstatic const cmhost_aot_signature " << p << "_signatures[] = {\n";
  for (size_t k = 0; k < shape.types.size(); ++k) {
    if (numeric(shape.types[k]))
      c << "  {" << p << "_invoke_" << k << ", (void*)" << p << "_host_" << k << "},\n";
    else
      c << "  {0, 0},\n";
  }
  if (shape.types.empty()) c << "  {0, 0},\n";
  c << "};\n\n";

  c << "static void " << p << "_instantiate(void* self) {\n  " << glue << "* g = self;\n  Z_" << p
    << "_instantiate(&g->inst";
  if (imports_functions)
    c << ", (struct Z_" << import_module << "_instance_t*)&g->inst.Z_" << import_module << "_instance";
  else if (!shape.imports.empty())
    c << ", (struct Z_" << import_module << "_instance_t*)g";
  c << ");\n}\n";
  c << "static void " << p << "_free(void* self) { Z_" << p << "_free(&((" << glue << "*)self)->inst); }\n";

  c << "static void* " << p << "_export(void* self, uint32_t index) {\n  " << glue
    << "* g = self;\n  (void)g;\n  switch (index) {\n";
  for (size_t k = 0; k < shape.exports.size(); ++k) {
    const std::string symbol = "Z_" + p + "Z_e" + std::to_string(k);
    if (shape.exports[k].type.kind == 'f')
      c << "    case " << k << ": return (void*)&" << symbol << ";\n";
    else if (shape.exports[k].type.kind == 'x')
      throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot link exported exception tags");
    else
      c << "    case " << k << ": return (void*)" << symbol << "(&g->inst);\n";
  }
  c << "  }\n  return 0;\n}\n\n";

  c << "const cmhost_aot_module cmhost_module_" << p << " = {\n  " << c_string(shape.serialize()) << ",\n  sizeof("
    << glue << "),\n  offsetof(" << glue << ", slots),\n  Z_" << p << "_init_module,\n  " << p << "_instantiate,\n  "
    << p << "_free,\n  " << p << "_export,\n  " << p << "_signatures,\n  " << shape.types.size() << "\n};\n";
  return c.str();
}

std::string artifact_entry(size_t module_count) {
  std::ostringstream c;
  c << "/* cmhost artifact entry */\n#include \"cmhost_aot.h\"\n\n";
  for (size_t i = 0; i < module_count; ++i)
    c << "extern const cmhost_aot_module cmhost_module_" << module_prefix(i) << ";\n";
  c << "\nstatic const cmhost_aot_module* const modules[] = {\n";
  for (size_t i = 0; i < module_count; ++i) c << "  &cmhost_module_" << module_prefix(i) << ",\n";
  if (module_count == 0) c << "  0,\n";
  c << "};\n\n__attribute__((visibility(\"default\"))) const cmhost_aot_artifact cmhost_artifact = {\n"
    << "  CMHOST_AOT_ABI, " << module_count << ", modules\n};\n";
  return c.str();
}

}  // namespace cmhost::engine::aot
