#pragma once

#include <string>

namespace cmhost::tools {

// `cmhost inspect FILE`: prints the component's world as WIT, as
// `wasm-tools component wit` does. Returns the process exit status: 0 on
// success, 2 on read, decode or validation errors (message on stderr).
int run_inspect(const std::string& file);

}  // namespace cmhost::tools
