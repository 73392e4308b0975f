// Helpers shared by the end-to-end tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

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

// Calls `func` expecting a trap; returns the trap's message.
inline std::string trap_message(Store& store, const Func& func, std::vector<Val> args) {
  try {
    func.call(store, args);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Trap) << e.what();
    return e.what();
  }
  ADD_FAILURE() << func.name() << " did not trap";
  return "";
}

}  // namespace cmhost::test
