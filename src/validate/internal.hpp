// Declarations shared by the files of the validation stage.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "support/text.hpp"
#include "validate/validate.hpp"

namespace cmhost::validate::detail {

// Throws the Validate error "at byte 0x..: <reason>".
[[noreturn]] void fail(size_t offset, const std::string& reason);

using support::hex;

// ---- core_module.cpp: core modules and core types ----

// Reads the imports and exports of the core module at `range` of `bytes`
// (type, import, function, table, memory, tag, global and export sections;
// code, data and custom sections are skipped) without compiling it.
CoreModuleType scan_core_module(std::span<const uint8_t> bytes, binary::ByteRange range);

// Why a core table or memory type is invalid (limits out of range), or nullopt.
std::optional<std::string> core_limits_error(const CoreExtern& type);

bool same_core_val_type(const binary::CoreValType& a, const binary::CoreValType& b);
bool same_core_func_type(const binary::CoreFuncType& a, const binary::CoreFuncType& b);

// Why `actual` cannot satisfy an import of type `expected` (core subtyping:
// equal function and global types, compatible limits), or nullopt.
std::optional<std::string> core_extern_mismatch(const CoreExtern& actual,
                                                const CoreExtern& expected);
// Module subtyping: imports no more, exports at least, the expected ones.
std::optional<std::string> core_module_mismatch(const CoreModuleType& actual,
                                                const CoreModuleType& expected);

std::string to_string(const binary::CoreValType& type);
std::string to_string(const binary::CoreFuncType& type);

// ---- subtyping.cpp: substitution, free resources, subtyping ----

using ResourceMap = std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef>;
using TypeMap = std::unordered_map<const abi::Type*, abi::TypeRef>;
using ResourceSet = std::unordered_set<const abi::ResourceType*>;
// Type names (ExternDesc::name_id) replaced by others, at instantiation.
using NameMap = std::unordered_map<uint64_t, uint64_t>;

// Own and borrow types remember which resource *name* (type index entry)
// they were written with, for the external-visibility rules; see
// HandleNames in validator.cpp. Substitution carries the name over. They
// also remember the ExternDesc::name_id of that entry, for Plan::handle_name.
class HandleNames {
 public:
  void set(const abi::TypeRef& handle, uint64_t token, uint64_t name_id);
  uint64_t get(const abi::Type* handle) const;      // 0 when unknown
  uint64_t name_id(const abi::Type* handle) const;  // 0 when unknown
  // Every handle with a name_id, for Plan::handle_names.
  std::unordered_map<const abi::Type*, std::pair<abi::TypeRef, uint64_t>> name_ids() const;

 private:
  struct Names {
    abi::TypeRef handle;  // keeps the key alive
    uint64_t token = 0;
    uint64_t name_id = 0;
  };
  std::unordered_map<const abi::Type*, Names> names_;
};

// Replaces resource types by others everywhere in a type. Unchanged parts
// keep their identity (the same shared objects) and each object is rebuilt
// once, so types that were shared stay shared.
class Substitution {
 public:
  // `types`, when given, replaces whole value types (by identity) too;
  // `renames`, type names (of ExternDescs and of rebuilt handles).
  Substitution(const ResourceMap& map, HandleNames* names = nullptr,
               const TypeMap* types = nullptr, const NameMap* renames = nullptr)
      : map_(map), names_(names), types_(types), renames_(renames) {}

  abi::ResourceTypeRef apply(const abi::ResourceTypeRef& resource) const;
  abi::TypeRef apply(const abi::TypeRef& type);
  std::shared_ptr<const FuncType> apply(const std::shared_ptr<const FuncType>& type);
  std::shared_ptr<const InstanceType> apply(const std::shared_ptr<const InstanceType>& type);
  std::shared_ptr<const ComponentType> apply(const std::shared_ptr<const ComponentType>& type);
  ExternDesc apply(const ExternDesc& desc);

 private:
  bool empty() const {
    return map_.empty() && (!types_ || types_->empty()) && (!renames_ || renames_->empty());
  }
  uint64_t rename(uint64_t name_id) const;
  const ResourceMap& map_;
  HandleNames* names_;
  const TypeMap* types_;
  const NameMap* renames_;
  std::unordered_map<const void*, std::shared_ptr<const void>> done_;
};

// Fresh resource types (same names) for `resources`, added to `map`.
void freshen(const std::vector<abi::ResourceTypeRef>& resources, ResourceMap& map,
             std::vector<abi::ResourceTypeRef>* fresh = nullptr);

// Every resource type a type mentions that it does not bind itself.
void collect_free_resources(const ExternDesc& desc, ResourceSet& out);
void collect_free_resources(const abi::TypeRef& type, ResourceSet& out);

// The check instantiation makes (instantiation_mismatch in validate.hpp),
// leaving in `map` the component's imported resource types bound to the
// arguments'; `names` renames handles as the validator's substitutions do.
// With `adopted`, arguments written with the component's own imported
// resources (a host function that adopts the import's type) have them
// bound too: for what a linker supplies, never within a component, where a
// type may mention its own resources and an argument's at once.
std::optional<ImportMismatch> instantiation_mismatch(const ComponentType& type,
                                                     const std::map<std::string, ExternDesc>& args, ResourceMap& map,
                                                     HandleNames* names = nullptr, bool adopted = false);

// Binds the resources of `bindable` that `expected` introduces (type exports
// of instances, recursively) to what `actual` has at the same names.
void bind_resources(const ExternDesc& actual, const ExternDesc& expected,
                    const ResourceSet& bindable, ResourceMap& map);
// Maps the value types `expected` imports with (eq) bounds to those `actual`
// supplies, and the names of its type imports to those of `actual`,
// recursively through instances.
void bind_types(const ExternDesc& actual, const ExternDesc& expected, TypeMap& map,
                NameMap& names);

std::optional<std::string> value_mismatch(const abi::Type& actual, const abi::Type& expected);
std::optional<std::string> func_mismatch(const FuncType& actual, const FuncType& expected);
std::optional<std::string> extern_mismatch(const ExternDesc& actual, const ExternDesc& expected);

bool contains_borrow(const abi::Type& type);
// Strings and lists: lowering it needs memory (and realloc when into the guest).
bool contains_pointer(const abi::Type& type);

const char* sort_name(binary::Sort sort);
std::string describe_kind(const ExternDesc& desc);  // "func", "resource type", ...

// ---- names.cpp: import and export names ----

// The canonical form under which names must be strongly-unique.
std::string strongly_unique_key(const binary::ParsedExternName& name);

// One list of import or export names of one scope (a component, component
// type, instance type or bag of exports): checks each name's syntax and
// attributes, strong uniqueness, and the [constructor]/[method]/[static]
// rules against the resource types named earlier in the list.
class NameScope {
 public:
  explicit NameScope(const char* kind) : kind_(kind) {}  // "import" or "export"

  // `resource_token` names the type index entry a resource import/export
  // creates (0 otherwise); `handles` gives the names own/borrow types use.
  void add(const binary::ExternName& name, const ExternDesc& desc, uint64_t resource_token,
           const HandleNames& handles, size_t offset);

 private:
  void check_resource_name(const abi::TypeRef& handle, const std::string& resource,
                           const HandleNames& handles, size_t offset) const;

  const char* kind_;
  std::unordered_map<std::string, std::string> keys_;  // strongly-unique key -> name
  std::unordered_map<uint64_t, std::string> resource_names_;
  std::unordered_set<std::string> all_resource_names_;
};

// ---- print.cpp ----
std::string to_string(const abi::Type& type);

}  // namespace cmhost::validate::detail
