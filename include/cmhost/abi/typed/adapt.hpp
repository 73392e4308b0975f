// Adapted types in typed values (cmhost/abi/typed.hpp): a C++ type read
// and written as another, its representation (Adapt<T>).
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>

#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

// ---- adapted types: C++ types read and written as another ---------------------
//
// Adapt<T> gives a C++ type the representation the lifts and lowers know:
//   using repr = R;
//   static const R& get(const T&);  (or R by value)
//   static R& get(T&);              (optional: loads go into it in place)
//   static T make(R&&);
// Generated bindings use three: variant cases (Case), results (Result) and
// flags (Flags).
template <class T, class = void>
struct Adapt;

template <class T>
inline constexpr bool is_adapted_v = requires { typename Adapt<T>::repr; };

template <class T, AddrWidth W>
struct Lift<T, W, std::enable_if_t<is_adapted_v<T>>> {
  using R = typename Adapt<T>::repr;
  static constexpr uint32_t size = Lift<R, W>::size, align = Lift<R, W>::align;
  static T load(const Reader& r, uint64_t p) { return Adapt<T>::make(Lift<R, W>::load(r, p)); }
  static void load_into(const Reader& r, uint64_t p, T& out)
    requires requires(T& t) { { Adapt<T>::get(t) } -> std::same_as<R&>; }
  {
    detail::load_into<R, W>(r, p, Adapt<T>::get(out));
  }
  static bool matches(const Type& t, HandleTypes* found) { return Lift<R, W>::matches(t, found); }
};

template <class T, AddrWidth W>
struct Lower<T, W, std::enable_if_t<is_adapted_v<T>>> {
  using R = typename Adapt<T>::repr;
  static constexpr uint32_t flat_count = Lower<R, W>::flat_count;
  static void lower_flat(AbiContext& cx, const T& v, uint64_t* out) { Lower<R, W>::lower_flat(cx, Adapt<T>::get(v), out); }
  static void store(AbiContext& cx, uint64_t p, const T& v) { Lower<R, W>::store(cx, p, Adapt<T>::get(v)); }
};

template <class T>
struct FlatLift<T, std::enable_if_t<is_adapted_v<T>>> {
  static T lift(const AbiContext& cx, const uint64_t* in) {
    return Adapt<T>::make(FlatLift<typename Adapt<T>::repr>::lift(cx, in));
  }
};

}  // namespace cmhost::abi::typed
