// The world of a component as WIT text, the way `wasm-tools component wit`
// prints it.
#pragma once

#include <string>

#include "cmhost/types.hpp"

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
// exported at the top level of the component. `info` gives the imports and
// exports in binary order with their `implements` attributes.
//
// Names come from the validated types, as wasm-tools takes them from type
// ids: each type import or export has a name id and the id of the name its
// bound referred to (ExternDesc::name_id, alias_of), which tell a
// `use` or `type b = a` from a new type; a use of a named value type is the
// very object of that import or export, and a handle records the name it
// was written with (ComponentInfo::handle_name). Where that is not enough
// it falls short of wasm-tools:
// - a handle written with a resource definition rather than a name prints
//   as the name in scope for that resource, else the first one seen;
// - an alias whose target the world does not name is a new type, where
//   wasm-tools follows the chain of aliases on to a name the world has;
// - a list, option, tuple, result or handle type exported under a name is
//   the object of its definition, so uses of the definition itself (not
//   through the name) print as that name too;
// - `@external-id` attributes and docs are not printed.
std::string component_wit(const ComponentInfo& info);

}  // namespace cmhost::tools
