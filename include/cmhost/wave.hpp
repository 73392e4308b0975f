// WAVE, the WebAssembly Value Encoding: the text form of component values
// used by the `wasm-wave` crate and wasmtime's CLI (`true`, `[1, 2]`,
// `{name: "x", size: some(3)}`, `ok("done")`, `{read, write}`, ...).
//
// Printing writes exactly what the crate's writer writes. Parsing accepts the
// crate's syntax: comments, `%`-prefixed labels, record fields in any order
// with `none` fields omitted, `some`/`ok` payloads written bare, multi-line
// strings. Handles (own, borrow, stream, future, error-context) have no WAVE
// form: printing writes a placeholder such as `<own<file> handle 3>`, which
// no parser accepts, and parsing rejects them.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/val.hpp"

namespace cmhost {

// Writes `value` as WAVE. Throws InvalidValue when the value does not match
// `type`.
std::string to_wave(const abi::Type& type, const abi::Val& value);

// Parses one WAVE value of `type`; the text may have whitespace and `//`
// comments around it. Throws InvalidValue naming the line, column and what was
// expected when the text is not such a value.
abi::Val parse_wave(const abi::Type& type, std::string_view text);

// Parses function arguments: WAVE values separated by commas, without the
// surrounding parentheses (`1, "x", some(2)`). A trailing comma is allowed and
// trailing option-typed arguments may be left out (they become `none`).
std::vector<abi::Val> parse_wave_args(std::span<const abi::TypeRef> types, std::string_view text);

}  // namespace cmhost
