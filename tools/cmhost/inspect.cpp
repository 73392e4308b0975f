#include "inspect.hpp"

#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <vector>

#include "cmhost/error.hpp"
#include "cmhost/types.hpp"
#include "support/files.hpp"
#include "wit/printer.hpp"

namespace cmhost::tools {

int run_inspect(const std::string& file) {
  try {
    const std::vector<uint8_t> bytes = support::read_file(file);
    // Decoding and validation give the component's type; its core modules
    // need not be compiled (as Component::from_file would) to print it.
    fmt::print("{}", component_wit(ComponentInfo::from_bytes(bytes)));
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "cmhost: {}: {}\n", to_string(e.kind()), e.what());
    return 2;
  }
}

}  // namespace cmhost::tools
