#include <fmt/core.h>

#include <fstream>
#include <iterator>

#include "cmhost/cmhost.hpp"
#include "host/objects.hpp"
#include "host/type_name.hpp"

namespace cmhost {

Engine::Engine(engine::EngineConfig config) : core_(engine::make_engine(std::move(config))) {}

Store::Store(Engine& engine)
    : store_(std::make_unique<runtime::Store>(engine.core())), objects_(std::make_unique<host::Objects>()) {
  store_->set_embedder(this);
}

Store::Store(Store&& other) noexcept
    : store_(std::move(other.store_)),
      objects_(std::move(other.objects_)),
      data_(std::move(other.data_)),
      data_type_(other.data_type_) {
  if (store_) store_->set_embedder(this);
}

Store& Store::operator=(Store&& other) noexcept {
  store_ = std::move(other.store_);
  objects_ = std::move(other.objects_);
  data_ = std::move(other.data_);
  data_type_ = other.data_type_;
  if (store_) store_->set_embedder(this);
  return *this;
}

// The instances go first: a guest's handles dropped as they are destroyed
// reach the host objects, which outlive them.
Store::~Store() {
  store_.reset();
  objects_.reset();  // before the user data, which host objects' destructors may use
}

size_t Store::host_objects() const { return objects_->size(); }

Val Store::new_host_object(const runtime::ResourceTypeRef& type, std::shared_ptr<void> object,
                           const std::type_info& t) {
  if (!object) throw_invalid_value("a host resource needs an object, not null");
  const uint32_t rep = objects_->add(std::move(object), t);
  try {
    return Val::own(store_->new_resource(type, rep));
  } catch (...) {
    objects_->remove(rep);
    throw;
  }
}

void* Store::host_object(const runtime::ResourceTypeRef& type, const Val& handle, const std::type_info& t) {
  if (handle.kind() != abi::ValKind::Own && handle.kind() != abi::ValKind::Borrow)
    throw_invalid_value("a host resource handle is an own or borrow value");
  const uint32_t rep = store_->resource_rep(handle.as_handle(), type);
  return objects_->get(rep, t);
}

void Store::drop_host_object(runtime::Store& store, uint32_t rep) {
  if (auto* embedder = static_cast<Store*>(store.embedder()); embedder && embedder->objects_)
    embedder->objects_->remove(rep);
}

void Store::check_data_type(const std::type_info& asked) const {
  if (data_type_ && *data_type_ == asked) return;
  throw Error(ErrorKind::Usage, data_type_ ? fmt::format("the store's data is a {}, not a {}", host::type_name(*data_type_),
                                                         host::type_name(asked))
                                           : fmt::format("the store has no data (asked for a {})", host::type_name(asked)));
}

bool Instance::results_spilled(const Func& f) { return f.runtime()->results_spilled(); }
bool Instance::typed_callable(const Func& f, std::string& why) {
  if (f.runtime()->is_host()) why = "it is a host function: call it with Func::call";
  else if (f.runtime()->memory64()) why = "typed calls read and write 32-bit memories only, and its memory is 64-bit";
  return why.empty();
}
bool Instance::params_spilled(const Func& f) { return f.runtime()->params_spilled(); }

void Instance::signature_mismatch(const Func& f, const std::type_info& signature, const std::string& why) {
  throw Error(ErrorKind::Usage, fmt::format("`{}` is {}; the C++ signature {} does not match it: {}", f.name(),
                                            validate::to_string(f.type()), host::type_name(signature), why));
}

Store& Caller::store() {
  auto* store = static_cast<Store*>(call_.store.embedder());
  if (!store) throw Error(ErrorKind::Usage, "the runtime store has no cmhost::Store");
  return *store;
}

std::span<uint8_t> Caller::memory() {
  if (!call_.caller_cx || !call_.caller_cx->has_memory()) return {};
  call_.caller_cx->refresh();
  return {call_.caller_cx->base(), static_cast<size_t>(call_.caller_cx->size())};
}

uint64_t Caller::realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size) {
  if (!call_.caller_cx || !call_.caller_cx->has_memory())
    throw Error(ErrorKind::Usage, "the call has no guest memory to allocate in");
  return call_.caller_cx->realloc(old_ptr, old_size, align, new_size);
}

Component Component::from_bytes(Engine& engine, std::vector<uint8_t> bytes) {
  Component c;
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  const auto decoded = binary::decode_component(*owned);
  auto plan = validate::validate_component(decoded, *owned);
  c.compiled_ = std::make_shared<const runtime::CompiledComponent>(
      runtime::compile(engine.core(), std::move(plan), *owned));
  c.bytes_ = std::move(owned);
  return c;
}

Component Component::from_file(Engine& engine, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Usage, "cannot read " + path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return from_bytes(engine, std::move(bytes));
}

namespace {

// `ns:pkg/iface@1.2.3` without its version.
std::string_view without_version(std::string_view name) {
  return name.substr(0, name.find('@'));
}

}  // namespace

std::vector<Func> Instance::funcs() const {
  std::vector<Func> out;
  for (const auto& [name, item] : instance_->exports().exports) {
    if (item.sort == binary::Sort::Func) out.emplace_back(name, item.func);
    if (item.sort == binary::Sort::Instance)
      for (const auto& [inner, inner_item] : item.instance->exports)
        if (inner_item.sort == binary::Sort::Func) out.emplace_back(name + "#" + inner, inner_item.func);
  }
  return out;
}

Func Instance::func(std::string_view name) const {
  const auto all = funcs();
  for (const auto& f : all)
    if (f.name() == name) return f;
  // An interface function named without its version, if only one matches.
  if (const auto hash = name.find('#'); hash != std::string_view::npos && name.find('@') == std::string_view::npos) {
    const Func* match = nullptr;
    size_t matches = 0;
    for (const auto& f : all) {
      const auto fhash = f.name().find('#');
      if (fhash == std::string::npos) continue;
      const std::string_view fname = f.name();
      if (without_version(fname.substr(0, fhash)) == name.substr(0, hash) &&
          fname.substr(fhash + 1) == name.substr(hash + 1)) {
        match = &f;
        ++matches;
      }
    }
    if (matches == 1) return *match;
    if (matches > 1)
      throw Error(ErrorKind::Usage, fmt::format("`{}` is ambiguous: several versions are exported", name));
  }
  std::string known;
  for (const auto& f : all) known += (known.empty() ? "" : ", ") + f.name();
  throw Error(ErrorKind::Usage, fmt::format("no exported function `{}` (exports: {})", name,
                                            known.empty() ? "none" : known));
}

void Linker::define_func(std::string name, FuncType type, HostFunction function) {
  auto callback = [function = std::move(function)](runtime::HostCall& call, std::span<const Val> args) {
    Caller caller(call);
    return function(caller, args);
  };
  definitions_.push_back(
      {std::move(name), runtime::Func::host(std::make_shared<const FuncType>(std::move(type)), std::move(callback))});
}

void Linker::define_func(std::string name, FuncType type,
                         std::function<std::vector<Val>(std::span<const Val>)> function) {
  auto callback = [function = std::move(function)](runtime::HostCall&, std::span<const Val> args) {
    return function(args);
  };
  definitions_.push_back(
      {std::move(name), runtime::Func::host(std::make_shared<const FuncType>(std::move(type)), std::move(callback))});
}

runtime::ResourceTypeRef Linker::define_resource(std::string name, std::function<void(uint32_t rep)> drop) {
  auto type = std::make_shared<runtime::ResourceType>();
  type->name = name.substr(name.find('#') + 1);
  type->host_drop = [drop = std::move(drop)](runtime::Store&, uint32_t rep) { drop(rep); };
  type->abi_type = std::make_shared<const abi::ResourceType>(abi::ResourceType{type->name});
  resources_.emplace_back(std::move(name), type);
  return type;
}

runtime::ResourceTypeRef Linker::define_host_object_resource(std::string name) {
  auto type = std::make_shared<runtime::ResourceType>();
  type->name = name.substr(name.find('#') + 1);
  type->host_drop = &Store::drop_host_object;
  type->abi_type = std::make_shared<const abi::ResourceType>(abi::ResourceType{type->name});
  resources_.emplace_back(std::move(name), type);
  return type;
}

void Linker::define_instance(std::string name, const Instance& instance) {
  instances_.emplace_back(std::move(name), instance.runtime());
}

namespace {

// What a definition supplies, as the validator types it: the one link check
// compares these with the component's imports (validate::instantiation_mismatch).
validate::ExternDesc func_desc(const runtime::FuncRef& func) {
  validate::ExternDesc d;
  d.sort = binary::Sort::Func;
  d.func = func->type_ref();
  return d;
}

// Whether another instance's exports can supply an import of `type`: every
// export it names, of the same sort, functions of equal types with any
// resource taken for any resource (see above).
void check_instance_supply(const std::string& name, const validate::InstanceType& type,
                           const runtime::InstanceItems& supplied, std::vector<std::string>& problems) {
  const abi::SameResource any_resource = [](const abi::ResourceType&, const abi::ResourceType&) { return true; };
  for (const auto& e : type.exports) {
    const std::string full = name + "#" + e.name;
    const runtime::Item* item = supplied.find(e.name);
    if (!item) {
      problems.push_back(full + " (not exported by the supplied instance)");
      continue;
    }
    if (item->sort != e.desc.sort) {
      problems.push_back(fmt::format("{} (a {} is supplied for a {})", full, binary::to_string(item->sort),
                                     binary::to_string(e.desc.sort)));
      continue;
    }
    if (e.desc.sort == binary::Sort::Func) {
      const FuncType& have = item->func->type();
      const FuncType& want = *e.desc.func;
      bool same = have.async == want.async && have.params.size() == want.params.size() &&
                  have.param_names == want.param_names && !have.result == !want.result;
      for (size_t i = 0; same && i < have.params.size(); ++i)
        same = abi::equal(*have.params[i], *want.params[i], any_resource);
      if (same && have.result) same = abi::equal(*have.result, *want.result, any_resource);
      if (!same)
        problems.push_back(fmt::format("{} (expected {}, supplied {})", full, validate::to_string(want),
                                       validate::to_string(have)));
    } else if (e.desc.sort == binary::Sort::Type && e.desc.resource && !item->resource) {
      problems.push_back(full + " (a resource type is expected)");
    } else if (e.desc.sort == binary::Sort::Instance && e.desc.instance && item->instance) {
      check_instance_supply(full, *e.desc.instance, *item->instance, problems);
    }
  }
}

validate::ExternDesc resource_desc(const runtime::ResourceTypeRef& resource) {
  validate::ExternDesc d;
  d.sort = binary::Sort::Type;
  d.resource = resource->abi_type;
  return d;
}

runtime::FuncRef stub(const std::string& name, std::shared_ptr<const FuncType> type) {
  return runtime::Func::host(std::move(type), [name](runtime::HostCall&, std::span<const Val>) -> std::vector<Val> {
    throw_trap("called the stub of unsupplied import `" + name + "`");
  });
}

}  // namespace

Instance Linker::instantiate(Store& store, const Component& component) const {
  std::map<std::string, runtime::Item, std::less<>> imports;
  std::map<std::string, validate::ExternDesc> supplied;  // what is type-checked, by import name
  std::vector<std::string> missing;
  auto find = [&](const std::string& name) -> runtime::FuncRef {
    for (const auto& d : definitions_)
      if (d.name == name) return d.func;
    return nullptr;
  };
  // A wrapped callable made for the import's type, or a link error naming
  // both when its C++ signature does not fit.
  auto find_wrapped = [&](const std::string& name,
                          const std::shared_ptr<const FuncType>& type) -> runtime::FuncRef {
    for (const auto& w : wrapped_) {
      if (w.name != name) continue;
      std::string why;
      if (auto f = w.make(type, why)) return f;
      throw Error(ErrorKind::Link, fmt::format("import `{}` is {}; the C++ function {} does not fit it: {}", name,
                                               validate::to_string(*type), host::type_name(w.signature), why));
    }
    return nullptr;
  };
  auto find_resource = [&](const std::string& name) -> runtime::ResourceTypeRef {
    for (const auto& [n, type] : resources_)
      if (n == name) return type;
    return nullptr;
  };
  auto find_instance = [&](const std::string& name) -> const runtime::ComponentInstance* {
    for (auto it = instances_.rbegin(); it != instances_.rend(); ++it)  // the latest definition wins
      if (it->first == name) return it->second.get();
    return nullptr;
  };
  for (const auto& import : component.type().imports) {
    runtime::Item item;
    item.sort = import.desc.sort;
    if (import.desc.sort == binary::Sort::Func) {
      item.func = find(import.name);
      if (!item.func) item.func = find_wrapped(import.name, import.desc.func);
      if (item.func) supplied[import.name] = func_desc(item.func);
      if (!item.func && stub_imports_) item.func = stub(import.name, import.desc.func);  // stubs are not checked
      if (!item.func) missing.push_back(import.name);
    } else if (import.desc.sort == binary::Sort::Instance && find_instance(import.name)) {
      // Another instance's exports: their types name that component's own
      // resource identities, which the runtime binds to the actual ones by
      // name as it instantiates, so resources compare loosely here.
      const runtime::ComponentInstance& other = *find_instance(import.name);
      item.instance = other.exports_ref();
      std::vector<std::string> problems;
      check_instance_supply(import.name, *import.desc.instance, *item.instance, problems);
      if (!problems.empty()) {
        std::string list;
        for (const auto& p : problems) list += "\n  " + p;
        throw Error(ErrorKind::Link, "instance import `" + import.name + "` cannot be supplied:" + list);
      }
    } else if (import.desc.sort == binary::Sort::Instance) {
      auto items = std::make_shared<runtime::InstanceItems>();
      auto type = std::make_shared<validate::InstanceType>();
      bool stubbed = false;
      for (const auto& e : import.desc.instance->exports) {
        const std::string full = import.name + "#" + e.name;
        runtime::Item inner;
        inner.sort = e.desc.sort;
        if (e.desc.sort == binary::Sort::Func) {
          inner.func = find(full);
          if (!inner.func) inner.func = find_wrapped(full, e.desc.func);
          if (inner.func) type->exports.push_back({e.name, func_desc(inner.func)});
          if (!inner.func && stub_imports_) {
            inner.func = stub(full, e.desc.func);
            stubbed = true;
          }
          if (!inner.func) {
            missing.push_back(full);
            continue;
          }
        } else if (e.desc.sort == binary::Sort::Type && e.desc.resource) {
          inner.resource = find_resource(full);
          if (!inner.resource) {
            missing.push_back(full + " (resource)");
            continue;
          }
          type->exports.push_back({e.name, resource_desc(inner.resource)});
        } else if (e.desc.sort == binary::Sort::Type && e.desc.value) {
          inner.value_type = e.desc.value;
          type->exports.push_back({e.name, e.desc});
        } else {
          missing.push_back(full + " (" + binary::to_string(e.desc.sort) + ")");
          continue;
        }
        items->exports.emplace_back(e.name, inner);
      }
      item.instance = items;
      if (!stubbed) {  // an instance with stubs runs until one is called: not checked
        validate::ExternDesc d;
        d.sort = binary::Sort::Instance;
        d.instance = std::move(type);
        supplied[import.name] = std::move(d);
      }
    } else if (import.desc.sort == binary::Sort::Type && import.desc.resource) {
      item.resource = find_resource(import.name);
      if (item.resource) supplied[import.name] = resource_desc(item.resource);
      else missing.push_back(import.name + " (resource)");
    } else if (import.desc.sort == binary::Sort::Type && import.desc.value) {
      item.value_type = import.desc.value;
    } else {
      missing.push_back(import.name + " (" + binary::to_string(import.desc.sort) + ")");
    }
    imports.emplace(import.name, std::move(item));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += "\n  " + m;
    throw Error(ErrorKind::Link, "missing imports:" + list);
  }
  if (const auto mismatch = validate::instantiation_mismatch(component.type(), supplied))
    throw Error(ErrorKind::Link, fmt::format("import `{}` has the wrong type: {}\n  expected: {}\n  supplied: {}",
                                             mismatch->import, mismatch->why, validate::to_string(mismatch->expected),
                                             validate::to_string(supplied.at(mismatch->import))));
  return Instance(store.runtime().instantiate(component.compiled(), imports));
}

}  // namespace cmhost
