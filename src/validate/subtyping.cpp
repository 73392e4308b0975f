// Resolved component types: resource substitution, free resource types, and
// the subtype relation used by instantiation, ascription and linking.
#include <algorithm>
#include <set>
#include <utility>

#include "cmhost/error.hpp"
#include "internal.hpp"

const cmhost::NamedExtern* cmhost::InstanceType::find(std::string_view name) const {
  for (const auto& e : exports)
    if (e.name == name) return &e;
  return nullptr;
}

namespace cmhost::validate {

namespace detail {

using abi::TypeKind;
using abi::TypeRef;

// ---- Handle names ----

void HandleNames::set(const TypeRef& handle, uint64_t token, uint64_t name_id) {
  if (handle && (token || name_id)) names_[handle.get()] = {handle, token, name_id};
}

uint64_t HandleNames::get(const abi::Type* handle) const {
  auto it = names_.find(handle);
  return it == names_.end() ? 0 : it->second.token;
}

uint64_t HandleNames::name_id(const abi::Type* handle) const {
  auto it = names_.find(handle);
  return it == names_.end() ? 0 : it->second.name_id;
}

std::unordered_map<const abi::Type*, std::pair<TypeRef, uint64_t>> HandleNames::name_ids() const {
  std::unordered_map<const abi::Type*, std::pair<TypeRef, uint64_t>> out;
  for (const auto& [key, names] : names_)
    if (names.name_id) out.emplace(key, std::make_pair(names.handle, names.name_id));
  return out;
}

// ---- Substitution ----

uint64_t Substitution::rename(uint64_t name_id) const {
  if (!renames_) return name_id;
  auto it = renames_->find(name_id);
  return it == renames_->end() ? name_id : it->second;
}

abi::ResourceTypeRef Substitution::apply(const abi::ResourceTypeRef& resource) const {
  if (!resource) return resource;
  auto it = map_.find(resource.get());
  return it == map_.end() ? resource : it->second;
}

TypeRef Substitution::apply(const TypeRef& type) {
  if (!type) return type;
  if (types_)
    if (auto it = types_->find(type.get()); it != types_->end()) return it->second;
  if (map_.empty() && (!types_ || types_->empty())) return type;
  if (auto it = done_.find(type.get()); it != done_.end())
    return std::static_pointer_cast<const abi::Type>(it->second);
  TypeRef out = type;
  const abi::Type& t = *type;
  switch (t.kind()) {
    case TypeKind::List:
    case TypeKind::FixedList:
    case TypeKind::Stream:
    case TypeKind::Future: {
      TypeRef element = apply(t.element());
      if (element == t.element()) break;
      if (t.kind() == TypeKind::List) out = abi::Type::list(element);
      else if (t.kind() == TypeKind::FixedList) out = abi::Type::fixed_list(element, t.fixed_length());
      else if (t.kind() == TypeKind::Stream) out = abi::Type::stream(element);
      else out = abi::Type::future(element);
      break;
    }
    case TypeKind::Map: {
      const auto& pair = t.element()->fields();
      TypeRef key = apply(pair[0].type), value = apply(pair[1].type);
      if (key != pair[0].type || value != pair[1].type) out = abi::Type::map(key, value);
      break;
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      std::vector<abi::Field> fields(t.fields().begin(), t.fields().end());
      bool changed = false;
      for (auto& f : fields) {
        TypeRef n = apply(f.type);
        changed |= n != f.type;
        f.type = std::move(n);
      }
      if (!changed) break;
      if (t.kind() == TypeKind::Record) {
        out = abi::Type::record(std::move(fields));
      } else {
        std::vector<TypeRef> types;
        for (auto& f : fields) types.push_back(f.type);
        out = abi::Type::tuple(std::move(types));
      }
      break;
    }
    case TypeKind::Variant:
    case TypeKind::Option:
    case TypeKind::Result: {
      std::vector<abi::Case> cases(t.cases().begin(), t.cases().end());
      bool changed = false;
      for (auto& c : cases) {
        TypeRef n = apply(c.type);
        changed |= n != c.type;
        c.type = std::move(n);
      }
      if (!changed) break;
      if (t.kind() == TypeKind::Variant) out = abi::Type::variant(std::move(cases));
      else if (t.kind() == TypeKind::Option) out = abi::Type::option(cases[1].type);
      else out = abi::Type::result(cases[0].type, cases[1].type);
      break;
    }
    case TypeKind::Own:
    case TypeKind::Borrow: {
      auto resource = apply(t.resource());
      if (resource == t.resource()) break;
      out = t.kind() == TypeKind::Own ? abi::Type::own(resource) : abi::Type::borrow(resource);
      if (names_) names_->set(out, names_->get(&t), rename(names_->name_id(&t)));
      break;
    }
    default: break;  // primitives, enums and flags mention no resource
  }
  done_[type.get()] = out;
  return out;
}

std::shared_ptr<const FuncType> Substitution::apply(const std::shared_ptr<const FuncType>& type) {
  if (!type || empty()) return type;
  if (auto it = done_.find(type.get()); it != done_.end())
    return std::static_pointer_cast<const FuncType>(it->second);
  auto copy = std::make_shared<FuncType>(*type);
  bool changed = false;
  for (auto& p : copy->params) {
    TypeRef n = apply(p);
    changed |= n != p;
    p = std::move(n);
  }
  TypeRef result = apply(copy->result);
  changed |= result != copy->result;
  copy->result = std::move(result);
  std::shared_ptr<const FuncType> out = changed ? std::shared_ptr<const FuncType>(copy) : type;
  done_[type.get()] = out;
  return out;
}

namespace {

template <typename Apply>
bool apply_externs(std::vector<NamedExtern>& externs, Apply apply) {
  bool changed = false;
  for (auto& e : externs) {
    ExternDesc n = apply(e.desc);
    changed |= n.module != e.desc.module || n.func != e.desc.func ||
               n.instance != e.desc.instance || n.component != e.desc.component ||
               n.value != e.desc.value || n.resource != e.desc.resource ||
               n.name_id != e.desc.name_id || n.alias_of != e.desc.alias_of;
    e.desc = std::move(n);
  }
  return changed;
}

bool apply_resources(std::vector<abi::ResourceTypeRef>& resources, const Substitution& s) {
  bool changed = false;
  for (auto& r : resources) {
    auto n = s.apply(r);
    changed |= n != r;
    r = std::move(n);
  }
  return changed;
}

}  // namespace

std::shared_ptr<const InstanceType> Substitution::apply(
    const std::shared_ptr<const InstanceType>& type) {
  if (!type || empty()) return type;
  if (auto it = done_.find(type.get()); it != done_.end())
    return std::static_pointer_cast<const InstanceType>(it->second);
  auto copy = std::make_shared<InstanceType>(*type);
  bool changed = apply_externs(copy->exports, [this](const ExternDesc& d) { return apply(d); });
  changed |= apply_resources(copy->defined_resources, *this);
  std::shared_ptr<const InstanceType> out = changed ? std::shared_ptr<const InstanceType>(copy) : type;
  done_[type.get()] = out;
  return out;
}

std::shared_ptr<const ComponentType> Substitution::apply(
    const std::shared_ptr<const ComponentType>& type) {
  if (!type || empty()) return type;
  if (auto it = done_.find(type.get()); it != done_.end())
    return std::static_pointer_cast<const ComponentType>(it->second);
  auto copy = std::make_shared<ComponentType>(*type);
  auto each = [this](const ExternDesc& d) { return apply(d); };
  bool changed = apply_externs(copy->imports, each);
  changed |= apply_externs(copy->exports, each);
  changed |= apply_resources(copy->imported_resources, *this);
  changed |= apply_resources(copy->defined_resources, *this);
  std::shared_ptr<const ComponentType> out =
      changed ? std::shared_ptr<const ComponentType>(copy) : type;
  done_[type.get()] = out;
  return out;
}

ExternDesc Substitution::apply(const ExternDesc& desc) {
  ExternDesc out = desc;
  out.func = apply(desc.func);
  out.instance = apply(desc.instance);
  out.component = apply(desc.component);
  out.value = apply(desc.value);
  out.resource = apply(desc.resource);
  out.name_id = rename(desc.name_id);
  out.alias_of = rename(desc.alias_of);
  return out;
}

void freshen(const std::vector<abi::ResourceTypeRef>& resources, ResourceMap& map,
             std::vector<abi::ResourceTypeRef>* fresh) {
  for (const auto& r : resources) {
    auto copy = std::make_shared<abi::ResourceType>(*r);
    map[r.get()] = copy;
    if (fresh) fresh->push_back(copy);
  }
}

// ---- Free resource types ----

namespace {

struct FreeResources {
  ResourceSet& out;
  std::unordered_set<const void*> seen;

  void type(const TypeRef& t) {
    if (!t || !seen.insert(t.get()).second) return;
    switch (t->kind()) {
      case TypeKind::Own:
      case TypeKind::Borrow: out.insert(t->resource().get()); break;
      default:
        if (t->element()) type(t->element());
        for (const auto& f : t->fields()) type(f.type);
        for (const auto& c : t->cases()) type(c.type);
    }
  }

  // Resource types an instance or component type binds are not free in it.
  void bound(const std::vector<NamedExtern>& a, const std::vector<NamedExtern>& b,
             const std::vector<abi::ResourceTypeRef>& bound1,
             const std::vector<abi::ResourceTypeRef>& bound2) {
    ResourceSet inner;
    FreeResources nested{inner, {}};
    for (const auto& e : a) nested.desc(e.desc);
    for (const auto& e : b) nested.desc(e.desc);
    for (const auto& r : bound1) inner.erase(r.get());
    for (const auto& r : bound2) inner.erase(r.get());
    out.insert(inner.begin(), inner.end());
  }

  void desc(const ExternDesc& d) {
    if (d.resource) out.insert(d.resource.get());
    type(d.value);
    if (d.func && seen.insert(d.func.get()).second) {
      for (const auto& p : d.func->params) type(p);
      type(d.func->result);
    }
    if (d.instance && seen.insert(d.instance.get()).second)
      bound(d.instance->exports, {}, d.instance->defined_resources, {});
    if (d.component && seen.insert(d.component.get()).second)
      bound(d.component->imports, d.component->exports, d.component->imported_resources,
            d.component->defined_resources);
  }
};

}  // namespace

void collect_free_resources(const ExternDesc& desc, ResourceSet& out) {
  FreeResources{out, {}}.desc(desc);
}

void collect_free_resources(const TypeRef& type, ResourceSet& out) {
  FreeResources{out, {}}.type(type);
}

void bind_resources(const ExternDesc& actual, const ExternDesc& expected,
                    const ResourceSet& bindable, ResourceMap& map) {
  if (actual.sort != expected.sort) return;
  if (expected.sort == binary::Sort::Type) {
    if (expected.resource && actual.resource && bindable.count(expected.resource.get()) &&
        !map.count(expected.resource.get()))
      map[expected.resource.get()] = actual.resource;
  } else if (expected.sort == binary::Sort::Instance && expected.instance && actual.instance) {
    for (const auto& e : expected.instance->exports)
      if (const NamedExtern* a = actual.instance->find(e.name))
        bind_resources(a->desc, e.desc, bindable, map);
  }
}

void bind_types(const ExternDesc& actual, const ExternDesc& expected, TypeMap& map,
                NameMap& names) {
  if (actual.sort != expected.sort) return;
  if (expected.sort == binary::Sort::Type) {
    if (expected.value && actual.value && expected.value != actual.value)
      map.emplace(expected.value.get(), actual.value);
    if (expected.name_id && expected.name_id != actual.name_id)
      names.emplace(expected.name_id, actual.name_id);
  } else if (expected.sort == binary::Sort::Instance && expected.instance && actual.instance) {
    for (const auto& e : expected.instance->exports)
      if (const NamedExtern* a = actual.instance->find(e.name))
        bind_types(a->desc, e.desc, map, names);
  }
}

// ---- Subtyping ----

const char* sort_name(binary::Sort sort) { return binary::to_string(sort); }

std::string describe_kind(const ExternDesc& desc) {
  if (desc.sort != binary::Sort::Type) return sort_name(desc.sort);
  if (desc.resource) return "resource";
  if (desc.value) return "defined type";
  if (desc.func) return "func type";
  if (desc.instance) return "instance type";
  if (desc.component) return "component type";
  return "type";
}

namespace {

std::string kind_name(const abi::Type& t) {
  switch (t.kind()) {
    case TypeKind::FixedList: return "fixed-length list";
    default: return abi::to_string(t.kind());
  }
}

class Matcher {
 public:
  std::optional<std::string> value(const abi::Type& a, const abi::Type& b) {
    if (&a == &b || known_equal_.count({&a, &b})) return std::nullopt;
    auto why = compare(a, b);
    if (!why) known_equal_.insert({&a, &b});
    return why;
  }

  std::optional<std::string> value(const TypeRef& a, const TypeRef& b) {
    if (!a || !b) {
      if (!a && !b) return std::nullopt;
      return a ? "expected no type, found one" : "expected a type, found none";
    }
    return value(*a, *b);
  }

  std::optional<std::string> func(const FuncType& a, const FuncType& b) {
    if (a.async != b.async)
      return std::string("expected ") + (b.async ? "async" : "sync") + " function, found " +
             (a.async ? "async" : "sync") + " function";
    if (a.params.size() != b.params.size())
      return "expected " + std::to_string(b.params.size()) + " parameters, found " +
             std::to_string(a.params.size());
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (a.param_names[i] != b.param_names[i])
        return "expected parameter named `" + b.param_names[i] + "`, found `" + a.param_names[i] +
               "`";
      if (auto why = value(a.params[i], b.params[i]))
        return "type mismatch in function parameter `" + a.param_names[i] + "`: " + *why;
    }
    if (a.result && !b.result) return "expected no result, found one";
    if (!a.result && b.result) return "expected a result, found none";
    if (a.result)
      if (auto why = value(*a.result, *b.result)) return "type mismatch with result type: " + *why;
    return std::nullopt;
  }

  std::optional<std::string> instance(const InstanceType& a, const InstanceType& b) {
    // Abstract resources the expected type declares match whatever the
    // actual instance has under the same names.
    ResourceMap map;
    if (!b.defined_resources.empty()) {
      ResourceSet bindable;
      for (const auto& r : b.defined_resources) bindable.insert(r.get());
      for (const auto& e : b.exports)
        if (const NamedExtern* have = a.find(e.name)) bind_resources(have->desc, e.desc, bindable, map);
    }
    Substitution subst(map);
    for (const auto& e : b.exports) {
      const NamedExtern* have = a.find(e.name);
      if (!have) return "missing expected export `" + e.name + "`";
      if (auto why = desc(have->desc, subst.apply(e.desc)))
        return "type mismatch in instance export `" + e.name + "`: " + *why;
    }
    return std::nullopt;
  }

  std::optional<std::string> component(const ComponentType& a, const ComponentType& b) {
    // Whoever holds a `b` supplies b's imports to `a`: each import of `a`
    // must be satisfied by b's import of that name ...
    ResourceSet a_imported;
    for (const auto& r : a.imported_resources) a_imported.insert(r.get());
    ResourceMap imports_map;
    for (const auto& want : a.imports)
      if (const NamedExtern* have = find(b.imports, want.name))
        bind_resources(have->desc, want.desc, a_imported, imports_map);
    Substitution imports_subst(imports_map);
    for (const auto& want : a.imports) {
      const NamedExtern* have = find(b.imports, want.name);
      if (!have) return "missing expected import `" + want.name + "`";
      if (auto why = desc(have->desc, imports_subst.apply(want.desc)))
        return "type mismatch in import `" + want.name + "`: " + *why;
    }
    // ... and a's exports, in terms of b's imports, must satisfy b's exports.
    std::vector<NamedExtern> exports = a.exports;
    for (auto& e : exports) e.desc = imports_subst.apply(e.desc);
    ResourceSet b_defined;
    for (const auto& r : b.defined_resources) b_defined.insert(r.get());
    ResourceMap exports_map;
    for (const auto& want : b.exports)
      if (const NamedExtern* have = find(exports, want.name))
        bind_resources(have->desc, want.desc, b_defined, exports_map);
    Substitution exports_subst(exports_map);
    for (const auto& want : b.exports) {
      const NamedExtern* have = find(exports, want.name);
      if (!have) return "missing expected export `" + want.name + "`";
      if (auto why = desc(have->desc, exports_subst.apply(want.desc)))
        return "type mismatch in export `" + want.name + "`: " + *why;
    }
    return std::nullopt;
  }

  std::optional<std::string> desc(const ExternDesc& a, const ExternDesc& b) {
    if (a.sort != b.sort)
      return std::string("expected ") + sort_name(b.sort) + ", found " + sort_name(a.sort);
    switch (b.sort) {
      case binary::Sort::CoreModule: return core_module_mismatch(*a.module, *b.module);
      case binary::Sort::Func: return func(*a.func, *b.func);
      case binary::Sort::Value: return value(a.value, b.value);
      case binary::Sort::Instance: return instance(*a.instance, *b.instance);
      case binary::Sort::Component: return component(*a.component, *b.component);
      case binary::Sort::Type: return type(a, b);
      default: return std::string("unexpected sort ") + sort_name(b.sort);
    }
  }

 private:
  static const NamedExtern* find(const std::vector<NamedExtern>& list, const std::string& name) {
    for (const auto& e : list)
      if (e.name == name) return &e;
    return nullptr;
  }

  std::optional<std::string> type(const ExternDesc& a, const ExternDesc& b) {
    const std::string want = describe_kind(b), have = describe_kind(a);
    if (want != have) return "expected " + want + ", found " + have;
    if (b.resource) {
      if (a.resource != b.resource)
        return "resource types are not the same (" + a.resource->name + " vs. " +
               b.resource->name + ")";
      return std::nullopt;
    }
    if (b.value) return value(*a.value, *b.value);
    if (b.func) return func(*a.func, *b.func);
    if (b.instance) return instance(*a.instance, *b.instance);
    if (b.component) return component(*a.component, *b.component);
    return std::nullopt;
  }

  std::optional<std::string> compare(const abi::Type& a, const abi::Type& b) {
    if (a.kind() != b.kind()) return "expected " + kind_name(b) + ", found " + kind_name(a);
    switch (b.kind()) {
      case TypeKind::Record: {
        if (a.fields().size() != b.fields().size())
          return "expected " + std::to_string(b.fields().size()) + " fields, found " +
                 std::to_string(a.fields().size());
        for (size_t i = 0; i < b.fields().size(); ++i) {
          const auto &fa = a.fields()[i], &fb = b.fields()[i];
          if (fa.name != fb.name)
            return "expected field name `" + fb.name + "`, found `" + fa.name + "`";
          if (auto why = value(fa.type, fb.type))
            return "type mismatch in record field `" + fb.name + "`: " + *why;
        }
        return std::nullopt;
      }
      case TypeKind::Tuple: {
        if (a.fields().size() != b.fields().size())
          return "expected " + std::to_string(b.fields().size()) + " types, found " +
                 std::to_string(a.fields().size());
        for (size_t i = 0; i < b.fields().size(); ++i)
          if (auto why = value(a.fields()[i].type, b.fields()[i].type))
            return "type mismatch in tuple field " + std::to_string(i) + ": " + *why;
        return std::nullopt;
      }
      case TypeKind::Variant: {
        if (a.cases().size() != b.cases().size())
          return "expected " + std::to_string(b.cases().size()) + " cases, found " +
                 std::to_string(a.cases().size());
        for (size_t i = 0; i < b.cases().size(); ++i) {
          const auto &ca = a.cases()[i], &cb = b.cases()[i];
          if (ca.name != cb.name)
            return "expected case named `" + cb.name + "`, found `" + ca.name + "`";
          if (cb.type && !ca.type)
            return "expected case `" + cb.name + "` to have a type, found none";
          if (!cb.type && ca.type) return "expected case `" + cb.name + "` to have no type";
          if (auto why = value(ca.type, cb.type))
            return "type mismatch in variant case `" + cb.name + "`: " + *why;
        }
        return std::nullopt;
      }
      case TypeKind::Enum:
        if (!std::equal(a.labels().begin(), a.labels().end(), b.labels().begin(), b.labels().end()))
          return std::string("mismatch in enum elements");
        return std::nullopt;
      case TypeKind::Flags:
        if (!std::equal(a.labels().begin(), a.labels().end(), b.labels().begin(), b.labels().end()))
          return std::string("mismatch in flags elements");
        return std::nullopt;
      case TypeKind::Option:
        if (auto why = value(a.cases()[1].type, b.cases()[1].type))
          return "type mismatch in option: " + *why;
        return std::nullopt;
      case TypeKind::Result: {
        const char* names[] = {"ok", "err"};
        for (int i = 0; i < 2; ++i) {
          const auto &ta = a.cases()[i].type, &tb = b.cases()[i].type;
          if (tb && !ta) return std::string("expected ") + names[i] + " type, but found none";
          if (!tb && ta) return std::string("expected ") + names[i] + " type to not be present";
          if (auto why = value(ta, tb))
            return std::string("type mismatch in ") + names[i] + " variant: " + *why;
        }
        return std::nullopt;
      }
      case TypeKind::FixedList:
        if (a.fixed_length() != b.fixed_length())
          return "expected a list of " + std::to_string(b.fixed_length()) + " elements, found " +
                 std::to_string(a.fixed_length());
        [[fallthrough]];
      case TypeKind::List:
        if (auto why = value(a.element(), b.element())) return "type mismatch in list: " + *why;
        return std::nullopt;
      case TypeKind::Map: {
        const auto &pa = a.element()->fields(), &pb = b.element()->fields();
        if (auto why = value(pa[0].type, pb[0].type)) return "type mismatch in map key: " + *why;
        if (auto why = value(pa[1].type, pb[1].type)) return "type mismatch in map value: " + *why;
        return std::nullopt;
      }
      case TypeKind::Own:
      case TypeKind::Borrow:
        if (a.resource() != b.resource())
          return "resource types are not the same (" + a.resource()->name + " vs. " +
                 b.resource()->name + ")";
        return std::nullopt;
      case TypeKind::Stream:
      case TypeKind::Future:
        if (auto why = value(a.element(), b.element()))
          return std::string("type mismatch in ") + abi::to_string(b.kind()) + ": " + *why;
        return std::nullopt;
      // Equal primitive kinds, named rather than `default:` so that a new
      // kind does not compile until it says above what makes two match.
      case TypeKind::Bool: case TypeKind::S8: case TypeKind::U8: case TypeKind::S16: case TypeKind::U16:
      case TypeKind::S32: case TypeKind::U32: case TypeKind::S64: case TypeKind::U64: case TypeKind::F32:
      case TypeKind::F64: case TypeKind::Char: case TypeKind::String: case TypeKind::ErrorContext:
        return std::nullopt;
    }
    return std::nullopt;
  }

  std::set<std::pair<const abi::Type*, const abi::Type*>> known_equal_;
};

template <typename Pred>
bool any_node(const abi::Type& root, Pred pred) {
  std::unordered_set<const abi::Type*> seen;
  std::vector<const abi::Type*> todo{&root};
  while (!todo.empty()) {
    const abi::Type* t = todo.back();
    todo.pop_back();
    if (!seen.insert(t).second) continue;
    if (pred(*t)) return true;
    // A stream or future is a handle: what it carries is not part of the value.
    if (t->kind() == TypeKind::Stream || t->kind() == TypeKind::Future) continue;
    if (t->element()) todo.push_back(t->element().get());
    for (const auto& f : t->fields()) todo.push_back(f.type.get());
    for (const auto& c : t->cases())
      if (c.type) todo.push_back(c.type.get());
  }
  return false;
}

}  // namespace

std::optional<std::string> value_mismatch(const abi::Type& actual, const abi::Type& expected) {
  return Matcher().value(actual, expected);
}

std::optional<std::string> func_mismatch(const FuncType& actual, const FuncType& expected) {
  return Matcher().func(actual, expected);
}

std::optional<std::string> extern_mismatch(const ExternDesc& actual, const ExternDesc& expected) {
  return Matcher().desc(actual, expected);
}

std::optional<ImportMismatch> instantiation_mismatch(const ComponentType& type,
                                                     const std::map<std::string, ExternDesc>& args, ResourceMap& map,
                                                     HandleNames* names, bool adopted) {
  ResourceSet bindable;
  for (const auto& r : type.imported_resources) bindable.insert(r.get());
  for (const auto& import : type.imports)
    if (auto arg = args.find(import.name); arg != args.end()) bind_resources(arg->second, import.desc, bindable, map);
  Substitution subst(map, names);
  for (const auto& import : type.imports) {
    auto arg = args.find(import.name);
    if (arg == args.end()) continue;
    ExternDesc expected = subst.apply(import.desc);
    // An argument the linker supplies may adopt the import's own type,
    // written with the component's imported resources (a host function made
    // for the import, Linker::func_wrap): those stand for what is bound to
    // them, as in the expected type.
    const ExternDesc actual = adopted ? subst.apply(arg->second) : arg->second;
    if (auto why = extern_mismatch(actual, expected)) return ImportMismatch{import.name, *why, std::move(expected)};
  }
  return std::nullopt;
}

bool contains_borrow(const abi::Type& type) {
  return any_node(type, [](const abi::Type& t) { return t.kind() == TypeKind::Borrow; });
}

bool contains_pointer(const abi::Type& type) {
  return any_node(type, [](const abi::Type& t) {
    return t.kind() == TypeKind::String || t.kind() == TypeKind::List ||
           t.kind() == TypeKind::Map;
  });
}

}  // namespace detail

std::optional<std::string> subtype_mismatch(const ExternDesc& actual, const ExternDesc& expected) {
  return detail::extern_mismatch(actual, expected);
}

ExternDesc substitute_resources(const ExternDesc& desc,
                                const std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef>& resources) {
  detail::Substitution subst(resources);
  return subst.apply(desc);
}

std::optional<ImportMismatch> instantiation_mismatch(const ComponentType& type,
                                                     const std::map<std::string, ExternDesc>& args) {
  detail::ResourceMap map;
  return detail::instantiation_mismatch(type, args, map, nullptr, /*adopted=*/true);
}

}  // namespace cmhost::validate
