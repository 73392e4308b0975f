// Script values against component types: building call arguments and
// checking results.
#pragma once

#include <string>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/val.hpp"
#include "script.hpp"

namespace cmhost::tools::wast {

// The value `v` denotes as a value of `type`. Throws cmhost::Error (Usage)
// saying what does not fit (another kind, an unknown case or field, ...).
abi::Val to_val(const Value& v, const abi::Type& type);

// Whether `actual`, a value of `type`, is the expected one. Floats compare by
// bit pattern, except that an expected `nan` matches any NaN. Throws
// cmhost::Error (Usage) when `expected` cannot be a value of `type` at all.
bool matches(const Value& expected, const abi::Type& type, const abi::Val& actual);

}  // namespace cmhost::tools::wast
