// Strings in typed values (cmhost/abi/typed.hpp): std::string,
// std::pmr::string, FrameString and std::string_view (read in place), read
// from guest memory and written into the callee's memory with its realloc.
#pragma once

#include <cstdint>
#include <memory_resource>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

// ---- lifts ---------------------------------------------------------------------

// string as an owned std::string or a std::string_view into guest memory.
template <class S, AddrWidth W>
struct StringLift {
  static constexpr uint32_t size = 2 * ptr_size(W), align = ptr_size(W);
  CMHOST_TYPED_INLINE static void load_into(const Reader& r, uint64_t p, S& out)
    requires(!std::is_same_v<S, std::string_view>)
  {
    const auto [ptr, units] = detail::pointer_pair<W>(r, p);
    r.string_into(ptr, units, out);
  }
  CMHOST_TYPED_INLINE static S load(const Reader& r, uint64_t p) {
    const auto [ptr, units] = detail::pointer_pair<W>(r, p);
    if constexpr (std::is_same_v<S, std::string>) {
      return r.string(ptr, units);
    } else if constexpr (std::is_same_v<S, std::pmr::string>) {
      return r.pmr_string(ptr, units);
    } else if constexpr (std::is_same_v<S, std::string_view>) {
      return r.string_view(ptr, units);
    } else {
      S out;
      r.string_into(ptr, units, out);
      return out;
    }
  }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, TypeKind::String); }
};
// std::string, std::pmr::string, FrameString.
template <class A, AddrWidth W>
struct Lift<std::basic_string<char, std::char_traits<char>, A>, W>
    : StringLift<std::basic_string<char, std::char_traits<char>, A>, W> {};
template <AddrWidth W> struct Lift<std::string_view, W> : StringLift<std::string_view, W> {};

// ---- lowers ------------------------------------------------------------------------

// `utf8` in cx's encoding; InvalidValue unless it is well-formed UTF-8.
std::pair<uint64_t, uint64_t> lower_string(AbiContext& cx, std::string_view utf8);

template <class S, AddrWidth W>
struct StringLower {
  static constexpr uint32_t flat_count = 2;
  static void lower_flat(AbiContext& cx, const S& v, uint64_t* out) {
    const auto [ptr, units] = lower_string(cx, std::string_view(v));
    out[0] = ptr;
    out[1] = units;
  }
  static void store(AbiContext& cx, uint64_t p, const S& v) {
    const auto [ptr, units] = lower_string(cx, std::string_view(v));
    detail::put_pair<W>(cx, p, ptr, units);
  }
};
template <class A, AddrWidth W>
struct Lower<std::basic_string<char, std::char_traits<char>, A>, W>
    : StringLower<std::basic_string<char, std::char_traits<char>, A>, W> {};
template <AddrWidth W>
struct Lower<std::string_view, W> : StringLower<std::string_view, W> {};

// ---- flat lifts ----------------------------------------------------------------------

template <class A>
struct FlatLift<std::basic_string<char, std::char_traits<char>, A>> {
  static std::basic_string<char, std::char_traits<char>, A> lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    std::basic_string<char, std::char_traits<char>, A> out;
    Reader(cx).string_into(static_cast<uint32_t>(in[0]), static_cast<uint32_t>(in[1]), out);
    return out;
  }
};
template <>
struct FlatLift<std::string_view> {
  static std::string_view lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    return Reader(cx).string_view(static_cast<uint32_t>(in[0]), static_cast<uint32_t>(in[1]));
  }
};

}  // namespace cmhost::abi::typed
