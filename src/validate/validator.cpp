// Validation of components: every definition is replayed in binary order
// into the static index spaces of its Scope, type-checked, and, when it
// creates something at run time, recorded as a plan step.
#include "validator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmhost/error.hpp"

namespace cmhost::validate {
namespace detail {

using binary::Sort;

void fail(size_t offset, const std::string& reason) {
  throw Error(ErrorKind::Validate, "at byte " + hex(offset) + ": " + reason);
}

namespace {

abi::TypeRef primitive(binary::PrimValType t) {
  using P = binary::PrimValType;
  switch (t) {
    case P::Bool: return abi::Type::bool_();
    case P::S8: return abi::Type::s8();
    case P::U8: return abi::Type::u8();
    case P::S16: return abi::Type::s16();
    case P::U16: return abi::Type::u16();
    case P::S32: return abi::Type::s32();
    case P::U32: return abi::Type::u32();
    case P::S64: return abi::Type::s64();
    case P::U64: return abi::Type::u64();
    case P::F32: return abi::Type::f32();
    case P::F64: return abi::Type::f64();
    case P::Char: return abi::Type::char_();
    case P::String: return abi::Type::string();
    case P::ErrorContext: return abi::Type::error_context();
  }
  return abi::Type::bool_();
}

// Records, variants, enums and flags need an externally visible name; each
// import or export of one introduces a distinct copy that carries the name.
bool is_nominal(const abi::Type& t) {
  return t.kind() == abi::TypeKind::Record || t.kind() == abi::TypeKind::Variant ||
         t.kind() == abi::TypeKind::Enum || t.kind() == abi::TypeKind::Flags;
}

// A type import or export gets a value object of its own when the uses of
// its name could not be told from other uses otherwise: nominal types (see
// above) and primitive types, which abi::Type shares one object per kind of.
// Other types are built anew at each definition already.
abi::TypeRef named_copy(const abi::TypeRef& t) {
  if (!is_nominal(*t) && t->kind() > abi::TypeKind::String &&
      t->kind() != abi::TypeKind::ErrorContext)
    return t;
  return std::make_shared<const abi::Type>(*t);  // the same type (and layout), another object
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Labels of records, variants, flags, enums and parameters: non-empty kebab
// case, strongly-unique (case-insensitively).
void check_labels(const std::vector<std::string>& labels, const char* what, const char* short_what,
                  size_t offset) {
  std::unordered_map<std::string, const std::string*> seen;
  for (const auto& label : labels) {
    if (label.empty()) fail(offset, std::string(what) + " name cannot be empty");
    if (!binary::is_label(label))
      fail(offset, std::string(what) + " name `" + label + "` is not in kebab case");
    auto [it, inserted] = seen.emplace(lower(label), &label);
    if (!inserted)
      fail(offset, std::string(what) + " name `" + label + "` conflicts with previous " +
                       short_what + " name `" + *it->second + "`");
  }
}

// Builds an abi::Type, turning its construction errors (size limits) into
// validation errors at `offset`.
template <typename Build>
abi::TypeRef build(size_t offset, Build build) {
  try {
    return build();
  } catch (const Error& e) {
    fail(offset, e.what());
  }
}

[[noreturn]] void out_of_bounds(size_t offset, const char* sort, uint32_t index) {
  fail(offset, std::string("unknown ") + sort + " " + std::to_string(index) + ": " + sort +
                   " index out of bounds");
}

template <typename Vector>
const auto& at(const Vector& v, uint32_t index, const char* sort, size_t offset) {
  if (index >= v.size()) out_of_bounds(offset, sort, index);
  return v[index];
}

const char* extern_kind(ExternKind kind) { return kind == ExternKind::Import ? "import" : "export"; }

}  // namespace

// ---- Components ----

std::shared_ptr<ComponentPlan> Validator::component(const binary::Component& component,
                                                    Scope* parent) {
  auto plan = std::make_shared<ComponentPlan>();
  Scope s;
  s.kind = ScopeKind::Component;
  s.parent = parent;
  s.names = component.names ? &*component.names : nullptr;
  s.plan = plan.get();
  plan->name = s.names && s.names->component_name ? *s.names->component_name : "component";
  for (const auto& d : component.definitions) definition(s, d);
  finish(s, component.bytes.offset + component.bytes.size);
  return plan;
}

void Validator::emit(Scope& s, Step step, size_t offset) {
  s.plan->steps.push_back(std::move(step));
  s.plan->step_offsets.push_back(offset);
}

abi::ResourceTypeRef Validator::new_resource(const std::string& name) {
  auto r = std::make_shared<abi::ResourceType>();
  r->name = name;
  return r;
}

std::string Validator::describe(const Scope& s, Sort sort, uint32_t index) const {
  std::string out = std::string(sort_name(sort)) + " " + std::to_string(index);
  if (s.names) {  // components only: types have index spaces of their own
    auto by_sort = s.names->names.find(sort);
    if (by_sort != s.names->names.end()) {
      auto name = by_sort->second.find(index);
      if (name != by_sort->second.end()) out += " ($" + name->second + ")";
    }
  }
  return out;
}

void Validator::definition(Scope& s, const binary::Definition& d) {
  const size_t offset = d.offset;
  std::visit(
      [&](const auto& item) {
        using T = std::decay_t<decltype(item)>;
        if constexpr (std::is_same_v<T, binary::CustomSection>) {
        } else if constexpr (std::is_same_v<T, binary::CoreModule>) {
          core_module(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::CoreInstance>) {
          core_instance(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::CoreType>) {
          core_type(s, item, offset);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const binary::Component>>) {
          auto plan = component(*item, &s);
          s.components.push_back({std::make_shared<const ComponentType>(plan->type), plan});
          emit(s, step::Component{plan, std::nullopt}, offset);
        } else if constexpr (std::is_same_v<T, binary::Instance>) {
          instance(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Alias>) {
          alias(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Type>) {
          type(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Canon>) {
          canon(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Start>) {
          start(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Import>) {
          import(s, item.name, item.type, offset);
        } else if constexpr (std::is_same_v<T, binary::Export>) {
          export_(s, item, offset);
        } else if constexpr (std::is_same_v<T, binary::Value>) {
          fail(offset, "value definitions (🪙) are not supported");
        }
      },
      d.item);
}

void Validator::finish(Scope& s, size_t offset) {
  for (size_t i = 0; i < s.values.size(); ++i)
    if (!s.value_used[i])
      fail(offset, "value " + std::to_string(i) +
                       " is never used (a value must be used exactly once)");
  // Resource types defined inside (or by instances created inside) cannot
  // appear in the imports; those the exports mention become the component
  // type's defined resources, fresh for every instance.
  ResourceSet free;
  for (const auto& e : s.imports) collect_free_resources(e.desc, free);
  for (const auto& r : s.defined_resources)
    if (free.count(r.get())) fail(offset, "local resource type found in imports");
  free.clear();
  for (const auto& e : s.exports) collect_free_resources(e.desc, free);
  ComponentType& type = s.plan->type;
  type.imports = s.imports;
  type.exports = s.exports;
  type.imported_resources = s.imported_resources;
  for (const auto& r : s.defined_resources)
    if (free.count(r.get())) type.defined_resources.push_back(r);
  for (const auto& t : s.types) s.plan->types.push_back(t.desc);
}

// ---- Core modules, instances and types ----

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
    const CoreModuleType& module = *at(s.core_modules, inst->module, "module", offset).type;
    std::map<std::string, const CoreExports*> args;
    for (const auto& arg : inst->args) {
      const auto& instance = at(s.core_instances, arg.instance, "core instance", offset);
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
      case Sort::CoreFunc: type.func = at(s.core_funcs, e.target.index, "core func", offset); break;
      case Sort::CoreTable: type.table = at(s.core_tables, e.target.index, "table", offset); break;
      case Sort::CoreMemory:
        type.memory = at(s.core_memories, e.target.index, "memory", offset);
        break;
      case Sort::CoreGlobal:
        type.global = at(s.core_globals, e.target.index, "global", offset);
        break;
      case Sort::CoreTag: type.func = at(s.core_tags, e.target.index, "tag", offset); break;
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
    const auto& entry = at(types, index, "type", offset);
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
        types.push_back(at(types, alias->index, "type", offset));
        continue;
      }
      Scope* target = &s;
      for (uint32_t k = 1; k < alias->count && target; ++k) target = target->parent;
      if (!target) fail(offset, "invalid outer alias count of " + std::to_string(alias->count));
      const CoreTypeEntry& entry = at(target->core_types, alias->index, "core type", offset);
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

// ---- Lookups ----

const TypeEntry& Validator::type_at(Scope& s, uint32_t index, size_t offset) {
  return at(s.types, index, "type", offset);
}

const binary::CoreFuncType& Validator::core_func_at(Scope& s, uint32_t index, size_t offset) {
  return at(s.core_funcs, index, "core func", offset);
}

ExternDesc Validator::item(Scope& s, binary::SortIndex target, size_t offset) {
  ExternDesc desc;
  desc.sort = target.sort;
  switch (target.sort) {
    case Sort::CoreModule: desc.module = at(s.core_modules, target.index, "module", offset).type; break;
    case Sort::Func: desc.func = at(s.funcs, target.index, "func", offset); break;
    case Sort::Value:
      desc.value = at(s.values, target.index, "value", offset);
      if (s.value_used[target.index])
        fail(offset, "value " + std::to_string(target.index) + " cannot be used more than once");
      s.value_used[target.index] = true;
      break;
    case Sort::Type: desc = type_at(s, target.index, offset).desc; break;
    case Sort::Component:
      desc.component = at(s.components, target.index, "component", offset).type;
      break;
    case Sort::Instance: desc.instance = at(s.instances, target.index, "instance", offset); break;
    default:
      fail(offset, std::string("a ") + sort_name(target.sort) +
                       " cannot be used here (of the core sorts, only modules)");
  }
  return desc;
}

// ---- Component instances ----

void Validator::instance(Scope& s, const binary::Instance& i, size_t offset) {
  if (auto inst = std::get_if<binary::Instantiate>(&i.expr)) {
    const ComponentType& type = *at(s.components, inst->component, "component", offset).type;
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
    const auto& instance = at(s.instances, e->instance, "instance", offset);
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
    const auto& exports = *at(s.core_instances, e->instance, "core instance", offset);
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
      const ModuleEntry entry = at(target->core_modules, outer.index, "module", offset);
      s.core_modules.push_back(entry);
      if (entry.plan_module)
        emit(s, step::CoreModule{*entry.plan_module, std::nullopt}, offset);
      else  // known only at run time: an import of the enclosing component
        emit(s, step::CoreModule{0, outer}, offset);
      break;
    }
    case Sort::Component: {
      const ComponentEntry entry = at(target->components, outer.index, "component", offset);
      s.components.push_back(entry);
      if (entry.plan)
        emit(s, step::Component{entry.plan, std::nullopt}, offset);
      else
        emit(s, step::Component{nullptr, outer}, offset);
      break;
    }
    case Sort::CoreType:
      s.core_types.push_back(at(target->core_types, outer.index, "core type", offset));
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

// ---- Types ----

namespace {
constexpr uint32_t kMaxTypeDepth = 100;
constexpr uint32_t kMaxTypeSize = 1000000;
}  // namespace

Validator::TypeInfo Validator::type_info(const abi::TypeRef& type) {
  if (!type) return {0, 0};
  if (auto it = type_infos_.find(type.get()); it != type_infos_.end()) return it->second.second;
  TypeInfo info;
  auto add = [&](const abi::TypeRef& child) {
    if (!child) return;
    const TypeInfo c = type_info(child);
    info.size = std::min(kMaxTypeSize, info.size + c.size);
    info.depth = std::max(info.depth, c.depth + 1);
  };
  if (type->kind() == abi::TypeKind::Map) {
    add(type->element()->fields()[0].type);
    add(type->element()->fields()[1].type);
  } else {
    add(type->element());
    for (const auto& f : type->fields()) add(f.type);
    for (const auto& c : type->cases()) add(c.type);
  }
  type_infos_.emplace(type.get(), std::make_pair(type, info));
  return info;
}

void Validator::check_type_limits(TypeInfo info, size_t offset) const {
  if (info.depth > kMaxTypeDepth) fail(offset, "type nesting is too deep");
  if (info.size >= kMaxTypeSize)
    fail(offset, "effective type size exceeds the limit of " + std::to_string(kMaxTypeSize));
}

abi::TypeRef Validator::val_type(Scope& s, const binary::ValType& t, size_t offset) {
  if (auto p = std::get_if<binary::PrimValType>(&t)) return primitive(*p);
  const uint32_t index = std::get<binary::TypeIndex>(t).index;
  const TypeEntry& entry = type_at(s, index, offset);
  if (!entry.desc.value) fail(offset, "type index " + std::to_string(index) + " is not a defined type");
  return entry.desc.value;
}

std::shared_ptr<const FuncType> Validator::func_type(Scope& s, const binary::FuncType& f,
                                                     size_t offset) {
  auto out = std::make_shared<FuncType>();
  out->async = f.async;
  for (const auto& p : f.params) out->param_names.push_back(p.label);
  check_labels(out->param_names, "function parameter", "parameter", offset);
  for (const auto& p : f.params) out->params.push_back(val_type(s, p.type, offset));
  if (f.result) {
    out->result = val_type(s, *f.result, offset);
    if (contains_borrow(*out->result))
      fail(offset, "function result cannot contain a `borrow` type");
  }
  TypeInfo info;
  for (const auto& p : out->params) {
    const TypeInfo t = type_info(p);
    info.size = std::min(kMaxTypeSize, info.size + t.size);
    info.depth = std::max(info.depth, t.depth + 1);
  }
  if (out->result) {
    const TypeInfo t = type_info(out->result);
    info.size = std::min(kMaxTypeSize, info.size + t.size);
    info.depth = std::max(info.depth, t.depth + 1);
  }
  check_type_limits(info, offset);
  return out;
}

void Validator::type(Scope& s, const binary::Type& t, size_t offset) {
  s.types.push_back(define_type(s, t, offset));
}

TypeEntry Validator::define_type(Scope& s, const binary::Type& t, size_t offset) {
  TypeEntry entry;
  entry.desc.sort = Sort::Type;
  ExternDesc& desc = entry.desc;
  auto val = [&](const binary::ValType& v) { return val_type(s, v, offset); };
  auto opt_val = [&](const std::optional<binary::ValType>& v) {
    return v ? val_type(s, *v, offset) : abi::TypeRef();
  };
  auto resource_at = [&](uint32_t index) -> const TypeEntry& {
    const TypeEntry& r = type_at(s, index, offset);
    if (!r.desc.resource) fail(offset, "type index " + std::to_string(index) + " is not a resource type");
    return r;
  };
  std::visit(
      [&](const auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, binary::PrimValType>) {
          desc.value = primitive(d);
        } else if constexpr (std::is_same_v<T, binary::RecordType>) {
          if (d.fields.empty()) fail(offset, "record type must have at least one field");
          std::vector<std::string> labels;
          for (const auto& f : d.fields) labels.push_back(f.label);
          check_labels(labels, "record field", "field", offset);
          std::vector<abi::Field> fields;
          for (const auto& f : d.fields) fields.push_back({f.label, val(f.type)});
          desc.value = build(offset, [&] { return abi::Type::record(std::move(fields)); });
        } else if constexpr (std::is_same_v<T, binary::VariantType>) {
          if (d.cases.empty()) fail(offset, "variant type must have at least one case");
          std::vector<std::string> labels;
          for (const auto& c : d.cases) labels.push_back(c.label);
          check_labels(labels, "variant case", "case", offset);
          std::vector<abi::Case> cases;
          for (const auto& c : d.cases) cases.push_back({c.label, opt_val(c.type)});
          desc.value = build(offset, [&] { return abi::Type::variant(std::move(cases)); });
        } else if constexpr (std::is_same_v<T, binary::ListType>) {
          abi::TypeRef element = val(d.element);
          if (d.length) {
            if (*d.length == 0) fail(offset, "fixed-length lists must have more than zero elements");
            desc.value = build(offset, [&] { return abi::Type::fixed_list(element, *d.length); });
          } else {
            desc.value = build(offset, [&] { return abi::Type::list(element); });
          }
        } else if constexpr (std::is_same_v<T, binary::TupleType>) {
          if (d.types.empty()) fail(offset, "tuple type must have at least one type");
          std::vector<abi::TypeRef> types;
          for (const auto& e : d.types) types.push_back(val(e));
          desc.value = build(offset, [&] { return abi::Type::tuple(std::move(types)); });
        } else if constexpr (std::is_same_v<T, binary::FlagsType>) {
          if (d.labels.empty()) fail(offset, "flags must have at least one entry");
          if (d.labels.size() > 32) fail(offset, "cannot have more than 32 flags");
          check_labels(d.labels, "flag", "flag", offset);
          desc.value = build(offset, [&] { return abi::Type::flags(d.labels); });
        } else if constexpr (std::is_same_v<T, binary::EnumType>) {
          if (d.labels.empty()) fail(offset, "enum type must have at least one variant");
          check_labels(d.labels, "enum tag", "tag", offset);
          desc.value = build(offset, [&] { return abi::Type::enum_(d.labels); });
        } else if constexpr (std::is_same_v<T, binary::OptionType>) {
          abi::TypeRef payload = val(d.type);
          desc.value = build(offset, [&] { return abi::Type::option(payload); });
        } else if constexpr (std::is_same_v<T, binary::ResultType>) {
          abi::TypeRef ok = opt_val(d.ok), error = opt_val(d.error);
          desc.value = build(offset, [&] { return abi::Type::result(ok, error); });
        } else if constexpr (std::is_same_v<T, binary::OwnType> ||
                             std::is_same_v<T, binary::BorrowType>) {
          const TypeEntry& r = resource_at(d.resource);
          desc.value = std::is_same_v<T, binary::OwnType> ? abi::Type::own(r.desc.resource)
                                                          : abi::Type::borrow(r.desc.resource);
          handle_names_.set(desc.value, r.token, r.desc.name_id);
        } else if constexpr (std::is_same_v<T, binary::StreamType> ||
                             std::is_same_v<T, binary::FutureType>) {
          constexpr bool is_stream = std::is_same_v<T, binary::StreamType>;
          abi::TypeRef element = opt_val(d.element);
          if (element && contains_borrow(*element))
            fail(offset, std::string(is_stream ? "stream" : "future") +
                             " element types cannot contain a `borrow` type");
          desc.value = build(offset, [&] { return is_stream ? abi::Type::stream(element) : abi::Type::future(element); });
        } else if constexpr (std::is_same_v<T, binary::MapType>) {
          abi::TypeRef key = val(d.key), value = val(d.value);
          switch (key->kind()) {
            case abi::TypeKind::F32:
            case abi::TypeKind::F64:
            case abi::TypeKind::ErrorContext: break;
            default:
              if (key->kind() <= abi::TypeKind::String) {
                desc.value = build(offset, [&] { return abi::Type::map(key, value); });
                return;
              }
          }
          fail(offset, "map key type must be a boolean, integer, char or string, not " +
                           detail::to_string(*key));
        } else if constexpr (std::is_same_v<T, binary::FuncType>) {
          desc.func = func_type(s, d, offset);
        } else if constexpr (std::is_same_v<T, binary::ComponentType>) {
          desc.component = component_type(s, d, offset);
        } else if constexpr (std::is_same_v<T, binary::InstanceType>) {
          desc.instance = instance_type(s, d, offset);
        } else if constexpr (std::is_same_v<T, binary::ResourceType>) {
          if (s.kind != ScopeKind::Component)
            fail(offset, "resources can only be defined within a concrete component");
          const auto* num = std::get_if<binary::CoreNumType>(&d.rep);
          if (!num || (*num != binary::CoreNumType::I32 && *num != binary::CoreNumType::I64))
            fail(offset, "resources can only be represented by `i32` or `i64`");
          if (d.dtor) {
            const binary::CoreFuncType& dtor = core_func_at(s, *d.dtor, offset);
            binary::CoreFuncType want;
            want.params = {d.rep};
            if (!same_core_func_type(dtor, want))
              fail(offset, "wrong signature for a destructor: expected " + to_string(want) +
                               ", found " + to_string(dtor));
          }
          std::string name = "resource";
          const uint32_t index = static_cast<uint32_t>(s.types.size());
          if (s.names)
            if (auto by_sort = s.names->names.find(Sort::Type); by_sort != s.names->names.end())
              if (auto n = by_sort->second.find(index); n != by_sort->second.end()) name = n->second;
          auto resource = std::make_shared<abi::ResourceType>();
          resource->name = name;
          unnamed_[resource.get()] = resource;
          desc.resource = resource;
          entry.token = new_token();
          s.local_resources.emplace(resource.get(), d.rep);
          s.defined_resources.push_back(resource);
          emit(s, step::ResourceDefinition{resource, d.rep, d.dtor}, offset);
        }
      },
      t.def);
  if (desc.value) check_type_limits(type_info(desc.value), offset);
  return entry;
}

std::shared_ptr<const ComponentType> Validator::component_type(Scope& s,
                                                               const binary::ComponentType& t,
                                                               size_t offset) {
  Scope inner;
  inner.kind = ScopeKind::ComponentType;
  inner.parent = &s;
  declarators(inner, t.decls);
  ResourceSet free;
  for (const auto& e : inner.imports) collect_free_resources(e.desc, free);
  for (const auto& r : inner.defined_resources)
    if (free.count(r.get())) fail(offset, "local resource type found in imports");
  free.clear();
  for (const auto& e : inner.exports) collect_free_resources(e.desc, free);
  auto out = std::make_shared<ComponentType>();
  out->imports = std::move(inner.imports);
  out->exports = std::move(inner.exports);
  out->imported_resources = std::move(inner.imported_resources);
  for (const auto& r : inner.defined_resources)
    if (free.count(r.get())) out->defined_resources.push_back(r);
  return out;
}

std::shared_ptr<const InstanceType> Validator::instance_type(Scope& s,
                                                             const binary::InstanceType& t,
                                                             size_t) {
  Scope inner;
  inner.kind = ScopeKind::InstanceType;
  inner.parent = &s;
  declarators(inner, t.decls);
  auto out = std::make_shared<InstanceType>();
  out->exports = std::move(inner.exports);
  out->defined_resources = std::move(inner.defined_resources);
  return out;
}

void Validator::declarators(Scope& inner, const std::vector<binary::Declarator>& decls) {
  for (const auto& decl : decls) {
    const size_t offset = decl.offset;
    std::visit(
        [&](const auto& d) {
          using T = std::decay_t<decltype(d)>;
          if constexpr (std::is_same_v<T, binary::CoreType>) {
            core_type(inner, d, offset);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const binary::Type>>) {
            type(inner, *d, offset);
          } else if constexpr (std::is_same_v<T, binary::Alias>) {
            alias(inner, d, offset);
          } else if constexpr (std::is_same_v<T, binary::ImportDecl>) {
            if (inner.kind != ScopeKind::ComponentType)
              fail(offset, "an instance type cannot declare imports");
            import(inner, d.name, d.type, offset);
          } else {
            export_decl(inner, d.name, d.type, offset);
          }
        },
        decl.item);
  }
}

// ---- Imports and exports ----

ExternDesc Validator::extern_type(Scope& s, const binary::ExternType& t, size_t offset,
                                  const std::string& name) {
  ExternDesc desc;
  desc.sort = t.sort;
  auto type_of = [&](const char* what) -> const ExternDesc& {
    const TypeEntry& entry = type_at(s, t.index, offset);
    const ExternDesc& d = entry.desc;
    if ((t.sort == Sort::Func && !d.func) || (t.sort == Sort::Component && !d.component) ||
        (t.sort == Sort::Instance && !d.instance))
      fail(offset, "type index " + std::to_string(t.index) + " is not " + what);
    return d;
  };
  switch (t.sort) {
    case Sort::CoreModule: {
      const CoreTypeEntry& entry = at(s.core_types, t.index, "core type", offset);
      if (!entry.module)
        fail(offset, "core type index " + std::to_string(t.index) + " is not a module type");
      desc.module = entry.module;
      break;
    }
    case Sort::Func: desc.func = type_of("a function type").func; break;
    case Sort::Component: desc.component = type_of("a component type").component; break;
    case Sort::Instance: desc.instance = type_of("an instance type").instance; break;
    case Sort::Value:
      if (t.value_type) {
        desc.value = val_type(s, *t.value_type, offset);
      } else {
        desc = item(s, {Sort::Value, t.index}, offset);
      }
      break;
    case Sort::Type:
      if (t.sub_resource) {
        desc.resource = new_resource(name);  // a fresh abstract type
      } else {
        desc = type_at(s, t.index, offset).desc;
      }
      break;
    default: fail(offset, std::string("a ") + sort_name(t.sort) + " cannot be imported or exported");
  }
  return desc;
}

void Validator::import(Scope& s, const binary::ExternName& name, const binary::ExternType& type,
                       size_t offset) {
  ExternDesc desc = extern_type(s, type, offset, name.name);
  if (type.sort == Sort::Type && type.sub_resource) s.imported_resources.push_back(desc.resource);
  add_extern(s, ExternKind::Import, name, std::move(desc), offset);
  if (s.kind == ScopeKind::Component)
    emit(s, step::Import{name.name, s.imports.back().desc}, offset);
}

void Validator::export_decl(Scope& s, const binary::ExternName& name, const binary::ExternType& type,
                            size_t offset) {
  ExternDesc desc = extern_type(s, type, offset, name.name);
  if (type.sort == Sort::Type && type.sub_resource) s.defined_resources.push_back(desc.resource);
  add_extern(s, ExternKind::Export, name, std::move(desc), offset);
}

void Validator::export_(Scope& s, const binary::Export& e, size_t offset) {
  ExternDesc desc = item(s, e.target, offset);
  abi::ResourceTypeRef hidden;  // the resource a (sub resource) ascription hides
  if (e.type) {
    if (e.type->sort == Sort::Type && e.type->sub_resource) {
      // Outside, the export is a resource type of its own, distinct from
      // every other export (Explainer "Type Checking"); inside, its index
      // still stands for the exported resource.
      if (desc.sort != Sort::Type || !desc.resource)
        fail(offset, "ascribed type of export is not compatible with item's type: expected "
                     "resource, found " + describe_kind(desc));
      hidden = desc.resource;
      desc.resource = new_resource(e.name.name);
      desc.name_id = 0;  // a new type, not an alias of the item
      s.defined_resources.push_back(desc.resource);
    } else {
      ExternDesc ascribed = extern_type(s, *e.type, offset, e.name.name);
      if (auto why = extern_mismatch(desc, ascribed))
        fail(offset, "ascribed type of export is not compatible with item's type: " + *why);
      desc = std::move(ascribed);
    }
  }
  if (desc.sort == Sort::Type && desc.resource) {
    // A defined resource type takes the name it is first exported under.
    if (auto it = unnamed_.find(desc.resource.get()); it != unnamed_.end()) {
      it->second->name = e.name.name;
      unnamed_.erase(it);
    }
  }
  add_extern(s, ExternKind::Export, e.name, std::move(desc), offset);
  if (hidden) s.types.back().desc.resource = hidden;
  emit(s, step::Export{e.name.name, e.target, s.exports.back().desc}, offset);
}

void Validator::add_extern(Scope& s, ExternKind kind, const binary::ExternName& name,
                           ExternDesc desc, size_t offset) {
  uint64_t token = 0;
  switch (desc.sort) {
    case Sort::Instance:
      // An instance of an instance type that declares abstract resource
      // types gets fresh ones: imported ones are parameters of this scope,
      // exported ones (in types) are defined by it.
      if (!desc.instance->defined_resources.empty()) {
        ResourceMap map;
        std::vector<abi::ResourceTypeRef> fresh;
        freshen(desc.instance->defined_resources, map, &fresh);
        auto instance = std::make_shared<InstanceType>(*Substitution(map, &handle_names_).apply(desc.instance));
        instance->defined_resources.clear();
        desc.instance = std::move(instance);
        auto& into = kind == ExternKind::Import ? s.imported_resources : s.defined_resources;
        into.insert(into.end(), fresh.begin(), fresh.end());
      }
      s.instances.push_back(desc.instance);
      break;
    case Sort::Type:
      token = new_token();
      desc.alias_of = desc.name_id;
      desc.name_id = token;
      if (desc.value) desc.value = named_copy(desc.value);
      s.types.push_back({desc, token});
      break;
    case Sort::Func: s.funcs.push_back(desc.func); break;
    case Sort::Value:
      s.values.push_back(desc.value);
      s.value_used.push_back(kind == ExternKind::Export);
      break;
    case Sort::Component: s.components.push_back({desc.component, nullptr}); break;
    case Sort::CoreModule: s.core_modules.push_back({desc.module, std::nullopt}); break;
    default: break;
  }
  if (!check_and_register(s, kind, desc, token))
    fail(offset, describe_kind(desc) + " not valid to be used as " + extern_kind(kind) +
                     " `" + name.name + "`: a type it uses has no name visible outside");
  (kind == ExternKind::Import ? s.import_names : s.export_names)
      .add(name, desc, token, handle_names_, offset);
  (kind == ExternKind::Import ? s.imports : s.exports).push_back({name.name, desc});
}

// ---- External visibility ----

bool Validator::named(const abi::TypeRef& type, const NamedTypes& set) const {
  if (!type) return true;
  const abi::Type& t = *type;
  switch (t.kind()) {
    case abi::TypeKind::Record:
    case abi::TypeKind::Variant:
    case abi::TypeKind::Enum:
    case abi::TypeKind::Flags: return set.types.count(&t) > 0;
    case abi::TypeKind::Own:
    case abi::TypeKind::Borrow:
      return set.tokens.count(handle_names_.get(&t)) || set.resources.count(t.resource().get());
    case abi::TypeKind::Tuple:
      return std::all_of(t.fields().begin(), t.fields().end(),
                         [&](const abi::Field& f) { return named(f.type, set); });
    case abi::TypeKind::Option:
    case abi::TypeKind::Result:
      return std::all_of(t.cases().begin(), t.cases().end(),
                         [&](const abi::Case& c) { return named(c.type, set); });
    case abi::TypeKind::List:
    case abi::TypeKind::FixedList:
    case abi::TypeKind::Stream:
    case abi::TypeKind::Future: return named(t.element(), set);
    case abi::TypeKind::Map:
      return named(t.element()->fields()[0].type, set) && named(t.element()->fields()[1].type, set);
    default: return true;
  }
}

bool Validator::contents_named(const ExternDesc& desc, const NamedTypes& set) const {
  auto func_named = [&](const FuncType& f) {
    return std::all_of(f.params.begin(), f.params.end(),
                       [&](const abi::TypeRef& p) { return named(p, set); }) &&
           named(f.result, set);
  };
  switch (desc.sort) {
    case Sort::Func: return func_named(*desc.func);
    case Sort::Value: return named(desc.value, set);
    case Sort::Instance:
      return std::all_of(desc.instance->exports.begin(), desc.instance->exports.end(),
                         [&](const NamedExtern& e) { return contents_named(e.desc, set); });
    case Sort::Type:
      if (desc.func) return func_named(*desc.func);
      if (desc.instance) {
        ExternDesc as_instance;
        as_instance.sort = Sort::Instance;
        as_instance.instance = desc.instance;
        return contents_named(as_instance, set);
      }
      if (desc.value) {
        // The type itself gets its name from this import/export; what it
        // is made of must be named already.
        const abi::Type& t = *desc.value;
        if (t.kind() == abi::TypeKind::Own || t.kind() == abi::TypeKind::Borrow)
          return named(desc.value, set);
        if (t.element() && !named(t.element(), set)) return false;
        for (const auto& f : t.fields())
          if (!named(f.type, set)) return false;
        for (const auto& c : t.cases())
          if (!named(c.type, set)) return false;
      }
      return true;
    default: return true;  // components and modules are self-contained
  }
}

bool Validator::check_and_register(Scope& s, ExternKind kind, const ExternDesc& desc,
                                   uint64_t token) {
  if (s.kind == ScopeKind::InstanceType) return true;
  NamedTypes& set = kind == ExternKind::Import ? s.imported_named : s.exported_named;
  if (desc.sort == Sort::Instance) {
    // Export by export: the types an instance exports name them for its
    // later exports.
    for (const auto& e : desc.instance->exports)
      if (!check_and_register(s, kind, e.desc, 0)) return false;
    return true;
  }
  if (!contents_named(desc, set)) return false;
  // Imported names may be used by exports too; exported ones only by exports.
  auto add = [&](auto insert) {
    insert(s.exported_named);
    if (kind == ExternKind::Import) insert(s.imported_named);
  };
  if (desc.sort == Sort::Type) {
    if (desc.value && is_nominal(*desc.value))
      add([&](NamedTypes& n) { n.types.insert(desc.value.get()); });
    if (desc.resource) {
      if (token)
        add([&](NamedTypes& n) { n.tokens.insert(token); });
      else
        add([&](NamedTypes& n) { n.resources.insert(desc.resource.get()); });
    }
  }
  return true;
}

// ---- Start ----

void Validator::start(Scope& s, const binary::Start& st, size_t offset) {
  const FuncType& f = *at(s.funcs, st.func, "func", offset);
  if (f.params.size() != st.args.size())
    fail(offset, "component start function requires " + std::to_string(f.params.size()) +
                     " arguments but was given " + std::to_string(st.args.size()));
  if (st.result_count != (f.result ? 1u : 0u))
    fail(offset, "component start function has a result count of " +
                     std::to_string(st.result_count) + " but the function type has " +
                     (f.result ? "1" : "0"));
  for (size_t i = 0; i < st.args.size(); ++i) {
    ExternDesc arg = item(s, {Sort::Value, st.args[i]}, offset);
    if (auto why = value_mismatch(*arg.value, *f.params[i]))
      fail(offset, "value type mismatch for component start function argument " +
                       std::to_string(i) + ": " + *why);
  }
  if (f.result) {
    s.values.push_back(f.result);
    s.value_used.push_back(false);
  }
  emit(s, step::Start{st.func, st.args, st.result_count}, offset);
}

}  // namespace detail

Plan validate_component(const binary::Component& component, std::span<const uint8_t> bytes) {
  detail::Validator validator(bytes);
  Plan plan;
  plan.root = validator.component(component, nullptr);
  plan.modules = validator.take_modules();
  plan.handle_names = validator.handle_names().name_ids();
  return plan;
}

}  // namespace cmhost::validate
