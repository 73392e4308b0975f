// The world of a component as WIT text, the way `wasm-tools component wit`
// prints it.
#pragma once

#include <string>

#include "cmhost/binary.hpp"
#include "cmhost/validate.hpp"

namespace cmhost::tools {

// Prints `package root:component;`, the `world root { ... }` of the
// component's imports and exports, then one `package ns:pkg@version { ... }`
// block per package whose interfaces the world uses, with the full bodies of
// those interfaces (types, resources with their functions, functions).
//
// The order of items, blank lines, `use` statements and `%` escapes follow
// wit-component's decoder (crates/wit-parser/src/decoding.rs) and printer
// (crates/wit-component/src/printing.rs). Throws cmhost::Error (Validate)
// for what WIT cannot express and wasm-tools refuses as well, such as a type
// exported at the top level of the component. `decoded` is the binary that
// `root` was validated from: it gives the order of imports and exports and
// their `implements` attributes.
//
// Names come from the validated types: a use of a named type is the same
// abi::Type object as the type export within one instance type, and resource
// types keep their identity everywhere. Where identity is lost it falls
// short of wasm-tools:
// - primitive types are shared singletons, so a `type t = u32` is declared
//   but its uses print as `u32`;
// - own/borrow handles refer to the resource, not to the name used, so a
//   resource alias (`type headers = fields`) prints as the resource's name;
// - the validator copies records, variants, enums and flags at each import
//   and export, so a `use` of one is recognized by equal name and structure,
//   or under another name (`use a.{t as u}`) only when the copy shares a
//   non-primitive member object with the original;
// - when several interfaces name one resource (`use` chains), a `use` names
//   the one spelled the same, else the first;
// - `@external-id` attributes and docs are not printed.
std::string component_wit(const binary::Component& decoded, const validate::ComponentPlan& root);

}  // namespace cmhost::tools
