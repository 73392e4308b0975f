// Import and export names (the Explainer's `externname`) split into their
// parts: `ns:pkg/iface@1.0.0`, `[method]file.read`, `run`; and the names of
// an instance's items, `ns:pkg/iface@1.0.0#run`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cmhost {

struct ParsedExternName {
  enum class Kind : uint8_t { Label, Constructor, Method, Static, Interface };
  Kind kind = Kind::Label;
  // Legacy `[async]`, `[async method]` and `[async static]` prefixes. They are
  // not in the current Explainer (async is a function type property now).
  bool legacy_async = false;
  std::string resource;  // Constructor, Method, Static: the resource label
  std::string label;     // Label: the name. Method, Static: the function label
  std::string namespace_name, package, interface;  // Interface
  std::optional<std::string> version;              // Interface: after '@'
  // parse_extern_path: the name of the item after `#` (empty: none).
  std::string member;
};

// Parses a name; on failure returns nullopt and, if `why` is given, says
// why. Nested namespaces/projections (🪺) are not accepted.
std::optional<ParsedExternName> parse_extern_name(std::string_view name, std::string* why = nullptr);

// A name of an instance's item as a Linker defines it and Instance::func
// finds it: an extern name, then optionally `#` and the item's name within
// the instance the extern name imports or exports, itself an extern name
// (`wasi:cli/stdout@0.2.0#get-stdout`, `wasi:filesystem/types@0.2.0#[method]descriptor.stat`).
// Gives the extern name's parts as parse_extern_name does, with `member`
// set to the item's name; on failure nullopt, saying why in `why` if given.
std::optional<ParsedExternName> parse_extern_path(std::string_view name, std::string* why = nullptr);

// `label` of the Explainer: kebab-case words or acronyms.
bool is_label(std::string_view text);

}  // namespace cmhost
