// Validation of components: every definition is replayed in binary order
// into the static index spaces of its Scope, type-checked, and, when it
// creates something at run time, recorded as a plan step. The definitions
// by section: core_definitions.cpp, instances_aliases.cpp,
// type_definitions.cpp, imports_exports.cpp.
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

[[noreturn]] void out_of_bounds(size_t offset, const char* sort, uint32_t index) {
  fail(offset, std::string("unknown ") + sort + " " + std::to_string(index) + ": " + sort +
                   " index out of bounds");
}

// ---- Components ----

// Resource types defined inside (or by instances created inside) cannot
// appear in the imports; those the exports mention become the component
// type's defined resources, fresh for every instance.
std::vector<abi::ResourceTypeRef> defined_resources_of_type(const Scope& s, size_t offset) {
  ResourceSet free;
  for (const auto& e : s.imports) collect_free_resources(e.desc, free);
  for (const auto& r : s.defined_resources)
    if (free.count(r.get())) fail(offset, "local resource type found in imports");
  free.clear();
  for (const auto& e : s.exports) collect_free_resources(e.desc, free);
  std::vector<abi::ResourceTypeRef> defined;
  for (const auto& r : s.defined_resources)
    if (free.count(r.get())) defined.push_back(r);
  return defined;
}

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
  ComponentType& type = s.plan->type;
  type.defined_resources = defined_resources_of_type(s, offset);
  type.imports = s.imports;
  type.exports = s.exports;
  type.imported_resources = s.imported_resources;
  for (const auto& t : s.types) s.plan->types.push_back(t.desc);
}

// ---- Lookups ----

const TypeEntry& Validator::type_at(Scope& s, uint32_t index, size_t offset) {
  return index_at(s.types, index, "type", offset);
}

const binary::CoreFuncType& Validator::core_func_at(Scope& s, uint32_t index, size_t offset) {
  return index_at(s.core_funcs, index, "core func", offset);
}

ExternDesc Validator::item(Scope& s, binary::SortIndex target, size_t offset) {
  ExternDesc desc;
  desc.sort = target.sort;
  switch (target.sort) {
    case Sort::CoreModule: desc.module = index_at(s.core_modules, target.index, "module", offset).type; break;
    case Sort::Func: desc.func = index_at(s.funcs, target.index, "func", offset); break;
    case Sort::Value:
      desc.value = index_at(s.values, target.index, "value", offset);
      if (s.value_used[target.index])
        fail(offset, "value " + std::to_string(target.index) + " cannot be used more than once");
      s.value_used[target.index] = true;
      break;
    case Sort::Type: desc = type_at(s, target.index, offset).desc; break;
    case Sort::Component:
      desc.component = index_at(s.components, target.index, "component", offset).type;
      break;
    case Sort::Instance: desc.instance = index_at(s.instances, target.index, "instance", offset); break;
    default:
      fail(offset, std::string("a ") + sort_name(target.sort) +
                       " cannot be used here (of the core sorts, only modules)");
  }
  return desc;
}

// ---- Start ----

void Validator::start(Scope& s, const binary::Start& st, size_t offset) {
  const FuncType& f = *index_at(s.funcs, st.func, "func", offset);
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
