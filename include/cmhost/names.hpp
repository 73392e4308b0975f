// Import and export names (the Explainer's `externname`) split into their
// parts: `ns:pkg/iface@1.0.0`, `[method]file.read`, `run`.
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
};

// Parses a name; on failure returns nullopt and, if `why` is given, says
// why. Nested namespaces/projections (🪺) are not accepted.
std::optional<ParsedExternName> parse_extern_name(std::string_view name, std::string* why = nullptr);

// `label` of the Explainer: kebab-case words or acronyms.
bool is_label(std::string_view text);

}  // namespace cmhost
