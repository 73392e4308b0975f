// The validator's state: one Scope per component, component type or instance
// type being validated (they nest, for outer aliases), holding the static
// view of every index space, and the Validator that walks definitions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "internal.hpp"

namespace cmhost::validate::detail {

enum class ScopeKind { Component, ComponentType, InstanceType };

// An entry of the type index space, plus the name token that own/borrow
// types written with it record (resource entries only; see HandleNames).
struct TypeEntry {
  ExternDesc desc;  // sort Type
  uint64_t token = 0;
};

// An entry of the core type index space: a function type, another core
// (GC) type, or a module type.
struct CoreTypeEntry {
  bool is_func = false;
  binary::CoreFuncType func;
  std::shared_ptr<const CoreModuleType> module;
};

// What a core instance exports, by name.
using CoreExports = std::map<std::string, CoreExtern>;

// A core module or component in its index space; `plan_module` / `plan` say
// where its code is when it is known statically (definitions and outer
// aliases of them, not imports or exports of instances).
struct ModuleEntry {
  std::shared_ptr<const CoreModuleType> type;
  std::optional<uint32_t> plan_module;  // index into Plan::modules
};
struct ComponentEntry {
  std::shared_ptr<const ComponentType> type;
  std::shared_ptr<const ComponentPlan> plan;
};

// Types that have an externally visible name (Explainer "External
// Visibility of Types"): records, variants, enums and flags by identity,
// resource types by the name token of the type index entry that imported or
// exported them, or by identity when they came in with an instance.
struct NamedTypes {
  std::unordered_set<const abi::Type*> types;
  std::unordered_set<uint64_t> tokens;
  ResourceSet resources;
};

enum class ExternKind { Import, Export };

// Fails with "unknown <sort> <index>" at `offset`.
[[noreturn]] void out_of_bounds(size_t offset, const char* sort, uint32_t index);

// The entry `index` of an index space, or out_of_bounds.
template <typename Vector>
const auto& index_at(const Vector& v, uint32_t index, const char* sort, size_t offset) {
  if (index >= v.size()) out_of_bounds(offset, sort, index);
  return v[index];
}

struct Scope {
  ScopeKind kind = ScopeKind::Component;
  Scope* parent = nullptr;
  const binary::NameSection* names = nullptr;  // components with a name section

  std::vector<binary::CoreFuncType> core_funcs;
  std::vector<binary::CoreTableType> core_tables;
  std::vector<binary::CoreMemoryType> core_memories;
  std::vector<binary::CoreGlobalType> core_globals;
  std::vector<binary::CoreFuncType> core_tags;
  std::vector<CoreTypeEntry> core_types;
  std::vector<ModuleEntry> core_modules;
  std::vector<std::shared_ptr<const CoreExports>> core_instances;
  std::vector<std::shared_ptr<const FuncType>> funcs;
  std::vector<abi::TypeRef> values;
  std::vector<bool> value_used;
  std::vector<TypeEntry> types;
  std::vector<std::shared_ptr<const InstanceType>> instances;
  std::vector<ComponentEntry> components;

  std::vector<NamedExtern> imports;
  std::vector<NamedExtern> exports;
  NameScope import_names{"import"};
  NameScope export_names{"export"};
  std::vector<abi::ResourceTypeRef> imported_resources;
  std::vector<abi::ResourceTypeRef> defined_resources;
  // Resource types defined here, with their representation: only these
  // allow resource.new and resource.rep.
  std::unordered_map<const abi::ResourceType*, binary::CoreValType> local_resources;
  NamedTypes imported_named;
  NamedTypes exported_named;
  std::optional<binary::CoreValType> context_type;  // of context.get/set

  ComponentPlan* plan = nullptr;  // components only
};

// The component type's defined resources: the resource types defined in
// `s` that its exports mention (fresh for every instance). Fails when one
// appears in its imports.
std::vector<abi::ResourceTypeRef> defined_resources_of_type(const Scope& s, size_t offset);

class Validator {
 public:
  Validator(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  std::shared_ptr<ComponentPlan> component(const binary::Component& component, Scope* parent);
  std::vector<binary::ByteRange> take_modules() { return std::move(modules_); }
  const HandleNames& handle_names() const { return handle_names_; }

 private:
  // ---- definitions (validator.cpp) ----
  void definition(Scope& s, const binary::Definition& d);
  void core_module(Scope& s, const binary::CoreModule& m, size_t offset);
  void core_instance(Scope& s, const binary::CoreInstance& i, size_t offset);
  void core_type(Scope& s, const binary::CoreType& t, size_t offset);
  void instance(Scope& s, const binary::Instance& i, size_t offset);
  void alias(Scope& s, const binary::Alias& a, size_t offset);
  void type(Scope& s, const binary::Type& t, size_t offset);
  void start(Scope& s, const binary::Start& st, size_t offset);
  void import(Scope& s, const binary::ExternName& name, const binary::ExternType& type, size_t offset);
  void export_(Scope& s, const binary::Export& e, size_t offset);
  void export_decl(Scope& s, const binary::ExternName& name, const binary::ExternType& type,
                   size_t offset);
  void finish(Scope& s, size_t offset);

  // ---- types (validator.cpp) ----
  TypeEntry define_type(Scope& s, const binary::Type& t, size_t offset);
  abi::TypeRef val_type(Scope& s, const binary::ValType& t, size_t offset);
  std::shared_ptr<const FuncType> func_type(Scope& s, const binary::FuncType& f, size_t offset);
  std::shared_ptr<const ComponentType> component_type(Scope& s, const binary::ComponentType& t,
                                                      size_t offset);
  std::shared_ptr<const InstanceType> instance_type(Scope& s, const binary::InstanceType& t,
                                                    size_t offset);
  void declarators(Scope& inner, const std::vector<binary::Declarator>& decls);
  std::shared_ptr<const CoreModuleType> module_type(Scope& s, const binary::CoreModuleType& t,
                                                    size_t offset);
  // `name` names the fresh resource type of a (sub resource) bound.
  ExternDesc extern_type(Scope& s, const binary::ExternType& t, size_t offset,
                         const std::string& name);
  void add_extern(Scope& s, ExternKind kind, const binary::ExternName& name, ExternDesc desc,
                  size_t offset);

  // Index space lookups that fail with a message naming the index.
  const TypeEntry& type_at(Scope& s, uint32_t index, size_t offset);
  ExternDesc item(Scope& s, binary::SortIndex target, size_t offset);
  const binary::CoreFuncType& core_func_at(Scope& s, uint32_t index, size_t offset);
  std::string describe(const Scope& s, binary::Sort sort, uint32_t index) const;

  // ---- external visibility (validator.cpp) ----
  bool named(const abi::TypeRef& type, const NamedTypes& set) const;
  bool contents_named(const ExternDesc& desc, const NamedTypes& set) const;
  // Checks that what `desc` uses has an externally visible name, then names
  // what it introduces (`token`: the new type index entry of a type).
  bool check_and_register(Scope& s, ExternKind kind, const ExternDesc& desc, uint64_t token);

  // ---- canonical definitions (canon.cpp) ----
  void canon(Scope& s, const binary::Canon& c, size_t offset);
  CanonOptions canon_options(Scope& s, const std::vector<binary::CanonOption>& options,
                             size_t offset);
  void lift(Scope& s, const binary::Canon& c, size_t offset);
  void lower(Scope& s, const binary::Canon& c, size_t offset);
  void builtin(Scope& s, const binary::Canon& c, size_t offset);  // by binary/canon_table.def's row
  binary::CoreFuncType task_return(Scope& s, const binary::Canon& c, step::CanonBuiltin& out, size_t offset);
  void option_requirements(const binary::Canon& c, const step::CanonBuiltin& out, size_t offset);

  // Bounds the structural depth and the effective (unshared) size of value
  // and function types, as wasmtime does: every later walk over a type is
  // then bounded too.
  struct TypeInfo {
    uint32_t size = 1;
    uint32_t depth = 1;
  };
  TypeInfo type_info(const abi::TypeRef& type);
  void check_type_limits(TypeInfo info, size_t offset) const;

  void emit(Scope& s, Step step, size_t offset);
  uint64_t new_token() { return ++last_token_; }
  abi::ResourceTypeRef new_resource(const std::string& name);

  std::span<const uint8_t> bytes_;
  std::vector<binary::ByteRange> modules_;
  std::map<size_t, uint32_t> module_by_offset_;
  HandleNames handle_names_;
  std::unordered_map<const abi::Type*, std::pair<abi::TypeRef, TypeInfo>> type_infos_;
  uint64_t last_token_ = 0;
  // Resource types whose placeholder name the first export replaces.
  std::unordered_map<const abi::ResourceType*, std::shared_ptr<abi::ResourceType>> unnamed_;
};

}  // namespace cmhost::validate::detail
