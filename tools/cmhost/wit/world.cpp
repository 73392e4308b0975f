#include "world.hpp"

#include <algorithm>

namespace cmhost::tools::wit {

bool is_shared_primitive(const abi::Type& type) {
  const TypeKind kind = type.kind();
  return (kind <= TypeKind::String || kind == TypeKind::ErrorContext) &&
         abi::Type::primitive(kind).get() == &type;
}

[[noreturn]] void unrepresentable(const std::string& why) {
  throw Error(ErrorKind::Validate, "cannot print the component as WIT: " + why);
}

void WorldDecoder::import(const NamedExtern& item, const std::string& implements) {
  switch (item.desc.sort) {
    case Sort::Instance: imports_.push_back(instance(item, implements)); break;
    case Sort::Func: {
      WorldItem out;
      out.kind = WorldItem::Kind::Function;
      out.name = item.name;
      out.function = function(item.name, item.desc.func, nullptr, world_types_);
      imports_.push_back(std::move(out));
      break;
    }
    case Sort::Type: {
      // Imported value and resource types are types of the world; imported
      // function, instance or component types have no WIT form.
      if (!item.desc.value && !item.desc.resource) break;
      WorldItem out;
      out.kind = WorldItem::Kind::Type;
      out.name = item.name;
      out.type = add_type(world_types_, item.name, item.desc, nullptr);
      imports_.push_back(std::move(out));
      break;
    }
    default: break;  // modules, components and values are not part of a world
  }
}

void WorldDecoder::export_(const NamedExtern& item, const std::string& implements) {
  if (item.desc.sort == Sort::Func) {
    WorldItem out;
    out.kind = WorldItem::Kind::Function;
    out.name = item.name;
    out.function = function(item.name, item.desc.func, nullptr, world_types_);
    exports_.push_back(std::move(out));
  } else if (item.desc.sort == Sort::Instance) {
    // An instance exported again (an import re-exported under its own or
    // another name) would give its types two names, which decoding.rs
    // refuses.
    if (instances_.count(item.desc.instance.get()))
      for (const auto& e : item.desc.instance->exports)
        if (e.desc.sort == Sort::Type && (e.desc.value || e.desc.resource))
          unrepresentable("the type `" + e.name +
                          "` appears more than once (for example, when an imported instance "
                          "is re-exported under a new name)");
    exports_.push_back(instance(item, implements));
  } else {
    unrepresentable("component export `" + item.name + "` was not a function or instance");
  }
}

std::vector<const Package*> WorldDecoder::packages() const {
  std::vector<const Package*> order;
  std::unordered_set<const Package*> visiting;
  for (const auto& p : packages_) visit(p.get(), order, visiting);
  return order;
}

const NamedType* WorldDecoder::named(const abi::Type& type, const TypeList& scope) const {
  if (is_shared_primitive(type)) return nullptr;
  for (const auto& t : scope)
    if (t->value.get() == &type) return t.get();
  if (auto it = by_value_.find(&type); it != by_value_.end()) return it->second.front();
  return nullptr;
}

const NamedType* WorldDecoder::by_id(uint64_t id, const TypeList& scope) const {
  if (!id) return nullptr;
  for (const auto& t : scope)
    if (t->id == id) return t.get();
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const NamedType* WorldDecoder::resource_type(const abi::ResourceType& resource, const TypeList& scope) const {
  for (const auto& t : scope)
    if (t->resource.get() == &resource) return t.get();
  if (auto it = by_resource_.find(&resource); it != by_resource_.end()) return it->second.front();
  return nullptr;
}

WorldItem WorldDecoder::instance(const NamedExtern& item, const std::string& implements) {
  instances_.insert(item.desc.instance.get());
  WorldItem out;
  out.kind = WorldItem::Kind::Interface;
  const auto implemented = parse_extern_name(implements);
  const auto parsed = parse_extern_name(item.name);
  if (!implements.empty() && implemented &&
      implemented->kind == ParsedExternName::Kind::Interface) {
    Interface* iface = foreign_interface(*implemented);
    merge(*iface, *item.desc.instance, item.name);
    out.name = item.name;
    out.interface = iface;
  } else if (parsed && parsed->kind == ParsedExternName::Kind::Interface) {
    Interface* iface = foreign_interface(*parsed);
    merge(*iface, *item.desc.instance, item.name);
    out.interface_key = true;
    out.interface = iface;
  } else {
    auto iface = std::make_unique<Interface>();
    for (const auto& e : item.desc.instance->exports) {
      if (e.desc.sort == Sort::Type) {
        if (e.desc.value || e.desc.resource) add_type(iface->types, e.name, e.desc, iface.get());
      } else if (e.desc.sort == Sort::Func) {
        iface->functions.push_back(function(e.name, e.desc.func, iface.get(), iface->types));
      } else {
        unrepresentable("instance type export `" + e.name + "` of `" + item.name +
                        "` is not a type or function");
      }
    }
    out.name = item.name;
    out.interface = iface.get();
    inline_interfaces_.push_back(std::move(iface));
  }
  return out;
}

Interface* WorldDecoder::foreign_interface(const ParsedExternName& name) {
  Package* package = nullptr;
  for (const auto& p : packages_)
    if (p->namespace_name == name.namespace_name && p->name == name.package &&
        p->version == name.version)
      package = p.get();
  if (!package) {
    auto created = std::make_unique<Package>();
    created->namespace_name = name.namespace_name;
    created->name = name.package;
    created->version = name.version;
    package = created.get();
    packages_.push_back(std::move(created));
  }
  for (const auto& iface : package->interfaces)
    if (iface->name == name.interface) return iface.get();
  auto iface = std::make_unique<Interface>();
  iface->name = name.interface;
  iface->package = package;
  package->interfaces.push_back(std::move(iface));
  return package->interfaces.back().get();
}

void WorldDecoder::merge(Interface& iface, const InstanceType& type, const std::string& where) {
  for (const auto& e : type.exports) {
    if (e.desc.sort == Sort::Type) {
      if (!e.desc.value && !e.desc.resource) continue;
      auto existing = std::find_if(iface.types.begin(), iface.types.end(),
                                   [&](const auto& t) { return t->name == e.name; });
      if (existing != iface.types.end())
        remember(e.desc, existing->get());
      else
        add_type(iface.types, e.name, e.desc, &iface);
    } else if (e.desc.sort == Sort::Func) {
      const bool known = std::any_of(iface.functions.begin(), iface.functions.end(),
                                     [&](const Function& f) { return f.name == e.name; });
      if (!known) iface.functions.push_back(function(e.name, e.desc.func, &iface, iface.types));
    } else {
      unrepresentable("instance type export `" + e.name + "` of `" + where +
                      "` is not a type or function");
    }
  }
}

void WorldDecoder::remember(const ExternDesc& desc, const NamedType* type) {
  auto add = [&](std::vector<const NamedType*>& names) {
    if (std::find(names.begin(), names.end(), type) == names.end()) names.push_back(type);
  };
  if (desc.name_id) by_id_.emplace(desc.name_id, type);
  if (desc.resource) add(by_resource_[desc.resource.get()]);
  if (desc.value && !is_shared_primitive(*desc.value)) add(by_value_[desc.value.get()]);
}

}  // namespace cmhost::tools::wit
