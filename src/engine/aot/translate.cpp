#include "translate.hpp"

#include <wabt/apply-names.h>
#include <wabt/binary-reader-ir.h>
#include <wabt/binary-reader.h>
#include <wabt/c-writer.h>
#include <wabt/cast.h>
#include <wabt/generate-names.h>
#include <wabt/ir.h>
#include <wabt/stream.h>
#include <wabt/validator.h>

#include <functional>
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <string>
#include <utility>
#include <vector>

#include "../metering/instrument.hpp"
#include "../interp/wabt_backend.hpp"
#include "../wabt_support.hpp"
#include "glue.hpp"
#include "cmhost/error.hpp"

namespace cmhost::engine::aot {

namespace {

namespace wb = ::cmhost::engine::wabt_backend;

// What wasm2c 1.0.32 translates: the features cmhost accepts, less those
// its C writer cannot handle (it aborts on SIMD).
wabt::Features translatable() {
  wabt::Features features = wb::enabled_features();
  features.disable_simd();
  features.disable_memory64();
  features.disable_tail_call();
  features.disable_threads();
  return features;
}

// Reads and validates the module with `features`; false with `errors` set
// when it does not read or validate.
bool read(const uint8_t* bytes, size_t size, const wabt::Features& features, wabt::Module& module,
          wabt::Errors& errors) {
  const wabt::ReadBinaryOptions options(features, nullptr, /*read_debug_names=*/false,
                                        /*stop_on_first_error=*/true, /*fail_on_custom_section_error=*/false);
  if (wabt::Failed(wabt::ReadBinaryIr("module", bytes, size, options, &errors, &module))) return false;
  return wabt::Succeeded(wabt::ValidateModule(&module, &errors, wabt::ValidateOptions(features)));
}

// The translation's feature the module needs, found by enabling the missing
// ones one at a time; empty when none explains the failure.
std::string missing_feature(const uint8_t* bytes, size_t size) {
  const std::pair<const char*, std::function<void(wabt::Features&)>> candidates[] = {
      {"SIMD", [](wabt::Features& f) { f.enable_simd(); }},
      {"memory64", [](wabt::Features& f) { f.enable_memory64(); }},
      {"tail calls", [](wabt::Features& f) { f.enable_tail_call(); }},
      {"threads", [](wabt::Features& f) { f.enable_threads(); }},
  };
  for (const auto& [name, enable] : candidates) {
    wabt::Features features = translatable();
    enable(features);
    wabt::Module module;
    wabt::Errors errors;
    if (read(bytes, size, features, module, errors)) return name;
  }
  return "";
}

char letter(wabt::Type type) {
  switch (type) {
    case wabt::Type::I32: return 'i';
    case wabt::Type::I64: return 'I';
    case wabt::Type::F32: return 'f';
    case wabt::Type::F64: return 'F';
    case wabt::Type::FuncRef: return 'r';
    case wabt::Type::ExternRef: return 'e';
    default: break;
  }
  throw Error(ErrorKind::Validate, std::string("the ahead-of-time backend cannot translate values of type ") +
                                       type.GetName());
}

std::string letters(const wabt::TypeVector& types) {
  std::string out;
  for (wabt::Type type : types) out += letter(type);
  return out;
}

ShapeExtern limits_of(char kind, const wabt::Limits& limits) {
  ShapeExtern e;
  e.kind = kind;
  e.min = limits.initial;
  if (limits.has_max) e.max = limits.max;
  e.shared = limits.is_shared;
  return e;
}

ShapeExtern shape_of(const wabt::Module& module, const wabt::Func& func) {
  ShapeExtern e;
  e.kind = 'f';
  e.type_index = module.GetFuncTypeIndex(func.decl);
  return e;
}

ShapeExtern shape_of(const wabt::Table& table) {
  ShapeExtern e = limits_of('t', table.elem_limits);
  e.value = letter(table.elem_type);
  return e;
}

ShapeExtern shape_of(const wabt::Global& global) {
  ShapeExtern e;
  e.kind = 'g';
  e.value = letter(global.type);
  e.mutable_global = global.mutable_;
  return e;
}

// The module's shape under its own names, then every import and export
// renamed (see translate.hpp).
ModuleShape reshape(wabt::Module& module, const std::string& prefix) {
  ModuleShape shape;
  for (const wabt::TypeEntry* entry : module.types) {
    const auto* func_type = wabt::dyn_cast<wabt::FuncType>(entry);
    if (!func_type) throw Error(ErrorKind::Validate, "the ahead-of-time backend translates function types only");
    shape.types.push_back({letters(func_type->sig.param_types), letters(func_type->sig.result_types)});
  }
  size_t k = 0;
  for (wabt::Import* import : module.imports) {
    ShapeImport i{import->module_name, import->field_name, {}};
    switch (import->kind()) {
      case wabt::ExternalKind::Func:
        i.type = shape_of(module, wabt::cast<wabt::FuncImport>(import)->func);
        break;
      case wabt::ExternalKind::Table: i.type = shape_of(wabt::cast<wabt::TableImport>(import)->table); break;
      case wabt::ExternalKind::Memory:
        i.type = limits_of('m', wabt::cast<wabt::MemoryImport>(import)->memory.page_limits);
        break;
      case wabt::ExternalKind::Global: i.type = shape_of(wabt::cast<wabt::GlobalImport>(import)->global); break;
      case wabt::ExternalKind::Tag:
        throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot link imported exception tags");
    }
    shape.imports.push_back(std::move(i));
    import->module_name = prefix + "i";
    import->field_name = "i" + std::to_string(k++);
  }
  k = 0;
  for (wabt::Export* export_ : module.exports) {
    ShapeExport e{export_->name, {}};
    switch (export_->kind) {
      case wabt::ExternalKind::Func: e.type = shape_of(module, *module.GetFunc(export_->var)); break;
      case wabt::ExternalKind::Table: e.type = shape_of(*module.GetTable(export_->var)); break;
      case wabt::ExternalKind::Memory: e.type = limits_of('m', module.GetMemory(export_->var)->page_limits); break;
      case wabt::ExternalKind::Global: e.type = shape_of(*module.GetGlobal(export_->var)); break;
      case wabt::ExternalKind::Tag:
        throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot link exported exception tags");
    }
    shape.exports.push_back(std::move(e));
    export_->name = "e" + std::to_string(k++);
  }
  for (size_t m = module.num_memory_imports; m < module.memories.size(); ++m)
    shape.definitions.push_back(limits_of('m', module.memories[m]->page_limits));
  for (size_t t = module.num_table_imports; t < module.tables.size(); ++t)
    shape.definitions.push_back(shape_of(*module.tables[t]));
  return shape;
}

// wasm2c counts calls in a process-wide depth counter; cmhost's prologue
// compares the native stack with the limit of the stack running it, which
// fibers and threads each have their own of.
const char kDepthCounting[] =
    "#if WASM_RT_USE_STACK_DEPTH_COUNT\n"
    "#define FUNC_PROLOGUE                                            \\\n"
    "  if (++wasm_rt_call_stack_depth > WASM_RT_MAX_CALL_STACK_DEPTH) \\\n"
    "    TRAP(EXHAUSTION);\n"
    "\n"
    "#define FUNC_EPILOGUE --wasm_rt_call_stack_depth\n"
    "#else\n"
    "#define FUNC_PROLOGUE\n"
    "\n"
    "#define FUNC_EPILOGUE\n"
    "#endif\n";
const char kStackLimit[] =
    "#include \"cmhost_aot.h\"\n"
    "#define FUNC_PROLOGUE \\\n"
    "  if (UNLIKELY((uintptr_t)__builtin_frame_address(0) < CMHOST_STACK_LIMIT)) TRAP(EXHAUSTION);\n"
    "#define FUNC_EPILOGUE\n";

void check_stack_by_limit(std::string& source) {
  const size_t at = source.find(kDepthCounting);
  if (at == std::string::npos)
    throw Error(ErrorKind::Validate, "wasm2c wrote function prologues this version of cmhost does not know");
  source.replace(at, sizeof kDepthCounting - 1, kStackLimit);
}

struct Line {
  size_t begin, end;  // end: past the newline
};


std::vector<Line> lines_of(const std::string& text) {
  std::vector<Line> lines;
  size_t at = 0;
  while (at < text.size()) {
    const size_t newline = text.find('\n', at);
    const size_t end = newline == std::string::npos ? text.size() : newline + 1;
    lines.push_back({at, end});
    at = end;
  }
  return lines;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// The function whose declaration (`static T w2c_f(...);`) or definition
// (`static T w2c_f(...) {`, its parameters perhaps over several lines) a
// line of wasm2c's C begins; empty otherwise.
std::string function_of(std::string_view line) {
  if (!starts_with(line, "static ")) return "";
  const size_t open = line.find('(');
  if (open == std::string_view::npos) return "";
  const size_t name = line.rfind(' ', open);
  if (name == std::string_view::npos) return "";
  const std::string_view id = line.substr(name + 1, open - name - 1);
  if (!starts_with(id, "w2c_")) return "";
  return std::string(id);
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// A `LOAD_DATA(target, offset, segment, size);` line of init_memories.
struct LoadLine {
  std::string target, offset, segment, size;
};

std::optional<LoadLine> load_line(std::string_view line) {
  constexpr std::string_view head = "  LOAD_DATA(", tail = ");";
  if (!starts_with(line, head) || !ends_with(line, tail)) return std::nullopt;
  line = line.substr(head.size(), line.size() - head.size() - tail.size());
  std::vector<std::string> parts;
  size_t at = 0;
  for (size_t comma; (comma = line.find(", ", at)) != std::string_view::npos; at = comma + 2)
    parts.emplace_back(line.substr(at, comma - at));
  parts.emplace_back(line.substr(at));
  if (parts.size() != 4) return std::nullopt;
  return LoadLine{parts[0], parts[1], parts[2], parts[3]};
}

// A decimal literal as wasm2c writes it (`100u`, `5`), or nullopt.
std::optional<uint64_t> literal(std::string_view text) {
  if (ends_with(text, "u")) text.remove_suffix(1);
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

}  // namespace

void use_memory_images(std::string& source) {
  constexpr std::string_view opening = "\nstatic void init_memories(";
  const size_t begin = source.find(opening);
  if (begin == std::string::npos) return;
  const size_t body = source.find("{\n", begin);
  const size_t end = source.find("\n}\n", begin);
  if (body == std::string::npos || end == std::string::npos || body > end) return;
  const std::string_view header(source.data() + begin + 1, body + 2 - begin - 1);

  // Each defined memory (allocated here, at its initial size) and the
  // segments loaded into it; anything this does not recognise leaves the
  // function as wasm2c wrote it.
  struct Memory {
    std::string allocation;
    uint64_t bytes = 0;
    std::vector<std::string> loads;
    bool imaged = true;
  };
  std::map<std::string, Memory> memories;
  std::vector<std::string> order;
  std::vector<std::string> others;  // loads into imported memories, in order
  const std::string_view lines(source.data() + body + 2, end + 1 - body - 2);
  size_t at = 0;
  while (at < lines.size()) {
    const size_t newline = lines.find('\n', at);
    const std::string_view line = lines.substr(at, newline - at);
    at = newline + 1;
    constexpr std::string_view allocate = "  wasm_rt_allocate_memory(&instance->";
    if (starts_with(line, allocate)) {
      const std::string_view rest = line.substr(allocate.size());
      const size_t comma = rest.find(", ");
      const size_t second = comma == std::string_view::npos ? comma : rest.find(", ", comma + 2);
      if (second == std::string_view::npos) return;
      const auto pages = literal(rest.substr(comma + 2, second - comma - 2));
      if (!pages) return;
      const std::string name(rest.substr(0, comma));
      // What LOAD_DATA checks against: wasm2c's size, which stops at 4 GiB - 1.
      const uint64_t bytes = std::min<uint64_t>(*pages * 65536, UINT32_MAX);
      memories[name] = Memory{std::string(line), bytes, {}, true};
      order.push_back(name);
      continue;
    }
    const std::optional<LoadLine> load = load_line(line);
    if (!load) return;
    constexpr std::string_view own = "instance->";
    auto memory = starts_with(load->target, own) ? memories.find(load->target.substr(own.size())) : memories.end();
    if (memory == memories.end()) {
      others.emplace_back(line);
      continue;
    }
    const auto offset = literal(load->offset), size = literal(load->size);
    // A segment at a global's offset, or one that would trap, is applied
    // as before, at instantiation: the memory gets no image.
    if (!offset || !size || *offset + *size > memory->second.bytes) memory->second.imaged = false;
    memory->second.loads.push_back("  LOAD_DATA((*memory), " + load->offset + ", " + load->segment + ", " + load->size + ");");
    if (!memory->second.imaged) return;
  }

  std::string loaders, function(header);
  for (const std::string& name : order) {
    const Memory& memory = memories[name];
    if (memory.loads.empty()) {
      function += memory.allocation + "\n";
      continue;
    }
    loaders += "static void load_image_" + name + "(wasm_rt_memory_t* memory) {\n";
    for (const std::string& load : memory.loads) loaders += load + "\n";
    loaders += "}\nstatic cmhost_rt_image image_" + name + ";\n";
    // wasm_rt_allocate_memory(&instance->NAME, initial, max); -> the imaged allocation
    const size_t arguments = memory.allocation.find('(');
    function += "  cmhost_rt_allocate_imaged_memory" +
                memory.allocation.substr(arguments, memory.allocation.size() - arguments - 2) + ", &image_" + name +
                ", load_image_" + name + ");\n";
  }
  for (const std::string& load : others) function += load + "\n";
  source.replace(begin + 1, end + 3 - begin - 1, loaders + function + "}\n");
}

std::vector<std::string> split_functions(std::string& source, const std::string& prefix, size_t parts,
                                         size_t split_bytes) {
  if (parts < 2 || split_bytes == 0 || source.size() < 2 * split_bytes) return {};
  parts = std::min(parts, (source.size() + split_bytes - 1) / split_bytes);
  // Exception tags live in statics of the unit: keep such modules whole.
  if (source.find("wasm_rt_register_tag") != std::string::npos) return {};
  const std::vector<Line> lines = lines_of(source);
  const auto text = [&](const Line& l) { return std::string_view(source).substr(l.begin, l.end - l.begin); };

  // The forward declarations: one block of lines right after init_func_types.
  size_t i = 0;
  while (i < lines.size() && !starts_with(text(lines[i]), "static void init_func_types(void) {")) ++i;
  while (i < lines.size() && text(lines[i]) != "}\n") ++i;
  if (i == lines.size()) return {};
  const size_t decls_begin = ++i;
  std::vector<std::string> names;
  for (; i < lines.size(); ++i) {
    if (text(lines[i]) == "\n") continue;
    std::string name = function_of(text(lines[i]));
    if (name.empty() || !ends_with(text(lines[i]), ");\n")) break;
    names.push_back(std::move(name));
  }
  const size_t decls_end = i;
  if (names.empty()) return {};
  const std::set<std::string> declared(names.begin(), names.end());

  // The definitions: contiguous, each from its `static ... {` line to `}`.
  struct Definition {
    size_t first, last;  // lines
    bool movable;        // uses nothing of the unit but declarations
  };
  std::vector<Definition> definitions;
  for (; i < lines.size(); ++i) {
    const std::string name = function_of(text(lines[i]));
    if (name.empty() || !declared.count(name) || ends_with(text(lines[i]), ");\n")) {
      if (!definitions.empty() && text(lines[i]) != "\n") break;
      continue;
    }
    size_t last = i;
    while (last < lines.size() && text(lines[last]) != "}\n") ++last;
    if (last == lines.size()) return {};
    const std::string_view body(source.data() + lines[i].begin, lines[last].end - lines[i].begin);
    const bool movable = body.find("data_segment_data_") == std::string_view::npos &&
                         body.find("elem_segment_exprs_") == std::string_view::npos;
    definitions.push_back({i, last, movable});
    i = last;
  }
  if (definitions.size() < parts) return {};

  // Functions become hidden symbols of this module, as does func_types.
  std::string renames = "#define CMHOST_SHARED __attribute__((visibility(\"hidden\")))\n#define func_types " +
                        prefix + "_func_types\n";
  for (const std::string& name : names) renames += "#define " + name + " " + prefix + "_" + name + "\n";
  const auto shared = [](std::string_view line) { return "CMHOST_SHARED " + std::string(line.substr(7)); };
  std::string head;  // everything before the declarations, func_types shared
  for (size_t l = 0; l < decls_begin; ++l) head += text(lines[l]);
  const size_t func_types = head.find("\nstatic u32 func_types[");
  if (func_types == std::string::npos) return {};
  const size_t func_types_end = head.find('\n', func_types + 1);
  const std::string func_types_decl = head.substr(func_types + 8, func_types_end - func_types - 8);  // "u32 func_types[N];"
  std::string declarations;
  for (size_t l = decls_begin; l < decls_end; ++l)
    declarations += text(lines[l]) == "\n" ? std::string("\n") : shared(text(lines[l]));

  size_t definition_bytes = 0;
  for (const Definition& d : definitions) definition_bytes += lines[d.last].end - lines[d.first].begin;
  const size_t share = definition_bytes / parts + 1;
  // The last definitions go to the further units, a share each; the first
  // unit keeps the rest (and the initialisation code besides).
  constexpr size_t kStays = static_cast<size_t>(-1);
  std::vector<size_t> unit_of(definitions.size(), kStays);
  size_t unit = 0, filled = 0;
  for (size_t d = definitions.size(); d-- > 0 && unit + 1 < parts;) {
    if (!definitions[d].movable) continue;
    unit_of[d] = unit;
    filled += lines[definitions[d].last].end - lines[definitions[d].first].begin;
    if (filled >= share) {
      ++unit;
      filled = 0;
    }
  }
  const auto definition_text = [&](const Definition& d) {
    return shared(text(lines[d.first])) +
           source.substr(lines[d.first].end, lines[d.last].end - lines[d.first].end);
  };
  std::vector<std::string> bodies(parts - 1);
  std::string rest;
  size_t next = 0;
  for (size_t l = decls_end; l < lines.size(); ++l) {
    if (next < definitions.size() && l == definitions[next].first) {
      const Definition& d = definitions[next];
      if (unit_of[next] == kStays)
        rest += definition_text(d);
      else
        bodies[unit_of[next]] += definition_text(d) + "\n";
      l = d.last;
      ++next;
      continue;
    }
    rest += text(lines[l]);
  }

  // Renames go after the includes (headers keep their names) and before the
  // first use of func_types; func_types is defined by the first unit.
  const std::string before = head.substr(0, func_types + 1);
  const std::string after = head.substr(func_types_end);
  std::vector<std::string> more;
  for (const std::string& body : bodies) {
    if (body.empty()) continue;
    more.push_back(before + renames + "extern CMHOST_SHARED " + func_types_decl + after + declarations + "\n" + body);
  }
  source = before + renames + "CMHOST_SHARED " + func_types_decl + after + declarations + rest;
  return more;
}

CModule translate(const uint8_t* original, size_t original_size, const std::string& prefix,
                  const std::string& header_name, bool metered, size_t max_parts, size_t split_bytes) {
  std::vector<uint8_t> metered_copy;
  const uint8_t* bytes = original;
  size_t size = original_size;
  if (metered) {
    metered_copy = wb::instrument(original, original_size, wb::enabled_features(), {/*meter=*/true, false}).bytes;
    bytes = metered_copy.data();
    size = metered_copy.size();
  }
  wabt::Module module;
  wabt::Errors errors;
  if (!read(bytes, size, translatable(), module, errors)) {
    wabt::Module any;
    wabt::Errors why;
    if (!read(bytes, size, wb::enabled_features(), any, why)) {
      // Malformed or invalid for any engine: said as the interpreter says it.
      (void)wb::compile(original, original_size, false);
      throw Error(ErrorKind::Validate, "invalid core module: " + wb::describe(why));
    }
    const std::string feature = missing_feature(bytes, size);
    throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot translate a module that uses " +
                                         (feature.empty() ? std::string("these features") : feature) + " (" +
                                         wb::describe(errors) + ")");
  }
  ModuleShape shape = reshape(module, prefix);
  if (wabt::Failed(wabt::GenerateNames(&module)) || wabt::Failed(wabt::ApplyNames(&module)))
    throw Error(ErrorKind::Validate, "cannot name the module's items for C");
  wabt::MemoryStream c_stream, h_stream;
  wabt::WriteCOptions options;
  options.module_name = prefix;
  if (wabt::Failed(wabt::WriteC(&c_stream, &h_stream, header_name.c_str(), &module, options)))
    throw Error(ErrorKind::Validate, "wasm2c could not write the module as C");
  const auto text = [](wabt::MemoryStream& stream) {
    const auto& data = stream.output_buffer().data;
    return std::string(data.begin(), data.end());
  };
  std::string source = text(c_stream);
  check_stack_by_limit(source);
  use_memory_images(source);
  std::vector<std::string> more = split_functions(source, prefix, max_parts, split_bytes);
  source += module_glue(shape, prefix);
  return CModule{std::move(source), text(h_stream), std::move(shape), std::move(more)};
}

}  // namespace cmhost::engine::aot
