// Helpers shared by the end-to-end tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cmhost/cmhost.hpp"

namespace cmhost::test {

// A function type from (name, type) parameters and an optional result.
inline FuncType func_type(std::vector<std::pair<std::string, abi::TypeRef>> params, abi::TypeRef result) {
  FuncType t;
  for (auto& [name, type] : params) {
    t.param_names.push_back(name);
    t.params.push_back(type);
  }
  t.result = std::move(result);
  return t;
}

}  // namespace cmhost::test
