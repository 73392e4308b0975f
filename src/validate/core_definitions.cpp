// Validation of core definitions in a component: core modules (their
// bytes checked by core_module.cpp), core instances and core types.
#include "validator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmhost/error.hpp"

namespace cmhost::validate::detail {

using binary::Sort;

void Validator::core_module(Scope& s, const binary::CoreModule& m, size_t) {
  auto type = std::make_shared<const CoreModuleType>(scan_core_module(bytes_, m.bytes));
  auto [it, inserted] = module_by_offset_.emplace(m.bytes.offset, uint32_t(modules_.size()));
  if (inserted) modules_.push_back(m.bytes);
  s.core_modules.push_back({type, it->second});
  emit(s, step::CoreModule{it->second, std::nullopt}, m.bytes.offset);
}

void Validator::core_instance(Scope& s, const binary::CoreInstance& i, size_t offset) {
  auto exports = std::make_shared<CoreExports>();
  if (auto inst = std::get_if<binary::CoreInstantiate>(&i.expr)) {
    const CoreModuleType& module = *index_at(s.core_modules, inst->module, "module", offset).type;
    std::map<std::string, const CoreExports*> args;
    for (const auto& arg : inst->args) {
      const auto& instance = index_at(s.core_instances, arg.instance, "core instance", offset);
      if (!args.emplace(arg.name, instance.get()).second)
        fail(offset, "duplicate module instantiation argument named `" + arg.name + "`");
    }
    for (const auto& import : module.imports) {
      auto arg = args.find(import.module);
      if (arg == args.end())
        fail(offset, "missing module instantiation argument named `" + import.module + "` for " +
                         describe(s, Sort::CoreModule, inst->module));
      auto item = arg->second->find(import.name);
      if (item == arg->second->end())
        fail(offset, "module instantiation argument `" + import.module +
                         "` does not export an item named `" + import.name + "`");
      if (auto why = core_extern_mismatch(item->second, import.type))
        fail(offset, "type mismatch for export `" + import.name +
                         "` of module instantiation argument `" + import.module + "`: " + *why);
    }
    for (const auto& e : module.exports) exports->emplace(e.name, e.type);
    step::CoreInstantiate out{inst->module, {}};
    for (const auto& arg : inst->args) out.args.emplace_back(arg.name, arg.instance);
    s.core_instances.push_back(std::move(exports));
    emit(s, std::move(out), offset);
    return;
  }
  step::CoreInlineInstance out;
  for (const auto& e : std::get<binary::CoreInlineExports>(i.expr).exports) {
    CoreExtern type;
    type.sort = e.target.sort;
    switch (e.target.sort) {
      case Sort::CoreFunc: type.func = index_at(s.core_funcs, e.target.index, "core func", offset); break;
      case Sort::CoreTable: type.table = index_at(s.core_tables, e.target.index, "table", offset); break;
      case Sort::CoreMemory:
        type.memory = index_at(s.core_memories, e.target.index, "memory", offset);
        break;
      case Sort::CoreGlobal:
        type.global = index_at(s.core_globals, e.target.index, "global", offset);
        break;
      case Sort::CoreTag: type.func = index_at(s.core_tags, e.target.index, "tag", offset); break;
      default:
        fail(offset, std::string("a core instance cannot export a ") + sort_name(e.target.sort));
    }
    if (!exports->emplace(e.name, type).second)
      fail(offset, "export name `" + e.name + "` already defined");
    out.exports.push_back({e.name, e.target.sort, e.target.index});
  }
  s.core_instances.push_back(std::move(exports));
  emit(s, std::move(out), offset);
}

void Validator::core_type(Scope& s, const binary::CoreType& t, size_t offset) {
  if (auto rec = std::get_if<binary::CoreRecType>(&t.def)) {
    for (const auto& sub : rec->types) {
      CoreTypeEntry entry;
      if (auto f = std::get_if<binary::CoreFuncType>(&sub.type)) {
        entry.is_func = true;
        entry.func = *f;
      }
      s.core_types.push_back(std::move(entry));
    }
    return;
  }
  CoreTypeEntry entry;
  entry.module = module_type(s, std::get<binary::CoreModuleType>(t.def), offset);
  s.core_types.push_back(std::move(entry));
}

std::shared_ptr<const CoreModuleType> Validator::module_type(Scope& s,
                                                             const binary::CoreModuleType& t,
                                                             size_t offset) {
  // A module type starts with an empty core type index space of its own.
  std::vector<CoreTypeEntry> types;
  auto func_at = [&](uint32_t index) -> const binary::CoreFuncType& {
    const auto& entry = index_at(types, index, "type", offset);
    if (!entry.is_func) fail(offset, "type index " + std::to_string(index) + " is not a function type");
    return entry.func;
  };
  auto extern_of = [&](const binary::CoreExternType& type) {
    CoreExtern out;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, binary::CoreFuncRef>) {
            out.sort = Sort::CoreFunc;
            out.func = func_at(v.type_index);
          } else if constexpr (std::is_same_v<T, binary::CoreTableType>) {
            out.sort = Sort::CoreTable;
            out.table = v;
          } else if constexpr (std::is_same_v<T, binary::CoreMemoryType>) {
            out.sort = Sort::CoreMemory;
            out.memory = v;
          } else if constexpr (std::is_same_v<T, binary::CoreGlobalType>) {
            out.sort = Sort::CoreGlobal;
            out.global = v;
          } else {
            out.sort = Sort::CoreTag;
            out.func = func_at(v.type_index);
          }
        },
        type);
    return out;
  };
  auto out = std::make_shared<CoreModuleType>();
  for (const auto& decl : t.decls) {
    if (auto import = std::get_if<binary::CoreImportDecl>(&decl)) {
      for (const auto& other : out->imports)
        if (other.module == import->module && other.name == import->name)
          fail(offset, "duplicate import name `" + import->module + ":" + import->name + "`");
      CoreExtern type = extern_of(import->type);
      if (auto why = core_limits_error(type)) fail(offset, *why);
      out->imports.push_back({import->module, import->name, std::move(type)});
    } else if (auto rec = std::get_if<binary::CoreRecType>(&decl)) {
      for (const auto& sub : rec->types) {
        CoreTypeEntry entry;
        if (auto f = std::get_if<binary::CoreFuncType>(&sub.type)) {
          entry.is_func = true;
          entry.func = *f;
        }
        types.push_back(std::move(entry));
      }
    } else if (auto alias = std::get_if<binary::CoreOuterTypeAlias>(&decl)) {
      if (alias->count == 0) {
        types.push_back(index_at(types, alias->index, "type", offset));
        continue;
      }
      Scope* target = &s;
      for (uint32_t k = 1; k < alias->count && target; ++k) target = target->parent;
      if (!target) fail(offset, "invalid outer alias count of " + std::to_string(alias->count));
      const CoreTypeEntry& entry = index_at(target->core_types, alias->index, "core type", offset);
      if (entry.module) fail(offset, "a module type cannot alias a module type");
      types.push_back(entry);
    } else {
      const auto& exported = std::get<binary::CoreExportDecl>(decl);
      for (const auto& e : out->exports)
        if (e.name == exported.name)
          fail(offset, "export name `" + exported.name + "` already defined");
      CoreExtern type = extern_of(exported.type);
      if (auto why = core_limits_error(type)) fail(offset, *why);
      out->exports.push_back({exported.name, std::move(type)});
    }
  }
  return out;
}

}  // namespace cmhost::validate::detail
