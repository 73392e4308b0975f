#include "translate.hpp"

#include <wabt/apply-names.h>
#include <wabt/binary-reader-ir.h>
#include <wabt/binary-reader.h>
#include <wabt/c-writer.h>
#include <wabt/generate-names.h>
#include <wabt/ir.h>
#include <wabt/stream.h>
#include <wabt/validator.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../wabt/wabt_support.hpp"
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

// wasm2c 1.0.32 aborts the process on a name imported twice as different
// kinds (valid core wasm): refused here instead.
void check_imports(const wabt::Module& module) {
  std::map<std::pair<std::string, std::string>, wabt::ExternalKind> seen;
  for (const wabt::Import* import : module.imports) {
    const auto [it, fresh] = seen.emplace(std::make_pair(import->module_name, import->field_name), import->kind());
    if (!fresh && it->second != import->kind())
      throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot translate a module that imports `" +
                                           import->module_name + "` `" + import->field_name + "` as two kinds");
  }
}

}  // namespace

CModule translate(const uint8_t* bytes, size_t size, const std::string& prefix, const std::string& header_name) {
  wabt::Module module;
  wabt::Errors errors;
  if (!read(bytes, size, translatable(), module, errors)) {
    wabt::Module any;
    wabt::Errors why;
    if (!read(bytes, size, wb::enabled_features(), any, why))
      throw Error(ErrorKind::Validate, "invalid core module: " + wb::describe(why));
    const std::string feature = missing_feature(bytes, size);
    throw Error(ErrorKind::Validate, "the ahead-of-time backend cannot translate a module that uses " +
                                         (feature.empty() ? std::string("these features") : feature) + " (" +
                                         wb::describe(errors) + ")");
  }
  check_imports(module);
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
  return CModule{text(c_stream), text(h_stream)};
}

}  // namespace cmhost::engine::wasm2c
