#include "type_name.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace cmhost::host {

std::string type_name(const std::type_info& type) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status),
                                                         std::free);
  return status == 0 && demangled ? demangled.get() : type.name();
}

}  // namespace cmhost::host
