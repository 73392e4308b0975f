// C++ type names for messages about the embedder's types (a store's user
// data asked for as the wrong type, say).
#pragma once

#include <string>
#include <typeinfo>

namespace cmhost::host {

// The readable name of `type` (`std::vector<int>`, `my::State`).
std::string type_name(const std::type_info& type);

}  // namespace cmhost::host
