#pragma once

#include <string>
#include <vector>

namespace cmhost::tools {

// Checks every vector in `files`; prints one line per failure, one per file
// and a total. Returns 0 when all passed, 1 on failures, 2 on unusable input.
int run_abi_check(const std::vector<std::string>& files, bool verbose);

}  // namespace cmhost::tools
