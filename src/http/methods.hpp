// wasi:http's `method` variant, either version (both list get, head, post,
// put, delete, connect, options, trace, patch, then other(string)): from the
// name on the wire and back.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <variant>

namespace cmhost::http {

inline constexpr const char* kMethodNames[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                               "CONNECT", "OPTIONS", "TRACE", "PATCH"};
inline constexpr size_t kMethodCount = std::size(kMethodNames);

// `Method` is the variant, `Other` its last case (a name none of the others is).
template <class Method, class Other>
Method method_of_name(const std::string& name) {
  Method out = Other{name};
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((name == kMethodNames[I] ? (out = Method(std::in_place_index<I>), 0) : 0), ...);
  }(std::make_index_sequence<kMethodCount>());
  return out;
}

template <class Method, class Other>
std::string name_of_method(const Method& method) {
  if (const auto* other = std::get_if<Other>(&method)) return other->value;
  return kMethodNames[method.index()];
}

}  // namespace cmhost::http
