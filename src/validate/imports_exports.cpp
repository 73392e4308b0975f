// Validation of imports and exports: extern types, names (unique, well
// formed) and the rule that what an export shows is externally named.
#include "validator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmhost/error.hpp"

namespace cmhost::validate::detail {

using binary::Sort;

namespace {

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

const char* extern_kind(ExternKind kind) { return kind == ExternKind::Import ? "import" : "export"; }

}  // namespace

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
      const CoreTypeEntry& entry = index_at(s.core_types, t.index, "core type", offset);
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

}  // namespace cmhost::validate::detail
