#pragma once

#include <string>

namespace cmhost::tools {

// `cmhost invoke FILE 'name(args)'`: instantiates the component and calls one
// export, printing its result as WAVE. Returns the process exit status: 0 on
// success, 1 on a trap, 2 on usage, decode, validation or link errors.
int run_invoke(const std::string& file, const std::string& call, bool stub_imports);

}  // namespace cmhost::tools
