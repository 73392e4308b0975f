// Linking: what a component's imports are supplied with. The definitions a
// cmhost::Linker holds, resolved against a component's imports into the
// runtime's items and checked by the one link check
// (validate::instantiation_mismatch) before anything is instantiated.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "runtime/runtime.hpp"

namespace cmhost::host {

// Each name is defined once, whatever its kind (cmhost::Linker's rule).
struct Definitions {
  struct Func {
    std::string name;
    runtime::FuncRef func;
  };
  // A function made for the import's own type when linking (a wrapped C++
  // callable), or null with `why` saying why its signature does not fit.
  struct Maker {
    std::string name;
    const std::type_info* signature;  // the callable's, for messages
    std::function<runtime::FuncRef(const std::shared_ptr<const FuncType>& type, std::string& why)> make;
  };
  std::vector<Func> funcs;
  std::vector<Maker> makers;
  std::vector<std::pair<std::string, runtime::ResourceTypeRef>> resources;
  // Instances supplying instance imports: the instance itself, or the
  // instance it exports under `export_name` (an interface it exports).
  struct InstanceSupply {
    std::string name;
    std::shared_ptr<runtime::ComponentInstance> instance;
    std::string export_name;
  };
  std::vector<InstanceSupply> instances;
  bool stub_imports = false;  // unsupplied functions trap when called
};

// The runtime items supplying every import of `type`. Error (Link) listing
// every missing import, or naming the import whose supply has the wrong
// type with the expected and the supplied type.
std::map<std::string, runtime::Item, std::less<>> link(const validate::ComponentType& type,
                                                       const Definitions& defs);

}  // namespace cmhost::host
