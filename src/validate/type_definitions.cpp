// Validation of type definitions: value types, resources, function,
// component and instance types with their declarators, and the limits on a
// type's depth and size.
#include "validator.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "cmhost/error.hpp"

namespace cmhost::validate::detail {

using binary::Sort;

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

// The labels of a record's fields or a variant's cases.
template <typename Items>
std::vector<std::string> labels_of(const Items& items) {
  std::vector<std::string> labels;
  for (const auto& item : items) labels.push_back(item.label);
  return labels;
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

}  // namespace

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
          check_labels(labels_of(d.fields), "record field", "field", offset);
          std::vector<abi::Field> fields;
          for (const auto& f : d.fields) fields.push_back({f.label, val(f.type)});
          desc.value = build(offset, [&] { return abi::Type::record(std::move(fields)); });
        } else if constexpr (std::is_same_v<T, binary::VariantType>) {
          if (d.cases.empty()) fail(offset, "variant type must have at least one case");
          check_labels(labels_of(d.cases), "variant case", "case", offset);
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
  auto out = std::make_shared<ComponentType>();
  out->defined_resources = defined_resources_of_type(inner, offset);
  out->imports = std::move(inner.imports);
  out->exports = std::move(inner.exports);
  out->imported_resources = std::move(inner.imported_resources);
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

}  // namespace cmhost::validate::detail
