// Linker: the embedder's definitions, resolved and checked by the host
// room's linking (host/link.hpp) at instantiation.
#include <fmt/core.h>

#include <algorithm>

#include "cmhost/names.hpp"
#include "embed/impl.hpp"
#include "host/link.hpp"
#include "runtime/host_calls.hpp"

namespace cmhost {

namespace {

// Host callbacks that a guest's call deferred (a host copy meeting the
// guest inside a built-in) run before the guest's next host call, so that
// what they release (a listening socket the guest dropped) is gone by then.
void settle(runtime::HostCall& call) {
  if (runtime::HostDriver* driver = call.store.scheduler().host_driver()) driver->settle_in_guest_call();
}

// A runtime host function calling `function` with its call's context.
runtime::FuncRef host_func(std::shared_ptr<const FuncType> type, HostFunction function) {
  return runtime::Func::host(std::move(type), [function = std::move(function)](runtime::HostCall& call,
                                                                               std::span<const Val> args) {
    settle(call);
    Caller::Context context(call);
    Caller caller(context);
    return function(caller, args);
  });
}

// A runtime host function called with core values, calling `function` with
// its call's context.
runtime::FuncRef flat_host_func(std::shared_ptr<const FuncType> type, FlatHostFunction function) {
  return runtime::Func::host_flat(
      std::move(type), [function = std::move(function)](runtime::HostCall& call, abi::AbiContext& cx,
                                                        const abi::FunctionAbi& abi, std::span<const uint64_t> params,
                                                        std::span<uint64_t> results) {
        settle(call);
        Caller::Context context(call);
        Caller caller(context);
        function(caller, cx, abi, params, results);
      });
}

// A runtime async host function calling `function` with its call's context
// and completion.
runtime::FuncRef async_host_func(std::shared_ptr<const FuncType> type, const std::string& name,
                                 AsyncHostFunction function) {
  auto callback = [function = std::move(function)](runtime::HostCall& call, std::span<const Val> args,
                                                   std::shared_ptr<runtime::HostCompletion> completion) {
    settle(call);
    Caller::Context context(call);
    Caller caller(context);
    function(caller, args, Completion(std::make_shared<Completion::Impl>(std::move(completion))));
  };
  return runtime::Func::host_async(std::move(type), name, std::move(callback));
}

}  // namespace

void Linker::Impl::claim(const std::string& name) {
  auto named = [&name](const auto& definition) {
    if constexpr (requires { definition.name; })
      return definition.name == name;
    else
      return definition.first == name;
  };
  auto drop = [&](auto& definitions) { return std::erase_if(definitions, named) != 0; };
  host::Definitions& d = definitions;
  const bool defined = std::any_of(d.funcs.begin(), d.funcs.end(), named) ||
                       std::any_of(d.makers.begin(), d.makers.end(), named) ||
                       std::any_of(d.resources.begin(), d.resources.end(), named) ||
                       std::any_of(d.instances.begin(), d.instances.end(), named);
  if (!defined) return;
  if (!allow_shadowing)
    throw Error(ErrorKind::Usage, fmt::format("`{}` is already defined in this linker", name));
  drop(d.funcs);
  drop(d.makers);
  drop(d.resources);
  drop(d.instances);
  drop(instance_stores);
}

Linker::Linker() : impl_(std::make_unique<Impl>()) {}
Linker::Linker(const Linker& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Linker& Linker::operator=(const Linker& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Linker::Linker(Linker&& other) noexcept = default;
Linker& Linker::operator=(Linker&& other) noexcept = default;
Linker::~Linker() = default;

void Linker::define_func(std::string name, FuncType type, HostFunction function) {
  impl_->claim(name);
  impl_->definitions.funcs.push_back(
      {std::move(name), host_func(std::make_shared<const FuncType>(std::move(type)), std::move(function))});
}

void Linker::define_func(std::string name, FuncType type,
                         std::function<std::vector<Val>(std::span<const Val>)> function) {
  impl_->claim(name);
  auto callback = [function = std::move(function)](runtime::HostCall& call, std::span<const Val> args) {
    settle(call);
    return function(args);
  };
  impl_->definitions.funcs.push_back(
      {std::move(name), runtime::Func::host(std::make_shared<const FuncType>(std::move(type)), std::move(callback))});
}

void Linker::define_async_func(std::string name, FuncType type, AsyncHostFunction function) {
  impl_->claim(name);
  auto f = async_host_func(std::make_shared<const FuncType>(std::move(type)), name, std::move(function));
  impl_->definitions.funcs.push_back({std::move(name), std::move(f)});
}

void Completion::complete(std::vector<Val> results) { impl_->completion->complete(std::move(results)); }

void Completion::fail(std::string message) { impl_->completion->fail(std::move(message)); }

void Completion::on_cancel(std::function<void()> hook) { impl_->completion->on_cancel(std::move(hook)); }

void Completion::cancel() { impl_->completion->cancel(); }

void Linker::add_wrapped(std::string name, const std::type_info& signature, WrappedMaker make) {
  impl_->claim(name);
  // The callable becomes a runtime host function made for the import's type.
  auto maker = [make = std::move(make)](const std::shared_ptr<const FuncType>& type,
                                        std::string& why) -> runtime::FuncRef {
    FlatHostFunction f = make(*type, why);
    return f ? flat_host_func(type, std::move(f)) : nullptr;
  };
  impl_->definitions.makers.push_back({std::move(name), &signature, std::move(maker)});
}

void Linker::add_wrapped_async(std::string name, const std::type_info& signature, AsyncWrappedMaker make) {
  impl_->claim(name);
  auto maker = [make = std::move(make), name](const std::shared_ptr<const FuncType>& type,
                                               std::string& why) -> runtime::FuncRef {
    AsyncHostFunction f = make(type, why);
    return f ? async_host_func(type, name, std::move(f)) : nullptr;
  };
  impl_->definitions.makers.push_back({std::move(name), &signature, std::move(maker)});
}

HostResourceBase Linker::define_host_resource(std::string name) {
  impl_->claim(name);
  auto type = std::make_shared<runtime::ResourceType>();
  // Named as the item it supplies: `file` of `ns:pkg/iface#file`.
  const auto parsed = parse_extern_path(name);
  type->name = parsed && !parsed->member.empty() ? parsed->member : name;
  // The last own handle dropped frees the host object behind the rep.
  type->host_drop = [](runtime::Store& runtime, uint32_t rep) {
    if (auto* store = static_cast<Store*>(runtime.embedder()); store && store->impl_)
      store->impl_->objects.remove(rep);
  };
  type->abi_type = std::make_shared<const abi::ResourceType>(abi::ResourceType{type->name});
  impl_->definitions.resources.emplace_back(std::move(name), type);
  auto impl = std::make_shared<HostResourceBase::Impl>();
  impl->type = std::move(type);
  return HostResourceBase(std::move(impl));
}

void Linker::define_resource(std::string name, const HostResourceBase& same) {
  impl_->claim(name);
  impl_->definitions.resources.emplace_back(std::move(name), same.impl_->type);
}

HostResourceBase Linker::find_host_resource(std::string_view name) const {
  for (const auto& resource : impl_->definitions.resources)
    if (resource.first == name) {
      auto impl = std::make_shared<HostResourceBase::Impl>();
      impl->type = resource.second;
      return HostResourceBase(std::move(impl));
    }
  throw Error(ErrorKind::Usage, "no host resource type is defined as `" + std::string(name) + "`");
}

void Linker::define_instance(std::string name, const Instance& instance) {
  impl_->claim(name);
  impl_->instance_stores.emplace_back(name, instance.impl_->store);
  impl_->definitions.instances.push_back({std::move(name), instance.impl_->instance, {}});
}

void Linker::define_instance(std::string name, const Instance& instance, std::string_view export_name) {
  const auto& exports = instance.type().exports;
  const bool exported = std::any_of(exports.begin(), exports.end(), [&](const NamedExtern& e) {
    return e.name == export_name && e.desc.sort == Sort::Instance;
  });
  if (!exported)
    throw Error(ErrorKind::Usage, fmt::format("the instance exports no instance `{}` to supply `{}` with",
                                              export_name, name));
  impl_->claim(name);
  impl_->instance_stores.emplace_back(name, instance.impl_->store);
  impl_->definitions.instances.push_back({std::move(name), instance.impl_->instance, std::string(export_name)});
}

void Linker::allow_stub_imports(bool allow) { impl_->definitions.stub_imports = allow; }

void Linker::allow_shadowing(bool allow) { impl_->allow_shadowing = allow; }

Instance Linker::instantiate(Store& store, const Component& component) const {
  return instantiate_pre(component).instantiate(store);
}

InstancePre Linker::instantiate_pre(const Component& component) const {
  auto pre = std::make_shared<InstancePre::Impl>();
  pre->component = component;
  for (const auto& import : component.type().imports)
    for (const auto& [name, instance_store] : impl_->instance_stores)
      if (name == import.name) pre->instance_stores.emplace_back(name, instance_store);
  pre->imports = host::link(component.type(), impl_->definitions);
  return InstancePre(std::move(pre));
}

Instance InstancePre::instantiate(Store& store) const {
  // Instances link to each other only within one store.
  for (const auto& [name, instance_store] : impl_->instance_stores)
    if (instance_store != &store.impl_->runtime)
      throw Error(ErrorKind::Link, "the instance supplied for `" + name + "` lives in another store");
  return Instance(std::make_shared<const Instance::Impl>(
      store.impl_->runtime.instantiate(impl_->component.impl_->compiled, impl_->imports), &store.impl_->runtime, impl_));
}

const Component& InstancePre::component() const { return impl_->component; }

}  // namespace cmhost
