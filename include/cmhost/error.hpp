// The one exception type of cmhost: every failure carries a kind and a message
// that says what went wrong and where.
#pragma once

#include <stdexcept>
#include <string>

namespace cmhost {

enum class ErrorKind {
  Decode,        // malformed component binary
  Validate,      // well-formed but ill-typed component
  Link,          // imports missing or of the wrong type
  Trap,          // a spec-defined trap at run time
  InvalidValue,  // a host-supplied value does not match its type
  Usage,         // the API or CLI was used wrongly
};

const char* to_string(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void throw_trap(const std::string& message);
[[noreturn]] void throw_invalid_value(const std::string& message);

}  // namespace cmhost
