// The types of tests/components/host-async.wat's async imports, for the
// tests that link it.
#pragma once

#include "cmhost/cmhost.hpp"

namespace cmhost::testing_support {

// slow-double: async func(x: u32) -> u32
inline FuncType slow_double_type() {
  FuncType t;
  t.async = true;
  t.param_names = {"x"};
  t.params = {abi::Type::u32()};
  t.result = abi::Type::u32();
  return t;
}

// count-bytes: async func(s: stream<u8>) -> u32
inline FuncType count_bytes_type() {
  FuncType t;
  t.async = true;
  t.param_names = {"s"};
  t.params = {abi::Type::stream(abi::Type::u8())};
  t.result = abi::Type::u32();
  return t;
}

}  // namespace cmhost::testing_support
