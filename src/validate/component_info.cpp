// ComponentInfo (cmhost/types.hpp): a component's type read from its bytes,
// with what WIT printing needs beyond the types.
#include "cmhost/error.hpp"
#include "validate/validate.hpp"

namespace cmhost {

namespace {

// The value of an `implements` attribute of a name, or empty.
std::string implements_of(const binary::ExternName& name) {
  for (const auto& a : name.attributes)
    if (a.kind == binary::NameAttributeKind::Implements) return a.value;
  return "";
}

}  // namespace

ComponentInfo ComponentInfo::from_bytes(std::span<const uint8_t> bytes) {
  const auto decoded = binary::decode_component(bytes);
  validate::Plan plan = validate::validate_component(decoded, bytes);
  ComponentInfo info;
  info.type = plan.root->type;
  info.handle_names = std::move(plan.handle_names);
  // The root's import and export definitions, in binary order, are the
  // validated imports and exports in turn.
  for (const auto& d : decoded.definitions) {
    if (auto i = std::get_if<binary::Import>(&d.item)) info.import_implements.push_back(implements_of(i->name));
    else if (auto e = std::get_if<binary::Export>(&d.item)) info.export_implements.push_back(implements_of(e->name));
  }
  if (info.import_implements.size() != info.type.imports.size() ||
      info.export_implements.size() != info.type.exports.size())
    throw Error(ErrorKind::Validate, "the validated imports and exports do not match the binary's");
  return info;
}

uint64_t ComponentInfo::handle_name(const abi::Type& handle) const {
  auto it = handle_names.find(&handle);
  return it == handle_names.end() ? 0 : it->second.second;
}

}  // namespace cmhost
