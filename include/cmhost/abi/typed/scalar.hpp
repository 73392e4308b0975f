// Scalars in typed values (cmhost/abi/typed.hpp): bool, the integers,
// float, double and char32_t, read from guest memory (Lift), written to it
// (Lower) and crossed as one core value each (to_flat, from_flat, FlatLift).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

namespace detail {
uint32_t canonical_nan32();
uint64_t canonical_nan64();
bool is_nan32(uint32_t bits);
// A Unicode scalar value: what a char holds.
constexpr bool is_scalar_value(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c < 0x110000); }
bool is_nan64(uint64_t bits);
[[noreturn]] void bad_char(const Reader& r, uint32_t c);
}  // namespace detail

// ---- lifts ---------------------------------------------------------------------

template <class T, TypeKind K, AddrWidth W>
struct ScalarLift {
  static constexpr uint32_t size = sizeof(T), align = sizeof(T);
  CMHOST_TYPED_INLINE static T load(const Reader& r, uint64_t p) { return r.read<T>(p); }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, K); }
};

template <AddrWidth W> struct Lift<uint8_t, W> : ScalarLift<uint8_t, TypeKind::U8, W> {};
template <AddrWidth W> struct Lift<int8_t, W> : ScalarLift<int8_t, TypeKind::S8, W> {};
template <AddrWidth W> struct Lift<uint16_t, W> : ScalarLift<uint16_t, TypeKind::U16, W> {};
template <AddrWidth W> struct Lift<int16_t, W> : ScalarLift<int16_t, TypeKind::S16, W> {};
template <AddrWidth W> struct Lift<uint32_t, W> : ScalarLift<uint32_t, TypeKind::U32, W> {};
template <AddrWidth W> struct Lift<int32_t, W> : ScalarLift<int32_t, TypeKind::S32, W> {};
template <AddrWidth W> struct Lift<uint64_t, W> : ScalarLift<uint64_t, TypeKind::U64, W> {};
template <AddrWidth W> struct Lift<int64_t, W> : ScalarLift<int64_t, TypeKind::S64, W> {};

template <AddrWidth W>
struct Lift<bool, W> {
  static constexpr uint32_t size = 1, align = 1;
  static bool load(const Reader& r, uint64_t p) { return *r.at(p) != 0; }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, TypeKind::Bool); }
};

// Floats: NaNs become the canonical NaN, as lifting does.
template <class T, class Bits, TypeKind K>
struct FloatLift {
  static constexpr uint32_t size = sizeof(T), align = sizeof(T);
  static T load(const Reader& r, uint64_t p) {
    Bits bits = r.read<Bits>(p);
    if constexpr (sizeof(T) == 4) {
      if (r.canonicalize_nan() && detail::is_nan32(bits)) bits = detail::canonical_nan32();
    } else {
      if (r.canonicalize_nan() && detail::is_nan64(bits)) bits = detail::canonical_nan64();
    }
    T f;
    std::memcpy(&f, &bits, sizeof(T));
    return f;
  }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, K); }
};
template <AddrWidth W> struct Lift<float, W> : FloatLift<float, uint32_t, TypeKind::F32> {};
template <AddrWidth W> struct Lift<double, W> : FloatLift<double, uint64_t, TypeKind::F64> {};

template <AddrWidth W>
struct Lift<char32_t, W> {
  static constexpr uint32_t size = 4, align = 4;
  static char32_t load(const Reader& r, uint64_t p) {
    const uint32_t c = r.read<uint32_t>(p);
    if (!detail::is_scalar_value(c)) detail::bad_char(r, c);
    return c;
  }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, TypeKind::Char); }
};

// ---- flat scalars -------------------------------------------------------------
//
// Scalars cross as one core value each (CanonicalABI.md lower_flat and
// lift_flat): the C++ value as its i32/i64 bits, and back from them with the
// lift's rules (small integers truncated, any nonzero bool true, a char
// checked, NaNs canonical when the options say so).

template <class T>
inline constexpr bool is_flat_scalar_v =
    std::is_same_v<T, bool> || std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> ||
    std::is_same_v<T, uint16_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, uint32_t> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, uint64_t> || std::is_same_v<T, int64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, char32_t>;

template <class T>
CMHOST_TYPED_INLINE uint64_t to_flat(T v) {
  static_assert(is_flat_scalar_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
  } else if constexpr (std::is_same_v<T, double>) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  } else if constexpr (std::is_same_v<T, char32_t>) {
    const auto c = static_cast<uint32_t>(v);
    if (!detail::is_scalar_value(c))
      throw Error(ErrorKind::InvalidValue, "char code point " + std::to_string(c) + " is not a Unicode scalar value");
    return c;
  } else if constexpr (sizeof(T) == 8) {
    return static_cast<uint64_t>(v);
  } else {
    // Narrower integers travel as i32: two's complement in the low 32 bits.
    return static_cast<uint32_t>(static_cast<int32_t>(v));
  }
}

template <class T>
CMHOST_TYPED_INLINE T from_flat(uint64_t bits, const CanonOptions& options) {
  static_assert(is_flat_scalar_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<uint32_t>(bits) != 0;
  } else if constexpr (std::is_same_v<T, float>) {
    auto b = static_cast<uint32_t>(bits);
    if (options.canonicalize_nan && detail::is_nan32(b)) b = detail::canonical_nan32();
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  } else if constexpr (std::is_same_v<T, double>) {
    if (options.canonicalize_nan && detail::is_nan64(bits)) bits = detail::canonical_nan64();
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  } else if constexpr (std::is_same_v<T, char32_t>) {
    const auto c = static_cast<uint32_t>(bits);
    if (!detail::is_scalar_value(c))
      throw Error(ErrorKind::Trap, "char code point " + std::to_string(c) + " is not a Unicode scalar value");
    return c;
  } else {
    return static_cast<T>(bits);  // truncated to the type's width, as lifting does
  }
}

// ---- lowers ------------------------------------------------------------------------

// A scalar's core value under cx's options: to_flat, with canonical NaNs.
template <class T>
CMHOST_TYPED_INLINE uint64_t lower_scalar(const AbiContext& cx, T v) {
  if constexpr (std::is_same_v<T, float>) {
    if (cx.options().canonicalize_nan && v != v) return detail::canonical_nan32();
  } else if constexpr (std::is_same_v<T, double>) {
    if (cx.options().canonicalize_nan && v != v) return detail::canonical_nan64();
  }
  return to_flat(v);
}

template <class T, AddrWidth W>
struct Lower<T, W, std::enable_if_t<is_flat_scalar_v<T>>> {
  static constexpr uint32_t flat_count = 1;
  CMHOST_TYPED_INLINE static void lower_flat(AbiContext& cx, T v, uint64_t* out) { out[0] = lower_scalar(cx, v); }
  CMHOST_TYPED_INLINE static void store(AbiContext& cx, uint64_t p, T v) {
    const uint64_t bits = lower_scalar(cx, v);
    if constexpr (Lift<T, W>::size == 1)
      detail::put<uint8_t>(cx, p, static_cast<uint8_t>(bits));
    else if constexpr (Lift<T, W>::size == 2)
      detail::put<uint16_t>(cx, p, static_cast<uint16_t>(bits));
    else if constexpr (Lift<T, W>::size == 4)
      detail::put<uint32_t>(cx, p, static_cast<uint32_t>(bits));
    else
      detail::put<uint64_t>(cx, p, bits);
  }
};

// ---- flat lifts ----------------------------------------------------------------------

template <class T>
struct FlatLift<T, std::enable_if_t<is_flat_scalar_v<T>>> {
  static T lift(const AbiContext& cx, const uint64_t* in) { return from_flat<T>(in[0], cx.options()); }
};

}  // namespace cmhost::abi::typed
