#include "cmhost/error.hpp"

namespace cmhost {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Decode: return "decode error";
    case ErrorKind::Validate: return "validation error";
    case ErrorKind::Link: return "link error";
    case ErrorKind::Trap: return "trap";
    case ErrorKind::InvalidValue: return "invalid value";
    case ErrorKind::Usage: return "usage error";
  }
  return "error";
}

void throw_trap(const std::string& message) { throw Error(ErrorKind::Trap, message); }
void throw_invalid_value(const std::string& message) {
  throw Error(ErrorKind::InvalidValue, message);
}

}  // namespace cmhost
