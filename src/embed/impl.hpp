// What the public classes of cmhost.hpp hold behind their opaque `Impl`s:
// the runtime's objects, and the host room's.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "host/link.hpp"
#include "host/objects.hpp"
#include "runtime/runtime.hpp"

namespace cmhost {

class Component::Impl {
 public:
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  runtime::CompiledComponent compiled;
};

class Store::Impl {
 public:
  explicit Impl(engine::Engine& engine) : runtime(engine) {}
  // Destroyed after the runtime store: a guest's handles dropped as its
  // instances go reach the host objects.
  host::Objects objects;
  runtime::Store runtime;
};

class Caller::Context {
 public:
  explicit Context(runtime::HostCall& call) : call(call) {}
  runtime::HostCall& call;
};

class HostResourceBase::Impl {
 public:
  runtime::ResourceTypeRef type;
};

class Func::Impl {
 public:
  explicit Impl(runtime::FuncRef func) : func(std::move(func)) {}
  runtime::FuncRef func;
};

class Instance::Impl {
 public:
  Impl(std::shared_ptr<runtime::ComponentInstance> instance, const runtime::Store* store)
      : instance(std::move(instance)), store(store) {}
  std::shared_ptr<runtime::ComponentInstance> instance;
  const runtime::Store* store;  // where it lives
};

class Linker::Impl {
 public:
  host::Definitions definitions;
  // The store of each instance given to define_instance, by name.
  std::vector<std::pair<std::string, const runtime::Store*>> instance_stores;
};

}  // namespace cmhost
