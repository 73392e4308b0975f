// Reading a whole file, with a message that says why it cannot be read:
// the CLI's commands and Component::from_file share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cmhost::support {

// The file's bytes. Error (Usage) "cannot read PATH: REASON" when it is
// missing, a directory, or unreadable.
std::vector<uint8_t> read_file(const std::string& path);
// The same as text.
std::string read_text_file(const std::string& path);

}  // namespace cmhost::support
