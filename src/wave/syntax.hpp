// What WAVE's printer and parser share: the ABI's names, WAVE's reserved
// words and when an option's or result's payload may be written bare. Private to the wave stage.
#pragma once

#include <string_view>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/val.hpp"

namespace cmhost::wave_text {

// The ABI's names both sides speak in.
using abi::Type;
using abi::TypeKind;
using abi::TypeRef;
using abi::Val;
using abi::ValKind;

// WAVE's reserved words. Variant and enum cases spelled like one are written
// with a `%` prefix; record fields and flags never need it.
bool is_keyword(std::string_view label);

// Option and result payloads may be written bare, without `some(...)` or
// `ok(...)`, unless the payload is itself an option or result.
bool is_flattenable(const abi::Type& payload);

}  // namespace cmhost::wave_text
