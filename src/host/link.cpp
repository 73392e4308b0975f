#include "host/link.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "cmhost/names.hpp"
#include "host/type_name.hpp"
#include "validate/validate.hpp"

namespace cmhost::host {

namespace {

// What a definition supplies, as the validator types it: the one link check
// compares these with the component's imports (validate::instantiation_mismatch).
validate::ExternDesc func_desc(const runtime::FuncRef& func) {
  validate::ExternDesc d;
  d.sort = Sort::Func;
  d.func = func->type_ref();
  return d;
}

// Another instance's exports as its type gives them, with the run-time
// identities of its resources: what the one link check compares with an
// instance import it supplies.
validate::ExternDesc instance_desc(const runtime::ComponentInstance& instance) {
  auto type = std::make_shared<validate::InstanceType>();
  if (const validate::ComponentType* component = instance.type()) {
    const auto resources = instance.run_time_resources();
    for (const auto& e : component->exports)
      type->exports.push_back({e.name, validate::substitute_resources(e.desc, resources)});
  }
  validate::ExternDesc d;
  d.sort = Sort::Instance;
  d.instance = std::move(type);
  return d;
}

// The instance another instance exports as `name`, as its type gives it,
// with the run-time identities of its resources.
validate::ExternDesc exported_instance_desc(const runtime::ComponentInstance& instance, const std::string& name) {
  if (const validate::ComponentType* component = instance.type())
    for (const auto& e : component->exports)
      if (e.name == name) return validate::substitute_resources(e.desc, instance.run_time_resources());
  throw Error(ErrorKind::Link, "the supplied instance exports no `" + name + "`");
}

validate::ExternDesc resource_desc(const runtime::ResourceTypeRef& resource) {
  validate::ExternDesc d;
  d.sort = Sort::Type;
  d.resource = resource->abi_type;
  return d;
}

// `ns:pkg/iface@X.Y.Z#item` parsed, with its version's numbers; no version
// (or one with pre-release or build parts, which only match exactly): nullopt.
struct VersionedName {
  ParsedExternName name;
  uint64_t version[3];
};
std::optional<VersionedName> versioned(std::string_view text) {
  auto name = parse_extern_path(text);
  if (!name || !name->version) return std::nullopt;
  VersionedName out{std::move(*name), {}};
  std::string_view v = *out.name.version;
  for (int i = 0; i < 3; ++i) {
    size_t digits = 0;
    while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
    if (digits == 0 || digits > 18) return std::nullopt;
    out.version[i] = std::stoull(std::string(v.substr(0, digits)));
    v.remove_prefix(digits);
    if (i < 2) {
      if (v.empty() || v[0] != '.') return std::nullopt;
      v.remove_prefix(1);
    }
  }
  if (!v.empty()) return std::nullopt;
  return out;
}

// Whether a definition named `defined` supplies the import `wanted`: the
// same name, or the same item of the same interface at a semver-compatible
// version, as wasmtime links them (the first non-zero component of the
// versions, and every one before it, equal: wasi:cli/stdout@0.2.12 serves
// an import of @0.2.6, @1.4.2 one of @1.0.0).
bool compatible(std::string_view defined, std::string_view wanted) {
  const auto d = versioned(defined), w = versioned(wanted);
  if (!d || !w) return false;
  const ParsedExternName &dn = d->name, &wn = w->name;
  if (dn.namespace_name != wn.namespace_name || dn.package != wn.package || dn.interface != wn.interface ||
      dn.member != wn.member)
    return false;
  for (int i = 0; i < 3; ++i) {
    if (d->version[i] != w->version[i]) return false;
    if (d->version[i] != 0) return true;
  }
  return true;
}

runtime::FuncRef stub(const std::string& name, std::shared_ptr<const FuncType> type) {
  return runtime::Func::host(std::move(type),
                             [name](runtime::HostCall&, std::span<const abi::Val>) -> std::vector<abi::Val> {
                               throw_trap("called the stub of unsupplied import `" + name + "`");
                             });
}

}  // namespace

std::map<std::string, runtime::Item, std::less<>> link(const validate::ComponentType& type,
                                                       const Definitions& defs) {
  std::map<std::string, runtime::Item, std::less<>> imports;
  std::map<std::string, validate::ExternDesc> supplied;  // what is type-checked, by import name
  std::vector<std::string> missing;
  // Definitions by exact name first, then by compatible version.
  auto find = [&](const std::string& name) -> runtime::FuncRef {
    for (const auto& d : defs.funcs)
      if (d.name == name) return d.func;
    for (const auto& d : defs.funcs)
      if (compatible(d.name, name)) return d.func;
    return nullptr;
  };
  // A wrapped callable made for the import's type, or a link error naming
  // both when its C++ signature does not fit.
  auto find_wrapped = [&](const std::string& name,
                          const std::shared_ptr<const FuncType>& type) -> runtime::FuncRef {
    auto maker = std::find_if(defs.makers.begin(), defs.makers.end(), [&](const auto& w) { return w.name == name; });
    if (maker == defs.makers.end())
      maker = std::find_if(defs.makers.begin(), defs.makers.end(),
                           [&](const auto& w) { return compatible(w.name, name); });
    if (maker == defs.makers.end()) return nullptr;
    std::string why;
    if (runtime::FuncRef f = maker->make(type, why)) return f;
    throw Error(ErrorKind::Link, fmt::format("import `{}` is {}; the C++ function {} does not fit it: {}", name,
                                             to_string(*type), type_name(*maker->signature), why));
  };
  auto find_resource = [&](const std::string& name) -> runtime::ResourceTypeRef {
    for (const auto& [n, type] : defs.resources)
      if (n == name) return type;
    for (const auto& [n, type] : defs.resources)
      if (compatible(n, name)) return type;
    return nullptr;
  };
  auto find_instance = [&](const std::string& name) -> const Definitions::InstanceSupply* {
    for (const auto& supply : defs.instances)
      if (supply.name == name) return &supply;
    return nullptr;
  };
  for (const auto& import : type.imports) {
    runtime::Item item;
    item.sort = import.desc.sort;
    if (import.desc.sort == Sort::Func) {
      item.func = find(import.name);
      if (!item.func) item.func = find_wrapped(import.name, import.desc.func);
      // A stub adopts the import's type, which the check binds as it binds the expected one.
      if (!item.func && defs.stub_imports) item.func = stub(import.name, import.desc.func);
      if (item.func) supplied[import.name] = func_desc(item.func);
      else missing.push_back(import.name);
    } else if (import.desc.sort == Sort::Instance && find_instance(import.name)) {
      // Another instance's exports (or an instance it exports), checked with the rest.
      const Definitions::InstanceSupply& supply = *find_instance(import.name);
      const runtime::ComponentInstance& other = *supply.instance;
      if (supply.export_name.empty()) {
        item.instance = other.exports_ref();
        supplied[import.name] = instance_desc(other);
      } else {
        const runtime::Item* exported = other.exports().find(supply.export_name);
        if (!exported || exported->sort != Sort::Instance)
          throw Error(ErrorKind::Link, "the instance supplied for `" + import.name + "` exports no instance `" +
                                           supply.export_name + "`");
        item.instance = exported->instance;
        supplied[import.name] = exported_instance_desc(other, supply.export_name);
      }
    } else if (import.desc.sort == Sort::Instance) {
      auto items = std::make_shared<runtime::InstanceItems>();
      auto type = std::make_shared<validate::InstanceType>();
      for (const auto& e : import.desc.instance->exports) {
        const std::string full = import.name + "#" + e.name;
        runtime::Item inner;
        inner.sort = e.desc.sort;
        if (e.desc.sort == Sort::Func) {
          inner.func = find(full);
          if (!inner.func) inner.func = find_wrapped(full, e.desc.func);
          if (!inner.func && defs.stub_imports) inner.func = stub(full, e.desc.func);
          if (inner.func) type->exports.push_back({e.name, func_desc(inner.func)});
          if (!inner.func) {
            missing.push_back(full);
            continue;
          }
        } else if (e.desc.sort == Sort::Type && e.desc.resource) {
          inner.resource = find_resource(full);
          if (!inner.resource) {
            missing.push_back(full + " (resource)");
            continue;
          }
          type->exports.push_back({e.name, resource_desc(inner.resource)});
        } else if (e.desc.sort == Sort::Type && e.desc.value) {
          inner.value_type = e.desc.value;
          type->exports.push_back({e.name, e.desc});
        } else {
          missing.push_back(full + " (" + to_string(e.desc.sort) + ")");
          continue;
        }
        items->exports.emplace_back(e.name, inner);
      }
      item.instance = items;
      validate::ExternDesc d;
      d.sort = Sort::Instance;
      d.instance = std::move(type);
      supplied[import.name] = std::move(d);
    } else if (import.desc.sort == Sort::Type && import.desc.resource) {
      item.resource = find_resource(import.name);
      if (item.resource) supplied[import.name] = resource_desc(item.resource);
      else missing.push_back(import.name + " (resource)");
    } else if (import.desc.sort == Sort::Type && import.desc.value) {
      item.value_type = import.desc.value;
    } else {
      missing.push_back(import.name + " (" + to_string(import.desc.sort) + ")");
    }
    imports.emplace(import.name, std::move(item));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += "\n  " + m;
    throw Error(ErrorKind::Link, "missing imports:" + list);
  }
  if (const auto mismatch = validate::instantiation_mismatch(type, supplied))
    throw Error(ErrorKind::Link, fmt::format("import `{}` has the wrong type: {}\n  expected: {}\n  supplied: {}",
                                             mismatch->import, mismatch->why, to_string(mismatch->expected),
                                             to_string(supplied.at(mismatch->import))));
  return imports;
}

}  // namespace cmhost::host
