// Component type reflection: a component's imports and exports, with their
// function, instance, component and value types, as validation resolves
// them. `cmhost inspect` prints these as WIT; Component::type() and
// ComponentInfo give them to an embedder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cmhost/abi/type.hpp"
#include "cmhost/names.hpp"
#include "cmhost/sort.hpp"

namespace cmhost {

struct FuncType;
struct InstanceType;
struct ComponentType;
// A core module's imports and exports (printed by to_string(ExternDesc)).
struct CoreModuleType;

// The type of an import or export. `sort` says which member is set. A Type
// (sort Type) is bound to exactly one of: a value type (`value`), a resource
// type (`resource`), or a func, instance or component type (`func`,
// `instance`, `component`: types of those kinds can be exported as types too).
struct ExternDesc {
  Sort sort = Sort::Func;  // CoreModule, Func, Value, Type, Component, Instance
  std::shared_ptr<const CoreModuleType> module;
  std::shared_ptr<const FuncType> func;
  std::shared_ptr<const InstanceType> instance;
  std::shared_ptr<const ComponentType> component;
  abi::TypeRef value;             // Value; Type with an (eq <value type>) bound
  abi::ResourceTypeRef resource;  // Type bound to a resource type
  // Type imports and exports declare a name, as WIT sees it: `name_id`
  // identifies it (unique within one validation; aliases of the import or
  // export keep it) and `alias_of` is the name its bound referred to, 0 when
  // that was a type definition, so tools can print `type b = a` and `use`.
  // Each such import or export of a primitive type, record, variant, enum or
  // flags has a `value` object of its own, which the types written with it
  // use: their uses can be told apart by identity.
  uint64_t name_id = 0;
  uint64_t alias_of = 0;
};

struct NamedExtern {
  std::string name;
  ExternDesc desc;
};

struct FuncType {
  bool async = false;
  std::vector<std::string> param_names;
  std::vector<abi::TypeRef> params;
  abi::TypeRef result;  // null when the function has no result
};

struct InstanceType {
  std::vector<NamedExtern> exports;
  // Abstract resource types this instance *type* declares with
  // (export "r" (type (sub resource))): each import or export of an instance
  // of this type gets fresh ones. Always empty for the type of an actual
  // instance (an import, an instantiation, a bag of exports).
  std::vector<abi::ResourceTypeRef> defined_resources;
  const NamedExtern* find(std::string_view name) const;  // by exact name
};

struct ComponentType {
  std::vector<NamedExtern> imports;
  std::vector<NamedExtern> exports;
  // The resource types the imports introduce, (sub resource) imports and
  // those of imported instances: instantiation substitutes what is supplied
  // for them.
  std::vector<abi::ResourceTypeRef> imported_resources;
  // The resource types the exports introduce that the component defines (or
  // gets from instances it creates): every instantiation replaces them by
  // fresh ones.
  std::vector<abi::ResourceTypeRef> defined_resources;
};

// Component text (WAT-like), e.g. `(func (param "x" u32) (result string))`.
std::string to_string(const ExternDesc& desc);
std::string to_string(const FuncType& type);

// A component's type as its bytes give it, decoded and validated without
// compiling its core modules: what `cmhost inspect` prints.
struct ComponentInfo {
  ComponentType type;
  // The `implements` attribute of each import and export (parallel to
  // type.imports and type.exports), empty when it has none.
  std::vector<std::string> import_implements, export_implements;
  // The type name (ExternDesc::name_id) an own or borrow type was written
  // with, 0 when it named a resource definition or is unknown: how a handle
  // of a resource alias (`type h = r`) prints as `h`.
  uint64_t handle_name(const abi::Type& handle) const;
  // handle_name's table: handle -> (the handle, kept alive; its name).
  std::unordered_map<const abi::Type*, std::pair<abi::TypeRef, uint64_t>> handle_names;

  // Throws Error (Decode or Validate) saying what and where.
  static ComponentInfo from_bytes(std::span<const uint8_t> bytes);
};

}  // namespace cmhost
