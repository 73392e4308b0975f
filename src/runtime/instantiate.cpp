// Executes a ComponentPlan's steps, filling a new instance's index spaces.
#include <fmt/core.h>

#include "cmhost/error.hpp"
#include "runtime/runtime.hpp"
#include "builtins.hpp"
#include "call_handles.hpp"
#include "guest_memory.hpp"
#include "handles.hpp"
#include "lifted_call.hpp"
#include "canon_lower.hpp"
#include "scheduler.hpp"
#include "task.hpp"

namespace cmhost::runtime {

using binary::Sort;
namespace step = validate::step;

using ImportMap = std::map<std::string, Item, std::less<>>;

namespace {

// The index of the entry named `name` in `entries`, from `from` on and
// wrapping around; `from` is left past it.
template <class Entries>
std::optional<size_t> find_from(const Entries& entries, std::string_view name, size_t& from) {
  const size_t n = entries.size();
  if (from >= n) from = 0;
  for (size_t k = 0, i = from; k < n; ++k, i = i + 1 == n ? 0 : i + 1) {
    if (entries[i].first != name) continue;
    from = i + 1;
    return i;
  }
  return std::nullopt;
}

}  // namespace

const Item* InstanceItems::find(std::string_view name, size_t& from) const {
  const auto i = find_from(exports, name, from);
  return i ? &exports[*i].second : nullptr;
}

std::optional<engine::Extern> InstanceSpaces::CoreInstance::find(std::string_view name, size_t& from) const {
  if (engine_instance) return engine_instance->get_export(name);
  const auto i = find_from(bag, name, from);
  if (!i) return std::nullopt;
  return bag[*i].second;
}

namespace {

[[noreturn]] void link_error(const std::string& message) { throw Error(ErrorKind::Link, message); }

// Whether a value of `type` can carry a handle (a resource, stream, future
// or error context): calls of types without one need no handle table.
bool moves_handles(const abi::Type& type) {
  switch (type.kind()) {
    case abi::TypeKind::Own:
    case abi::TypeKind::Borrow:
    case abi::TypeKind::Stream:
    case abi::TypeKind::Future:
    case abi::TypeKind::ErrorContext: return true;
    default: break;
  }
  for (const auto& f : type.fields())
    if (moves_handles(*f.type)) return true;
  for (const auto& c : type.cases())
    if (c.type && moves_handles(*c.type)) return true;
  return type.element() && moves_handles(*type.element());
}

engine::ExternKind core_kind(Sort sort) {
  switch (sort) {
    case Sort::CoreFunc: return engine::ExternKind::Func;
    case Sort::CoreTable: return engine::ExternKind::Table;
    case Sort::CoreMemory: return engine::ExternKind::Memory;
    case Sort::CoreGlobal: return engine::ExternKind::Global;
    case Sort::CoreTag: return engine::ExternKind::Tag;
    default: link_error(std::string("not a core extern sort: ") + binary::to_string(sort));
  }
}

template <typename T>
const T& at(const std::vector<T>& space, uint32_t index, const char* what) {
  if (index >= space.size())
    throw Error(ErrorKind::Link, fmt::format("{} index {} out of range (plan and instance disagree)", what, index));
  return space[index];
}

engine::FuncType core_func_type(const abi::CoreSignature& sig) { return {sig.params, sig.results}; }

}  // namespace

class Instantiator {
 public:
  Instantiator(Store& store, const CompiledComponent& compiled) : store_(store), compiled_(compiled) {}

  std::shared_ptr<ComponentInstance> run(const validate::ComponentPlan& plan, const ImportMap& imports,
                                         const ComponentInstance* scope = nullptr, ComponentInstance* parent = nullptr) {
    store_.count_instance();
    auto inst = std::make_shared<ComponentInstance>(store_.handle_limits());
    inst->spaces().name = plan.name;
    inst->spaces().plan = &plan;
    inst->spaces().scope = scope;
    inst->state().parent = parent;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      try {
        std::visit([&](const auto& s) { execute(*inst, s, imports); }, plan.steps[i]);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Trap) throw;
        throw Error(e.kind(), fmt::format("instantiating `{}`: {}", plan.name, e.what()));
      }
    }
    return inst;
  }

 private:
  // ---- index spaces ----

  static void push(ComponentInstance& inst, const Item& item) {
    switch (item.sort) {
      case Sort::Func: inst.spaces().funcs.push_back(item.func); break;
      case Sort::Instance: inst.spaces().instances.push_back(item.instance); break;
      case Sort::Component: inst.spaces().components.push_back(item); break;
      case Sort::Type: break;  // types are static: Type operands index the plan's types
      case Sort::CoreModule: inst.spaces().core_modules.push_back(item.core_module); break;
      default: link_error(std::string("cannot use a ") + binary::to_string(item.sort) + " here");
    }
  }

  static Item item_at(const ComponentInstance& inst, binary::SortIndex si) {
    Item item;
    item.sort = si.sort;
    switch (si.sort) {
      case Sort::Func: item.func = at(inst.spaces().funcs, si.index, "func"); break;
      case Sort::Instance: item.instance = at(inst.spaces().instances, si.index, "instance"); break;
      case Sort::Component: item = at(inst.spaces().components, si.index, "component"); break;
      case Sort::Type: {
        const validate::ExternDesc& type = at(inst.spaces().plan->types, si.index, "type");
        item.value_type = type.value;
        if (type.resource) {
          auto it = inst.spaces().resources.find(type.resource.get());
          if (it == inst.spaces().resources.end())
            link_error("resource type `" + type.resource->name + "` is not bound");
          item.resource = it->second;
        }
        break;
      }
      case Sort::CoreModule: item.core_module = at(inst.spaces().core_modules, si.index, "core module"); break;
      default: link_error(std::string(binary::to_string(si.sort)) + " items are not supported yet");
    }
    return item;
  }

  static std::vector<engine::Extern>& core_space(ComponentInstance& inst, Sort sort) {
    switch (sort) {
      case Sort::CoreFunc: return inst.spaces().core_funcs;
      case Sort::CoreTable: return inst.spaces().core_tables;
      case Sort::CoreMemory: return inst.spaces().core_memories;
      case Sort::CoreGlobal: return inst.spaces().core_globals;
      case Sort::CoreTag: return inst.spaces().core_tags;
      default: link_error(std::string("not a core extern sort: ") + binary::to_string(sort));
    }
  }

  // Binds the resource identities an instance type exports (recursively) to
  // what the actual instance exports under the same names.
  static void bind_instance_resources(ComponentInstance& inst, const validate::InstanceType& type,
                                      const InstanceItems& actual) {
    size_t from = 0;
    for (const auto& e : type.exports) {
      const Item* item = actual.find(e.name, from);
      if (!item) continue;
      if (e.desc.sort == Sort::Type && e.desc.resource && item->resource)
        inst.spaces().resources[e.desc.resource.get()] = item->resource;
      if (e.desc.sort == Sort::Instance && e.desc.instance && item->instance)
        bind_instance_resources(inst, *e.desc.instance, *item->instance);
    }
  }

  static void bind_resource(ComponentInstance& inst, const abi::ResourceTypeRef& id, const Item& item) {
    if (!id) return;
    if (!item.resource) link_error("expected a resource type for `" + id->name + "`");
    inst.spaces().resources[id.get()] = item.resource;
  }

  // ---- imports ----

  // What the host supplies is type-checked before instantiation, by the one
  // link check (validate::instantiation_mismatch, run by cmhost::Linker);
  // here only its presence and sort, which instantiation relies on.
  static void check_present(const std::string& name, const Item& item, const validate::ExternDesc& desc) {
    if (item.sort != desc.sort)
      link_error(fmt::format("import `{}` must be a {}, got a {}", name, binary::to_string(desc.sort),
                             binary::to_string(item.sort)));
    if (desc.sort == Sort::Func && !item.func) link_error(fmt::format("import `{}` has no function", name));
    size_t from = 0;
    if (desc.sort == Sort::Instance)
      for (const auto& e : desc.instance->exports) {
        const Item* provided = item.instance ? item.instance->find(e.name, from) : nullptr;
        if (!provided) link_error(fmt::format("import `{}` lacks export `{}`", name, e.name));
        check_present(name + "#" + e.name, *provided, e.desc);
      }
  }

  // ---- steps ----

  // The instance `count` scopes out from `inst` (0: inst itself).
  static const ComponentInstance& outer_scope(const ComponentInstance& inst, uint32_t count) {
    const ComponentInstance* scope = &inst;
    for (uint32_t i = 0; i < count; ++i) {
      if (!scope->spaces().scope) link_error("outer alias reaches beyond the outermost component");
      scope = scope->spaces().scope;
    }
    return *scope;
  }

  void execute(ComponentInstance& inst, const step::CoreModule& s, const ImportMap&) {
    if (s.outer)
      inst.spaces().core_modules.push_back(at(outer_scope(inst, s.outer->count).spaces().core_modules, s.outer->index, "core module"));
    else
      inst.spaces().core_modules.push_back(s.module);
  }

  void execute(ComponentInstance& inst, const step::CoreInstantiate& s, const ImportMap&) {
    const auto& module = *compiled_.modules.at(at(inst.spaces().core_modules, s.module, "core module"));
    std::vector<engine::Extern> externs;
    externs.reserve(module.imports().size());
    std::vector<size_t> from(s.args.size(), 0);  // where each argument's next lookup starts
    for (const auto& import : module.imports()) {
      const InstanceSpaces::CoreInstance* source = nullptr;
      size_t* source_from = nullptr;
      for (size_t a = 0; a < s.args.size(); ++a)
        if (s.args[a].first == import.module) {
          source = &at(inst.spaces().core_instances, s.args[a].second, "core instance");
          source_from = &from[a];
        }
      if (!source) link_error(fmt::format("core module import `{}` is not supplied", import.module));
      auto e = source->find(import.name, *source_from);
      if (!e) link_error(fmt::format("core import `{}` `{}` is not exported by the supplied instance",
                                     import.module, import.name));
      externs.push_back(*e);
    }
    InstanceSpaces::CoreInstance ci;
    store_.count_instance();
    ci.engine_instance = store_.core().instantiate(module, externs);
    inst.spaces().core_instances.push_back(std::move(ci));
  }

  void execute(ComponentInstance& inst, const step::CoreInlineInstance& s, const ImportMap&) {
    InstanceSpaces::CoreInstance ci;
    for (const auto& item : s.exports)
      ci.bag.emplace_back(item.name, at(core_space(inst, item.sort), item.index, "core item"));
    inst.spaces().core_instances.push_back(std::move(ci));
  }

  void execute(ComponentInstance& inst, const step::CoreAliasExport& s, const ImportMap&) {
    const auto e = at(inst.spaces().core_instances, s.instance, "core instance").find(s.name);
    if (!e) link_error(fmt::format("core instance {} has no export `{}`", s.instance, s.name));
    if (e->kind != core_kind(s.sort))
      link_error(fmt::format("core export `{}` is a {}, not a {}", s.name, engine::to_string(e->kind),
                             binary::to_string(s.sort)));
    core_space(inst, s.sort).push_back(*e);
  }

  void execute(ComponentInstance& inst, const step::Import& s, const ImportMap& imports) {
    auto it = imports.find(s.name);
    if (it == imports.end()) link_error(fmt::format("missing import `{}`", s.name));
    if (it->second.sort == Sort::Type) bind_resource(inst, s.desc.resource, it->second);
    if (it->second.sort == Sort::Instance && s.desc.instance && it->second.instance)
      bind_instance_resources(inst, *s.desc.instance, *it->second.instance);
    check_present(s.name, it->second, s.desc);
    push(inst, it->second);
  }

  void execute(ComponentInstance& inst, const step::AliasExport& s, const ImportMap&) {
    const Item* item = at(inst.spaces().instances, s.instance, "instance")->find(s.name);
    if (!item) link_error(fmt::format("instance {} has no export `{}`", s.instance, s.name));
    bind_resource(inst, s.resource, *item);
    push(inst, *item);
  }

  void execute(ComponentInstance& inst, const step::Component& s, const ImportMap&) {
    if (s.outer) {
      inst.spaces().components.push_back(at(outer_scope(inst, s.outer->count).spaces().components, s.outer->index, "component"));
      return;
    }
    Item item;
    item.sort = Sort::Component;
    item.component = s.plan;
    item.component_scope = &inst;
    inst.spaces().components.push_back(std::move(item));
  }

  void execute(ComponentInstance& inst, const step::Instantiate& s, const ImportMap&) {
    ImportMap args;
    for (const auto& [name, target] : s.args) args.emplace(name, item_at(inst, target));
    const Item& component = at(inst.spaces().components, s.component, "component");
    auto child = run(*component.component, args, component.component_scope, &inst);
    if (s.type) bind_instance_resources(inst, *s.type, child->exports());
    inst.spaces().instances.push_back(child->exports_ref());
    inst.spaces().children.push_back(std::move(child));
  }

  void execute(ComponentInstance& inst, const step::InlineInstance& s, const ImportMap&) {
    auto items = std::make_shared<InstanceItems>();
    for (const auto& [name, target] : s.exports) items->exports.emplace_back(name, item_at(inst, target));
    inst.spaces().instances.push_back(std::move(items));
  }

  void execute(ComponentInstance& inst, const step::Lift& s, const ImportMap&) {
    LiftedFunc f;
    f.instance = &inst;
    f.core_func = at(inst.spaces().core_funcs, s.core_func, "core func");
    if (!s.options.async) f.prepared = store_.core().prepare_call(f.core_func);
    if (s.options.memory) f.memory = at(inst.spaces().core_memories, *s.options.memory, "core memory");
    if (s.options.realloc) f.realloc = at(inst.spaces().core_funcs, *s.options.realloc, "core func");
    if (s.options.post_return) f.post_return = at(inst.spaces().core_funcs, *s.options.post_return, "core func");
    if (s.options.callback) {
      f.callback = at(inst.spaces().core_funcs, *s.options.callback, "core func");
      f.callback_params = store_.core().func_type(*f.callback).params.size();
    }
    f.async_lift = s.options.async;
    f.abi = s.abi;
    f.moves_handles = std::any_of(s.type->params.begin(), s.type->params.end(),
                                    [](const abi::TypeRef& t) { return moves_handles(*t); }) ||
                        (s.type->result && moves_handles(*s.type->result));
    // An async lift returns nothing, or the callback code.
    f.core_result_count = s.options.async ? (s.options.callback ? 1 : 0)
                                            : f.abi->core_signature(abi::AbiSide::Lift).results.size();
    inst.spaces().funcs.push_back(Func::lift(s.type, std::move(f)));
  }

  void execute(ComponentInstance& inst, const step::Lower& s, const ImportMap&) {
    FuncRef target = at(inst.spaces().funcs, s.func, "func");
    const std::shared_ptr<const abi::FunctionAbi>& abi = s.abi;
    std::optional<engine::Extern> memory, realloc;
    if (s.options.memory) memory = at(inst.spaces().core_memories, *s.options.memory, "core memory");
    if (s.options.realloc) realloc = at(inst.spaces().core_funcs, *s.options.realloc, "core func");
    const engine::FuncType core_type = core_func_type(abi->core_signature(abi::AbiSide::Lower));
    LowerSite site{&store_, &inst, abi, memory, realloc, s.options.async};
    inst.spaces().core_funcs.push_back(store_.core().host_func(core_type, Lowering::make(std::move(site), target)));
  }

  void execute(ComponentInstance& inst, const step::ResourceDefinition& s, const ImportMap&) {
    auto rt = std::make_shared<ResourceType>();
    rt->name = s.resource ? s.resource->name : "resource";
    rt->owner = &inst;
    rt->abi_type = std::make_shared<const abi::ResourceType>(abi::ResourceType{rt->name});
    if (s.dtor) rt->dtor = at(inst.spaces().core_funcs, *s.dtor, "core func");
    inst.spaces().resources[s.resource.get()] = rt;
  }

  void execute(ComponentInstance& inst, const step::ResourceBuiltin& s, const ImportMap&) {
    auto it = inst.spaces().resources.find(s.resource.get());
    if (it == inst.spaces().resources.end())
      link_error(fmt::format("canon {}: resource type `{}` is not bound", binary::to_string(s.kind),
                             s.resource ? s.resource->name : "?"));
    inst.spaces().core_funcs.push_back(CallHandles::resource_builtin(store_, inst, s.kind, it->second));
  }

  void execute(ComponentInstance& inst, const step::CanonBuiltin& s, const ImportMap&) {
    Builtins::Links links;
    if (s.options.memory) links.memory = at(inst.spaces().core_memories, *s.options.memory, "core memory");
    if (s.options.realloc) links.realloc = at(inst.spaces().core_funcs, *s.options.realloc, "core func");
    if (s.canon.kind == binary::CanonKind::ThreadNewIndirect)
      links.table = at(inst.spaces().core_tables, s.canon.table_index, "core table");
    inst.spaces().core_funcs.push_back(Builtins::make(store_, inst, s, links));
  }

  void execute(ComponentInstance& inst, const step::Export& s, const ImportMap&) {
    Item item = item_at(inst, s.target);
    // Resource types the export's type names of its own (a (sub resource)
    // ascription, an ascribed instance type's) are the item's.
    if (s.desc.sort == Sort::Type && s.desc.resource) bind_resource(inst, s.desc.resource, item);
    if (s.desc.sort == Sort::Instance && s.desc.instance && item.instance)
      bind_instance_resources(inst, *s.desc.instance, *item.instance);
    inst.spaces().exports->exports.emplace_back(s.name, item);
    push(inst, item);
  }

  void execute(ComponentInstance&, const step::Start&, const ImportMap&) {
    link_error("start functions with component values are not supported yet");
  }

  Store& store_;
  const CompiledComponent& compiled_;
};

ComponentInstance::ComponentInstance(std::shared_ptr<HandleLimits> limits) {
  state_.threads = std::make_unique<IndexTable<Thread*>>();
  state_.handles = std::make_unique<HandleTable>(std::move(limits));
}
ComponentInstance::~ComponentInstance() = default;

std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef> ComponentInstance::run_time_resources() const {
  std::unordered_map<const abi::ResourceType*, abi::ResourceTypeRef> out;
  for (const auto& [identity, type] : spaces_.resources)
    if (type && type->abi_type) out.emplace(identity, type->abi_type);
  return out;
}

Store::Store(engine::Engine& engine)
    : engine_(engine),
      core_(engine.new_store()),
      metered_(engine.config().metering),
      host_handles_(std::make_unique<HandleTable>(handle_limits_)),
      scheduler_(std::make_unique<Scheduler>(*core_)) {}

Store::~Store() { scheduler_->shutdown(); }

void Store::set_limits(const GuestLimits& limits, uint32_t table_entries, uint32_t waitables, uint64_t host_bytes) {
  limits_ = limits;
  handle_limits_->entries = table_entries;
  handle_limits_->waitables = waitables;
  handle_limits_->host_bytes = host_bytes;
}

void Store::count_instance() {
  if (instances_made_ >= limits_.instances)
    throw Error(ErrorKind::Trap, "instance limit: the store may make " + std::to_string(limits_.instances) +
                                     " component and core instances (StoreLimits::instances)");
  ++instances_made_;
}

void Store::check_metered_deadline(const ComponentInstance& inst) {
  if (!core_->deadline_passed()) return;
  throw Error(ErrorKind::Trap, "interrupted: the store's epoch deadline has passed, so component instance `" +
                                   inst.name() + "` was not entered (Store::set_epoch_deadline sets a new one)");
}

void Store::CallDepth::too_deep() {
  --store_.call_depth_;  // the destructor will not run
  throw Error(ErrorKind::Trap, "call depth limit: calls into guests nest more than " +
                                   std::to_string(store_.limits_.call_depth) + " deep (StoreLimits::call_depth)");
}

std::shared_ptr<ComponentInstance> Store::instantiate(const CompiledComponent& component,
                                                      const ImportMap& imports) {
  auto inst = Instantiator(*this, component).run(*component.plan.root, imports);
  inst->spaces().root_plan = component.plan.root;
  instances_.push_back(inst);
  return inst;
}

std::vector<std::span<const uint8_t>> module_bytes(const validate::Plan& plan, std::span<const uint8_t> bytes) {
  std::vector<std::span<const uint8_t>> modules;
  for (const auto& range : plan.modules) {
    if (range.offset > bytes.size() || range.size > bytes.size() - range.offset)
      throw Error(ErrorKind::Validate, "core module range outside the component bytes");
    modules.push_back(bytes.subspan(range.offset, range.size));
  }
  return modules;
}

CompiledComponent compile(engine::Engine& engine, validate::Plan plan, std::span<const uint8_t> bytes) {
  const auto modules = module_bytes(plan, bytes);
  // Ahead-of-time backends compile the component's modules together.
  if (auto artifact = engine.cached_artifact(bytes, modules)) return compile(*artifact, std::move(plan));
  CompiledComponent out;
  for (const auto& module : modules) out.modules.push_back(engine.compile(module));
  out.plan = std::move(plan);
  return out;
}

CompiledComponent compile(const engine::Artifact& artifact, validate::Plan plan) {
  if (artifact.module_count() != plan.modules.size())
    throw Error(ErrorKind::Usage, "the artifact holds " + std::to_string(artifact.module_count()) +
                                      " core modules, the component " + std::to_string(plan.modules.size()));
  CompiledComponent out;
  for (size_t i = 0; i < plan.modules.size(); ++i) {
    auto module = artifact.module(i);
    if (!module) throw Error(ErrorKind::Usage, "the artifact lacks core module " + std::to_string(i));
    out.modules.push_back(std::move(module));
  }
  out.faster_code_check = artifact.faster_code_check();
  out.plan = std::move(plan);
  return out;
}

}  // namespace cmhost::runtime
