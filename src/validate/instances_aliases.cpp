// Validation of component instances (instantiating a component with its
// arguments, or bundling exports) and of aliases of exports and outer items.
#include "validator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmhost/error.hpp"

namespace cmhost::validate::detail {

using binary::Sort;

void Validator::instance(Scope& s, const binary::Instance& i, size_t offset) {
  if (auto inst = std::get_if<binary::Instantiate>(&i.expr)) {
    const ComponentType& type = *index_at(s.components, inst->component, "component", offset).type;
    std::map<std::string, ExternDesc> args;
    step::Instantiate out{inst->component, {}, nullptr};
    for (const auto& arg : inst->args) {
      ExternDesc desc = item(s, arg.target, offset);
      if (!args.emplace(arg.name, std::move(desc)).second)
        fail(offset, "instantiation argument `" + arg.name + "` conflicts with previous argument `" +
                         arg.name + "`");
      out.args.emplace_back(arg.name, arg.target);
    }
    // The arguments supply the component's imported resource types, which
    // the import types (and then the export types) are specialized to.
    ResourceMap map;
    for (const auto& import : type.imports)
      if (args.find(import.name) == args.end())
        fail(offset, "missing import named `" + import.name + "` when instantiating " +
                         describe(s, Sort::Component, inst->component));
    if (auto mismatch = detail::instantiation_mismatch(type, args, map, &handle_names_))
      fail(offset, "type mismatch for import `" + mismatch->import + "` of " +
                       describe(s, Sort::Component, inst->component) + ": " + mismatch->why);
    // Each instance gets fresh resource types for those the component
    // defines, and the types it imported are the arguments' own (which
    // matters for their names: external visibility).
    std::vector<abi::ResourceTypeRef> fresh;
    freshen(type.defined_resources, map, &fresh);
    TypeMap renamed;
    NameMap renamed_names;
    for (const auto& import : type.imports)
      bind_types(args.at(import.name), import.desc, renamed, renamed_names);
    Substitution subst(map, &handle_names_, &renamed, &renamed_names);
    auto instance = std::make_shared<InstanceType>();
    for (const auto& e : type.exports) instance->exports.push_back({e.name, subst.apply(e.desc)});
    s.defined_resources.insert(s.defined_resources.end(), fresh.begin(), fresh.end());
    out.type = instance;
    s.instances.push_back(std::move(instance));
    emit(s, std::move(out), offset);
    return;
  }
  // A bag of exports: names follow the export rules, with no resource names.
  NameScope names("export");
  auto instance = std::make_shared<InstanceType>();
  step::InlineInstance out;
  for (const auto& e : std::get<binary::InlineExports>(i.expr).exports) {
    ExternDesc desc = item(s, e.target, offset);
    if (desc.sort == Sort::Type) {  // a name of its own, as an export declares
      desc.alias_of = desc.name_id;
      desc.name_id = new_token();
    }
    names.add(e.name, desc, 0, handle_names_, offset);
    instance->exports.push_back({e.name.name, std::move(desc)});
    out.exports.emplace_back(e.name.name, e.target);
  }
  out.type = instance;
  s.instances.push_back(std::move(instance));
  emit(s, std::move(out), offset);
}

// ---- Aliases ----

void Validator::alias(Scope& s, const binary::Alias& a, size_t offset) {
  const bool in_type = s.kind != ScopeKind::Component;
  if (auto e = std::get_if<binary::AliasExport>(&a.target)) {
    if (in_type && a.sort != Sort::Instance && a.sort != Sort::Type)
      fail(offset, "export aliases in a type may only refer to types or instances");
    if (binary::is_core(a.sort) && a.sort != Sort::CoreModule)
      fail(offset, std::string("a component instance cannot export a ") + sort_name(a.sort));
    const auto& instance = index_at(s.instances, e->instance, "instance", offset);
    const NamedExtern* exported = instance->find(e->name);
    if (!exported)
      fail(offset, describe(s, Sort::Instance, e->instance) + " has no export named `" + e->name + "`");
    const ExternDesc& desc = exported->desc;
    if (desc.sort != a.sort)
      fail(offset, "export `" + e->name + "` for " + describe(s, Sort::Instance, e->instance) +
                       " is not a " + sort_name(a.sort));
    step::AliasExport out{e->instance, e->name, a.sort, nullptr};
    switch (a.sort) {
      case Sort::Func: s.funcs.push_back(desc.func); break;
      case Sort::Value:
        s.values.push_back(desc.value);
        s.value_used.push_back(false);
        break;
      case Sort::Instance: s.instances.push_back(desc.instance); break;
      case Sort::Component: s.components.push_back({desc.component, nullptr}); break;
      case Sort::CoreModule: s.core_modules.push_back({desc.module, std::nullopt}); break;
      case Sort::Type: {
        ExternDesc type = desc;
        type.sort = Sort::Type;
        s.types.push_back({type, new_token()});
        out.resource = desc.resource;
        if (!desc.resource) return;  // nothing to bind at run time
        break;
      }
      default: break;
    }
    if (!in_type) emit(s, std::move(out), offset);
    return;
  }
  if (auto e = std::get_if<binary::AliasCoreExport>(&a.target)) {
    if (in_type) fail(offset, "core export aliases are not allowed in types");
    const auto& exports = *index_at(s.core_instances, e->instance, "core instance", offset);
    auto item = exports.find(e->name);
    if (item == exports.end())
      fail(offset, describe(s, Sort::CoreInstance, e->instance) + " has no export named `" +
                       e->name + "`");
    if (item->second.sort != a.sort)
      fail(offset, "export `" + e->name + "` for " + describe(s, Sort::CoreInstance, e->instance) +
                       " is not a " + std::string(sort_name(a.sort)).substr(5));
    const CoreExtern& type = item->second;
    switch (a.sort) {
      case Sort::CoreFunc: s.core_funcs.push_back(type.func); break;
      case Sort::CoreTable: s.core_tables.push_back(type.table); break;
      case Sort::CoreMemory: s.core_memories.push_back(type.memory); break;
      case Sort::CoreGlobal: s.core_globals.push_back(type.global); break;
      case Sort::CoreTag: s.core_tags.push_back(type.func); break;
      default: fail(offset, std::string("cannot alias a core instance's ") + sort_name(a.sort));
    }
    emit(s, step::CoreAliasExport{e->instance, e->name, a.sort}, offset);
    return;
  }
  const auto& outer = std::get<binary::AliasOuter>(a.target);
  if (in_type && a.sort != Sort::CoreType && a.sort != Sort::Type)
    fail(offset, "outer aliases in a type may only refer to types or core types");
  Scope* target = &s;
  Scope* below = nullptr;  // the scope just inside the target
  for (uint32_t k = 0; k < outer.count; ++k) {
    below = target;
    target = target->parent;
    if (!target) fail(offset, "invalid outer alias count of " + std::to_string(outer.count));
  }
  const bool crosses_component = below && below->kind == ScopeKind::Component;
  switch (a.sort) {
    case Sort::CoreModule: {
      const ModuleEntry entry = index_at(target->core_modules, outer.index, "module", offset);
      s.core_modules.push_back(entry);
      if (entry.plan_module)
        emit(s, step::CoreModule{*entry.plan_module, std::nullopt}, offset);
      else  // known only at run time: an import of the enclosing component
        emit(s, step::CoreModule{0, outer}, offset);
      break;
    }
    case Sort::Component: {
      const ComponentEntry entry = index_at(target->components, outer.index, "component", offset);
      s.components.push_back(entry);
      if (entry.plan)
        emit(s, step::Component{entry.plan, std::nullopt}, offset);
      else
        emit(s, step::Component{nullptr, outer}, offset);
      break;
    }
    case Sort::CoreType:
      s.core_types.push_back(index_at(target->core_types, outer.index, "core type", offset));
      break;
    case Sort::Type: {
      const TypeEntry entry = type_at(*target, outer.index, offset);
      if (crosses_component) {
        // Resource types are generative: a nested component could not be
        // unbundled if it shared its parent's.
        ResourceSet free;
        collect_free_resources(entry.desc, free);
        if (!free.empty())
          fail(offset, "cannot alias outer type which transitively refers to resources not "
                       "defined in the current component");
      }
      s.types.push_back(entry);
      break;
    }
    default: fail(offset, std::string("cannot alias an outer ") + sort_name(a.sort));
  }
}

}  // namespace cmhost::validate::detail
