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
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../wabt/fuel.hpp"
#include "../wabt/wabt_backend.hpp"
#include "../wabt/wabt_support.hpp"
#include "glue.hpp"
#include "cmhost/error.hpp"

namespace cmhost::engine::wasm2c {

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
    "  if (UNLIKELY((uintptr_t)__builtin_frame_address(0) < cmhost_rt_stack_limit)) TRAP(EXHAUSTION);\n"
    "#define FUNC_EPILOGUE\n";

void check_stack_by_limit(std::string& source) {
  const size_t at = source.find(kDepthCounting);
  if (at == std::string::npos)
    throw Error(ErrorKind::Validate, "wasm2c wrote function prologues this version of cmhost does not know");
  source.replace(at, sizeof kDepthCounting - 1, kStackLimit);
}

}  // namespace

CModule translate(const uint8_t* original, size_t original_size, const std::string& prefix,
                  const std::string& header_name, bool metered) {
  std::vector<uint8_t> metered_copy;
  const uint8_t* bytes = original;
  size_t size = original_size;
  if (metered) {
    metered_copy = wb::add_fuel_metering(original, original_size, wb::enabled_features());
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
      (void)wb::compile(original, original_size, false, {});
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
  source += module_glue(shape, prefix);
  return CModule{std::move(source), text(h_stream), std::move(shape)};
}

}  // namespace cmhost::engine::wasm2c
