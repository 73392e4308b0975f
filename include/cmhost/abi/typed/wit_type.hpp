// The component type a C++ type stands for, where the C++ type says it
// whole: wit_type<T>() for numbers, strings, lists, options, results,
// tuples, fixed-length lists, maps, streams and futures of such, and for
// named types with a WitType<T> specialisation (cmhost bindgen writes one
// for each record, variant, enum and flags type it declares). What the host
// makes streams and futures of needs it: StreamWriter<T>(store) and
// FutureWriter<T>(store) take their element type from here. Own and
// borrow handles have none (their resource type is the host's run-time
// choice): pass the element type explicitly for those. (bindgen writes no
// WitType for a named type holding any handle.)
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/typed/handle.hpp"
#include "cmhost/abi/typed/variant.hpp"

namespace cmhost::abi::typed {

// Specialise with `static TypeRef get()` for a named type.
template <class T>
struct WitType;

template <class T>
TypeRef wit_type() {
  if constexpr (std::is_void_v<T>)
    return nullptr;
  else
    return WitType<T>::get();
}

// Whether wit_type<T>() is defined.
template <class T>
inline constexpr bool has_wit_type_v = std::is_void_v<T> || requires { WitType<T>::get(); };

#define CMHOST_WIT_PRIMITIVE(cpp, make) \
  template <>                            \
  struct WitType<cpp> {                  \
    static TypeRef get() { return Type::make(); } \
  };
CMHOST_WIT_PRIMITIVE(bool, bool_)
CMHOST_WIT_PRIMITIVE(int8_t, s8)
CMHOST_WIT_PRIMITIVE(uint8_t, u8)
CMHOST_WIT_PRIMITIVE(int16_t, s16)
CMHOST_WIT_PRIMITIVE(uint16_t, u16)
CMHOST_WIT_PRIMITIVE(int32_t, s32)
CMHOST_WIT_PRIMITIVE(uint32_t, u32)
CMHOST_WIT_PRIMITIVE(int64_t, s64)
CMHOST_WIT_PRIMITIVE(uint64_t, u64)
CMHOST_WIT_PRIMITIVE(float, f32)
CMHOST_WIT_PRIMITIVE(double, f64)
CMHOST_WIT_PRIMITIVE(char32_t, char_)
CMHOST_WIT_PRIMITIVE(std::string, string)
CMHOST_WIT_PRIMITIVE(ErrorContext, error_context)
#undef CMHOST_WIT_PRIMITIVE

template <class T, class A>
struct WitType<std::vector<T, A>> {
  static TypeRef get() { return Type::list(wit_type<T>()); }
};
template <class T, size_t N>
struct WitType<std::array<T, N>> {
  static TypeRef get() { return Type::fixed_list(wit_type<T>(), static_cast<uint32_t>(N)); }
};
template <class K, class V, class C, class A>
struct WitType<std::map<K, V, C, A>> {
  static TypeRef get() { return Type::map(wit_type<K>(), wit_type<V>()); }
};
template <class T>
struct WitType<std::optional<T>> {
  static TypeRef get() { return Type::option(wit_type<T>()); }
};
template <class T, class E>
struct WitType<Result<T, E>> {
  static TypeRef get() { return Type::result(wit_type<T>(), wit_type<E>()); }
};
template <class... Ts>
struct WitType<std::tuple<Ts...>> {
  static TypeRef get() { return Type::tuple({wit_type<Ts>()...}); }
};
template <class T>
struct WitType<Stream<T>> {
  static TypeRef get() { return Type::stream(wit_type<T>()); }
};
template <class T>
struct WitType<Future<T>> {
  static TypeRef get() { return Type::future(wit_type<T>()); }
};

}  // namespace cmhost::abi::typed
