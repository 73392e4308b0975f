// What the public classes of cmhost.hpp hold behind their opaque `Impl`s:
// the runtime's objects, and the host room's.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cmhost/cmhost.hpp"
#include "host/event_loop.hpp"
#include "host/link.hpp"
#include "host/objects.hpp"
#include "runtime/runtime.hpp"

namespace cmhost {

class Component::Impl {
 public:
  // First, so destroyed last: the compiled modules belong to the engine.
  std::shared_ptr<engine::Engine> engine;
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  runtime::CompiledComponent compiled;
};

class Store::Impl {
 public:
  explicit Impl(std::shared_ptr<engine::Engine> shared_engine)
      : engine(std::move(shared_engine)), runtime(*engine) {
    runtime.scheduler().set_host_driver(&loop);
    loop.watch_deadline(*engine, runtime.core());
  }
  // Out of other stores' loops before its runtime goes: none steps it meanwhile.
  ~Impl() { loop.detach(); }
  // First, so destroyed last: everything below runs on the engine.
  std::shared_ptr<engine::Engine> engine;
  // Destroyed after the runtime store: a guest's handles dropped as its
  // instances go reach the host objects.
  host::Objects objects;
  // The host's side of the event loop; after the runtime store too, so that
  // host ends outliving the store see it gone.
  host::HostLoop loop;
  runtime::Store runtime;
  // Compiled lifts and lowers of stream and future element types (and of
  // lists of them) for the dynamic ends, by type and width: every stream a
  // guest makes at one `stream.new` shares its element type.
  struct CompiledElement {
    abi::TypeRef type;  // keeps the key alive
    std::unique_ptr<abi::ValueAbi> abi;
  };
  std::map<std::tuple<const abi::Type*, abi::AddrWidth, bool>, CompiledElement> element_abis;
  // Element types a typed end's C++ type was found to match: an end made
  // per call then skips the walk of its type, which costs about as much as
  // reading a hundred elements. A few are kept; the oldest goes first.
  struct MatchedElement {
    abi::TypeRef type;  // keeps the key alive
    bool (*matches)(const abi::Type&) = nullptr;
  };
  std::array<MatchedElement, 16> matched_elements;
  size_t next_matched_element = 0;
  StoreLimits limits;
};

class Caller::Context {
 public:
  explicit Context(runtime::HostCall& call) : call(call) {}
  runtime::HostCall& call;
};

class Completion::Impl {
 public:
  explicit Impl(std::shared_ptr<runtime::HostCompletion> completion) : completion(std::move(completion)) {}
  std::shared_ptr<runtime::HostCompletion> completion;
};

class PendingCall::Impl {
 public:
  Impl(std::shared_ptr<const runtime::AsyncCallResult> result, const runtime::Store* store)
      : result(std::move(result)), store(store) {}
  std::shared_ptr<const runtime::AsyncCallResult> result;
  const runtime::Store* store;  // whose loop runs the call
  bool taken = false;
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
  Impl(std::shared_ptr<runtime::ComponentInstance> instance, const runtime::Store* store,
       std::shared_ptr<const void> made_by = nullptr)
      : instance(std::move(instance)), store(store), made_by(std::move(made_by)) {}
  std::shared_ptr<runtime::ComponentInstance> instance;
  const runtime::Store* store;  // where it lives
  std::shared_ptr<const void> made_by;  // the InstancePre's (TypedExport asks)
};

class InstancePre::Impl {
 public:
  Component component;
  std::map<std::string, runtime::Item, std::less<>> imports;  // host::link's, checked
  // The stores of the instances it links to (Linker::define_instance), by import.
  std::vector<std::pair<std::string, const runtime::Store*>> instance_stores;
};

class Linker::Impl {
 public:
  host::Definitions definitions;
  // The store of each instance given to define_instance, by name.
  std::vector<std::pair<std::string, const runtime::Store*>> instance_stores;
  bool allow_shadowing = false;
  // Makes room for a definition of `name`: Error (Usage) naming it when it
  // is defined already, whatever its kind, unless shadowing is allowed,
  // when the earlier definition is dropped.
  void claim(const std::string& name);
};

}  // namespace cmhost
