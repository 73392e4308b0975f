// Import and export names (Explainer.md "Import and Export Definitions",
// "Name Uniqueness"; Binary.md's notes on name attributes).
#include <algorithm>
#include <cctype>

#include "internal.hpp"
#include "support/text.hpp"

namespace cmhost::validate::detail {
namespace {

using Kind = binary::ParsedExternName::Kind;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string strongly_unique_key(const binary::ParsedExternName& name) {
  switch (name.kind) {
    case Kind::Label: return lower(name.label);
    case Kind::Constructor: return "[constructor]" + lower(name.resource);
    case Kind::Method:
    case Kind::Static:
      // [method]r.f and [static]r.f clash with each other; [method]l.l is l.
      if (lower(name.resource) == lower(name.label)) return lower(name.label);
      return lower(name.resource) + "." + lower(name.label);
    case Kind::Interface: {
      std::string key = lower(name.namespace_name) + ":" + lower(name.package) + "/" +
                        lower(name.interface);
      if (name.version) key += "@" + lower(*name.version);
      return key;
    }
  }
  return name.label;
}

void NameScope::check_resource_name(const abi::TypeRef& handle, const std::string& resource,
                                    const HandleNames& handles, size_t offset) const {
  auto it = resource_names_.find(handles.get(handle.get()));
  if (it == resource_names_.end())
    fail(offset, "resource used in function does not have a name in this context");
  if (it->second != resource)
    fail(offset, "function does not match expected resource name `" + it->second + "`");
}

void NameScope::add(const binary::ExternName& extern_name, const ExternDesc& desc,
                    uint64_t resource_token, const HandleNames& handles, size_t offset) {
  const std::string& name = extern_name.name;
  std::string why;
  const auto parsed = binary::parse_extern_name(name, &why);
  if (!parsed)
    fail(offset, std::string(kind_) + " name `" + name + "` is not a valid extern name: " + why);
  const std::string where = std::string(kind_) + " name `" + name + "` is not valid: ";

  bool seen[3] = {false, false, false};
  for (const auto& attribute : extern_name.attributes) {
    const int k = static_cast<int>(attribute.kind);
    if (seen[k]) fail(offset, where + "an attribute appears more than once");
    seen[k] = true;
    switch (attribute.kind) {
      case binary::NameAttributeKind::Implements: {
        if (parsed->kind != Kind::Label)
          fail(offset, "name `" + name + "` is not valid with `implements`");
        if (desc.sort != binary::Sort::Instance)
          fail(offset, "only instances can have an `implements`");
        const auto target = binary::parse_extern_name(attribute.value, &why);
        if (!target) fail(offset, "`" + attribute.value + "` is not a valid name: " + why);
        if (target->kind != Kind::Interface)
          fail(offset, "name `" + attribute.value + "` must be an interface");
        break;
      }
      case binary::NameAttributeKind::VersionSuffix:
        if (desc.sort != binary::Sort::Instance)
          fail(offset, "only instances can have an `versionsuffix`");
        if (parsed->kind != Kind::Interface || !parsed->version ||
            !support::is_canon_version(*parsed->version))
          fail(offset, where + "a `versionsuffix` needs a canonical interface version");
        if (!support::is_semver(*parsed->version + attribute.value))
          fail(offset, where + "invalid interface version: `" + *parsed->version +
                           attribute.value + "` is not a valid semver");
        break;
      case binary::NameAttributeKind::ExternalId: break;
    }
  }

  auto func = [&]() -> const FuncType& {
    if (desc.sort != binary::Sort::Func) fail(offset, where + "item is not a func");
    return *desc.func;
  };
  switch (parsed->kind) {
    case Kind::Label:
    case Kind::Interface: break;
    case Kind::Constructor: {
      const FuncType& f = func();
      if (f.async) fail(offset, where + "constructor function cannot be async");
      if (!f.result) fail(offset, where + "function should return one value");
      abi::TypeRef own = f.result;
      if (own->kind() == abi::TypeKind::Result && own->cases()[0].type)
        own = own->cases()[0].type;
      if (own->kind() != abi::TypeKind::Own)
        fail(offset, where + "function should return `(own $T)` or `(result (own $T))`");
      check_resource_name(own, parsed->resource, handles, offset);
      break;
    }
    case Kind::Method: {
      const FuncType& f = func();
      if (f.params.empty()) fail(offset, where + "function should have at least one argument");
      if (f.param_names[0] != "self")
        fail(offset, where + "function should have a first argument called `self`");
      if (f.params[0]->kind() != abi::TypeKind::Borrow)
        fail(offset, where + "function should take a first argument of `(borrow $T)`");
      check_resource_name(f.params[0], parsed->resource, handles, offset);
      break;
    }
    case Kind::Static:
      func();
      if (!all_resource_names_.count(parsed->resource))
        fail(offset, where + "static resource name is not known in this context");
      break;
  }

  const std::string key = strongly_unique_key(*parsed);
  if (auto it = keys_.find(key); it != keys_.end())
    fail(offset, std::string(kind_) + " name `" + name + "` conflicts with previous name `" +
                     it->second + "`");
  keys_.emplace(key, name);

  if (resource_token && desc.sort == binary::Sort::Type && desc.resource) {
    resource_names_.emplace(resource_token, name);
    all_resource_names_.insert(name);
  }
}

}  // namespace cmhost::validate::detail
