// The world of a component as wit-parser's Resolve would hold it: packages,
// interfaces, named types and functions, decoded from the validated imports
// and exports (decoding.rs in wasm-tools' wit-parser). The printer
// (printer.cpp) writes it as WIT.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cmhost/error.hpp"
#include "cmhost/types.hpp"

namespace cmhost::tools::wit {

using abi::TypeKind;

// The object abi::Type shares for a primitive type: it never stands for a
// name (the validator gives each name of a primitive type an object of its
// own), so uses of it print as the primitive.
bool is_shared_primitive(const abi::Type& type);

// ---- The decoded world (a small version of wit-parser's Resolve) ----

struct Interface;
struct Package;

// A named type of an interface or of the world.
struct NamedType {
  std::string name;
  uint64_t id = 0;                   // ExternDesc::name_id
  const Interface* owner = nullptr;  // null: the world
  // What the name stands for in its owner: a value type or a resource type.
  abi::TypeRef value;
  abi::ResourceTypeRef resource;
  // Set when the name stands for a type named before: printed as `use` when
  // that type belongs to another interface, as `type name = other;` otherwise.
  const NamedType* alias_of = nullptr;
};

enum class FuncKind { Freestanding, Constructor, Method, Static };

struct Function {
  std::string name;       // as imported or exported: `f`, `[method]r.f`, ...
  std::string item_name;  // as printed: `f`, or `constructor`
  FuncKind kind = FuncKind::Freestanding;
  const NamedType* resource = nullptr;  // constructors, methods, statics
  std::shared_ptr<const FuncType> type;
};

struct Interface {
  std::optional<std::string> name;  // none: `label: interface { ... }` inline in the world
  const Package* package = nullptr;  // null: the root package
  std::vector<std::unique_ptr<NamedType>> types;
  std::vector<Function> functions;
};

struct Package {
  std::string namespace_name, name;
  std::optional<std::string> version;
  std::vector<std::unique_ptr<Interface>> interfaces;
};

struct WorldItem {
  enum class Kind { Interface, Function, Type };
  Kind kind = Kind::Function;
  std::string name;             // labels: the key of the item
  bool interface_key = false;   // `import ns:pkg/iface@v;`: keyed by the interface
  const Interface* interface = nullptr;
  Function function;
  const NamedType* type = nullptr;
};

using TypeList = std::vector<std::unique_ptr<NamedType>>;


// What WIT cannot express: a Validate error saying so.
[[noreturn]] void unrepresentable(const std::string& why);

// Turns the component's imports and exports into a world, interfaces and
// packages the way decoding.rs does: items in binary order, interfaces named
// `ns:pkg/iface@version` in packages of their own (created on first use,
// merged when imported and exported), other instances as inline interfaces.
class WorldDecoder {
 public:
  // `implements`: the interface an instance of a plain name implements
  // (`(implements "ns:pkg/iface")`), empty when it has no such attribute.
  void import(const NamedExtern& item, const std::string& implements);

  void export_(const NamedExtern& item, const std::string& implements);

  // Packages in the order decoding.rs finishes them: first use, then
  // reordered so that a package comes after those it takes types from.
  std::vector<const Package*> packages() const;

  const std::vector<WorldItem>& imports() const { return imports_; }
  const std::vector<WorldItem>& exports() const { return exports_; }
  const TypeList& world_types() const { return world_types_; }

  // The named type a use of `type` refers to, by identity. `scope` (the
  // interface or world being printed) is searched first, as its own names
  // are the ones in effect there.
  const NamedType* named(const abi::Type& type, const TypeList& scope) const;

  // The named type of a type name (ExternDesc::name_id), if any;
  // `scope` first, for the case of two instances of one instance type,
  // whose names are the same.
  const NamedType* by_id(uint64_t id, const TypeList& scope) const;

  // For handles written with a resource definition rather than a name:
  // the named type standing for `resource` (`scope` first), null if none.
  const NamedType* resource_type(const abi::ResourceType& resource, const TypeList& scope) const;
  // Its name, or the resource's own when the world does not name it.
  std::string resource_name(const abi::ResourceType& resource, const TypeList& scope) const {
    const NamedType* t = resource_type(resource, scope);
    return t ? t->name : resource.name;
  }

 private:
  void visit(const Package* package, std::vector<const Package*>& order,
             std::unordered_set<const Package*>& visiting) const {
    if (std::find(order.begin(), order.end(), package) != order.end()) return;
    if (!visiting.insert(package).second) return;  // a cycle: keep first-use order
    for (const auto& iface : package->interfaces)
      for (const auto& t : iface->types) {
        if (!t->alias_of || !t->alias_of->owner || t->alias_of->owner == t->owner) continue;
        const Package* dep = t->alias_of->owner->package;
        if (dep && dep != package) visit(dep, order, visiting);
      }
    order.push_back(package);
  }

  // An instance: an interface of a package when named `ns:pkg/iface@v`
  // (or implementing one), else an interface of its own inline in the world
  // (decoding.rs `decode_world_instance`).
  WorldItem instance(const NamedExtern& item, const std::string& implements);

  // The interface `ns:pkg/name@version`, created with its package on first use.
  Interface* foreign_interface(const ParsedExternName& name);

  // Adds what an instance of `type` shows of the interface: an interface
  // both imported and exported keeps the names seen first (decoding.rs
  // `register_import`).
  void merge(Interface& iface, const InstanceType& type, const std::string& where);

  // Records which named type a type name, value or resource type object
  // stands for.
  void remember(const ExternDesc& desc, const NamedType* type);

  // A type export `name` of `owner`. When its bound named a type named
  // before, it becomes an alias of that one, which prints as `use` when
  // that one belongs to another interface (decoding.rs
  // `register_type_export`).
  const NamedType* add_type(TypeList& list, const std::string& name, const ExternDesc& desc,
                            const Interface* owner) {
    auto type = std::make_unique<NamedType>();
    type->name = name;
    type->id = desc.name_id;
    type->owner = owner;
    type->value = desc.value;
    type->resource = desc.resource;
    type->alias_of = earlier(desc, list, owner);
    remember(desc, type.get());
    list.push_back(std::move(type));
    return list.back().get();
  }

  const NamedType* earlier(const ExternDesc& desc, const TypeList& scope,
                           const Interface* owner) const {
    // `use` needs a path: types of the world or of an inline interface can
    // only be named again within their own scope; elsewhere what they alias
    // stands in (decoding.rs `find_alias` follows alias chains as well).
    const NamedType* t = by_id(desc.alias_of, scope);
    while (t && t->owner != owner && !(t->owner && t->owner->name)) t = t->alias_of;
    return t;
  }

  Function function(const std::string& name, const std::shared_ptr<const FuncType>& type,
                    const Interface* owner, const TypeList& scope) {
    Function f;
    f.name = name;
    f.item_name = name;
    f.type = type;
    const auto parsed = parse_extern_name(name);
    if (!parsed || parsed->kind == ParsedExternName::Kind::Label ||
        parsed->kind == ParsedExternName::Kind::Interface)
      return f;
    using Kind = ParsedExternName::Kind;
    f.kind = parsed->kind == Kind::Constructor ? FuncKind::Constructor
             : parsed->kind == Kind::Method    ? FuncKind::Method
                                               : FuncKind::Static;
    f.item_name = f.kind == FuncKind::Constructor ? "constructor" : parsed->label;
    // The resource defined in the same interface (or world) under that name.
    const NamedType* resource = nullptr;
    for (const auto& t : scope)
      if (t->resource && t->name == parsed->resource && (!resource || !t->alias_of))
        resource = t.get();
    if (!resource)
      unrepresentable("function `" + name + "` of " +
                      (owner && owner->name ? "interface `" + *owner->name + "`" : "the world") +
                      " refers to an unknown resource `" + parsed->resource + "`");
    f.resource = resource;
    return f;
  }

  std::vector<std::unique_ptr<Package>> packages_;
  std::vector<std::unique_ptr<Interface>> inline_interfaces_;
  TypeList world_types_;
  std::vector<WorldItem> imports_, exports_;
  // Every named type a value or resource type object stands for, in order.
  std::unordered_map<const abi::Type*, std::vector<const NamedType*>> by_value_;
  std::unordered_map<const abi::ResourceType*, std::vector<const NamedType*>> by_resource_;
  std::unordered_map<uint64_t, const NamedType*> by_id_;  // the first one of each name
  std::unordered_set<const InstanceType*> instances_;  // imported or exported so far
};

}  // namespace cmhost::tools::wit
