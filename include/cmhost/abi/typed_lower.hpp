// Typed lowers: the canonical ABI's store and lower_flat specialised at
// compile time for the C++ types of cmhost/abi/typed.hpp, and lift_flat for
// results passed as one core value. What a typed call does with its
// arguments (Instance::typed_func): no Val is built.
//
//   Lower<T, W>::flat_count          how many core values T flattens to
//   Lower<T, W>::lower_flat(cx, v, out)   writes them at out[0 .. flat_count)
//   Lower<T, W>::store(cx, ptr, v)   writes v at ptr (allocated by the caller)
//   FlatLift<T>::lift(cx, in)        reads T from flat_count core values
//
// Strings, lists and maps are allocated in the callee's memory with its
// realloc (which may move memory: nothing here keeps a pointer into it
// across a call). Values the ABI forbids are refused as the dynamic lower
// refuses them: a char that is no Unicode scalar value, ill-formed UTF-8, an
// enum value out of range, a list too long (Error InvalidValue). Floats are
// lowered with canonical NaNs when the options say so.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cmhost/abi/typed.hpp"

namespace cmhost::abi::typed {

// `utf8` in cx's encoding; InvalidValue unless it is well-formed UTF-8.
std::pair<uint64_t, uint64_t> lower_string(AbiContext& cx, std::string_view utf8);
// `count` elements of `size` bytes (their canonical ABI bytes) at `data`.
std::pair<uint64_t, uint64_t> lower_elements(AbiContext& cx, const void* data, uint64_t count, uint32_t size);

namespace detail {
// `bytes` bytes aligned to `align` from the callee's realloc: a trap when
// realloc answers out of bounds or misaligned.
uint64_t allocate(AbiContext& cx, uint32_t align, uint64_t bytes);
// InvalidValue: a list (or map) of `count` elements of `size` bytes is longer
// than the ABI allows.
void check_list_length(uint64_t count, uint32_t size);
[[noreturn]] void bad_enum_value(uint32_t value, size_t count);
// Whether [data, data + n) lies in cx's memory (which realloc may move).
bool inside_memory(const AbiContext& cx, const void* data, uint64_t n);

template <class T>
CMHOST_TYPED_INLINE void put(AbiContext& cx, uint64_t p, T v) {
  std::memcpy(cx.base() + p, &v, sizeof(T));
}
template <AddrWidth W>
CMHOST_TYPED_INLINE void put_pair(AbiContext& cx, uint64_t p, uint64_t a, uint64_t b) {
  put<Addr<W>>(cx, p, static_cast<Addr<W>>(a));
  put<Addr<W>>(cx, p + sizeof(Addr<W>), static_cast<Addr<W>>(b));
}
// A discriminant of `bytes` bytes.
template <uint32_t bytes>
CMHOST_TYPED_INLINE void put_discriminant(AbiContext& cx, uint64_t p, uint32_t d) {
  if constexpr (bytes == 1)
    put<uint8_t>(cx, p, static_cast<uint8_t>(d));
  else if constexpr (bytes == 2)
    put<uint16_t>(cx, p, static_cast<uint16_t>(d));
  else
    put<uint32_t>(cx, p, d);
}
}  // namespace detail

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

template <class T, AddrWidth W, class = void>
struct Lower;

// ---- scalars ----------------------------------------------------------------------

template <class T, AddrWidth W>
struct Lower<T, W, std::enable_if_t<is_flat_scalar_v<T>>> {
  static constexpr uint32_t flat_count = 1;
  CMHOST_TYPED_INLINE static void lower_flat(AbiContext& cx, T v, uint64_t* out) { out[0] = lower_scalar(cx, v); }
  CMHOST_TYPED_INLINE static void store(AbiContext& cx, uint64_t p, T v) {
    const uint64_t bits = lower_scalar(cx, v);
    if constexpr (Canon<T, W>::size == 1)
      detail::put<uint8_t>(cx, p, static_cast<uint8_t>(bits));
    else if constexpr (Canon<T, W>::size == 2)
      detail::put<uint16_t>(cx, p, static_cast<uint16_t>(bits));
    else if constexpr (Canon<T, W>::size == 4)
      detail::put<uint32_t>(cx, p, static_cast<uint32_t>(bits));
    else
      detail::put<uint64_t>(cx, p, bits);
  }
};

template <class E, AddrWidth W>
struct Lower<E, W, std::enable_if_t<is_typed_enum_v<E>>> {
  static constexpr uint32_t flat_count = 1;
  static uint32_t value(E v) {
    const auto d = static_cast<uint32_t>(v);
    if (d >= Enum<E>::count) detail::bad_enum_value(d, Enum<E>::count);
    return d;
  }
  static void lower_flat(AbiContext&, E v, uint64_t* out) { out[0] = value(v); }
  static void store(AbiContext& cx, uint64_t p, E v) {
    detail::put_discriminant<Canon<E, W>::size>(cx, p, value(v));
  }
};

namespace detail {
uint32_t lower_handle(const AbiContext& cx, const Type& type, uint32_t handle);
template <class Tag, TypeKind K, class Handle>
struct HandleLower {
  static constexpr uint32_t flat_count = 1;
  static uint32_t index(AbiContext& cx, Handle v) {
    return lower_handle(cx, handle_type(cx, detail::tag_id<Tag>(), K), v.handle);
  }
  static void lower_flat(AbiContext& cx, Handle v, uint64_t* out) { out[0] = index(cx, v); }
  static void store(AbiContext& cx, uint64_t p, Handle v) {
    const uint32_t i = index(cx, v);
    put<uint32_t>(cx, p, i);
  }
};
}  // namespace detail

template <class Tag, AddrWidth W>
struct Lower<Own<Tag>, W> : detail::HandleLower<Tag, TypeKind::Own, Own<Tag>> {};
template <class Tag, AddrWidth W>
struct Lower<Borrow<Tag>, W> : detail::HandleLower<Tag, TypeKind::Borrow, Borrow<Tag>> {};
template <AddrWidth W>
struct Lower<ErrorContext, W> : detail::HandleLower<ErrorContext, TypeKind::ErrorContext, ErrorContext> {};

template <size_t N, AddrWidth W>
struct Lower<std::bitset<N>, W> {
  static constexpr uint32_t flat_count = 1;
  static void lower_flat(AbiContext&, const std::bitset<N>& v, uint64_t* out) { out[0] = v.to_ulong(); }
  static void store(AbiContext& cx, uint64_t p, const std::bitset<N>& v) {
    detail::put_discriminant<Canon<std::bitset<N>, W>::size>(cx, p, static_cast<uint32_t>(v.to_ulong()));
  }
};

// ---- strings, lists, maps -----------------------------------------------------------

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

namespace detail {
// The elements [data, data + count) as a list in the callee's memory.
template <class T, AddrWidth W>
std::pair<uint64_t, uint64_t> lower_list(AbiContext& cx, const T* data, uint64_t count) {
  constexpr uint32_t size = Canon<T, W>::size;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char32_t> &&
                sizeof(T) == size) {
    return lower_elements(cx, data, count, size);  // numbers cross as one block copy
  } else {
    check_list_length(count, size);
    if constexpr (is_flat_scalar_v<T>) {
      // Scalars the caller points at in guest memory are copied out before
      // realloc can move it.
      if (inside_memory(cx, data, count * sizeof(T))) {
        const std::unique_ptr<T[]> copy(new T[count]);  // not std::vector: vector<bool> has no data()
        std::copy(data, data + count, copy.get());
        return lower_list<T, W>(cx, copy.get(), count);
      }
    }
    const uint64_t ptr = allocate(cx, Canon<T, W>::align, count * size);
    for (uint64_t i = 0; i < count; ++i) Lower<T, W>::store(cx, ptr + i * size, data[i]);
    return {ptr, count};
  }
}
}  // namespace detail

template <class T, AddrWidth W>
struct ListLower {
  static constexpr uint32_t flat_count = 2;
  template <class C>
  static void lower_flat(AbiContext& cx, const C& v, uint64_t* out) {
    const auto [ptr, count] = detail::lower_list<T, W>(cx, v.data(), v.size());
    out[0] = ptr;
    out[1] = count;
  }
  template <class C>
  static void store(AbiContext& cx, uint64_t p, const C& v) {
    const auto [ptr, count] = detail::lower_list<T, W>(cx, v.data(), v.size());
    detail::put_pair<W>(cx, p, ptr, count);
  }
};
template <class T, class A, AddrWidth W>
struct Lower<std::vector<T, A>, W> : ListLower<T, W> {};
// std::vector<bool> (any allocator) packs its bits, so it has no elements to
// point at: each bool is written as its byte, 0 or 1. Its bits are host
// memory, which the realloc before the writes cannot move.
template <class A, AddrWidth W>
struct Lower<std::vector<bool, A>, W> {
  static constexpr uint32_t flat_count = 2;
  static std::pair<uint64_t, uint64_t> lower_bits(AbiContext& cx, const std::vector<bool, A>& v) {
    detail::check_list_length(v.size(), 1);
    const uint64_t ptr = detail::allocate(cx, 1, v.size());
    uint8_t* out = cx.base() + ptr;
    for (size_t i = 0; i < v.size(); ++i) out[i] = v[i] ? 1 : 0;
    return {ptr, v.size()};
  }
  static void lower_flat(AbiContext& cx, const std::vector<bool, A>& v, uint64_t* out) {
    const auto [ptr, count] = lower_bits(cx, v);
    out[0] = ptr;
    out[1] = count;
  }
  static void store(AbiContext& cx, uint64_t p, const std::vector<bool, A>& v) {
    const auto [ptr, count] = lower_bits(cx, v);
    detail::put_pair<W>(cx, p, ptr, count);
  }
};
template <class T, AddrWidth W>
struct Lower<std::span<const T>, W> : ListLower<T, W> {};

template <class K, class V, class C, class A, AddrWidth W>
struct Lower<std::map<K, V, C, A>, W> {
  using E = detail::MapEntry<K, V, W>;
  static constexpr uint32_t flat_count = 2;
  static std::pair<uint64_t, uint64_t> lower_entries(AbiContext& cx, const std::map<K, V, C, A>& v) {
    detail::check_list_length(v.size(), E::size);
    const uint64_t ptr = detail::allocate(cx, E::align, v.size() * E::size);
    uint64_t at = ptr;
    for (const auto& [key, value] : v) {
      Lower<K, W>::store(cx, at + E::offsets[0], key);
      Lower<V, W>::store(cx, at + E::offsets[1], value);
      at += E::size;
    }
    return {ptr, v.size()};
  }
  static void lower_flat(AbiContext& cx, const std::map<K, V, C, A>& v, uint64_t* out) {
    const auto [ptr, count] = lower_entries(cx, v);
    out[0] = ptr;
    out[1] = count;
  }
  static void store(AbiContext& cx, uint64_t p, const std::map<K, V, C, A>& v) {
    const auto [ptr, count] = lower_entries(cx, v);
    detail::put_pair<W>(cx, p, ptr, count);
  }
};

template <class T, size_t N, AddrWidth W>
struct Lower<std::array<T, N>, W> {
  static constexpr uint32_t flat_count = N * Lower<T, W>::flat_count;
  static void lower_flat(AbiContext& cx, const std::array<T, N>& v, uint64_t* out) {
    for (size_t i = 0; i < N; ++i) Lower<T, W>::lower_flat(cx, v[i], out + i * Lower<T, W>::flat_count);
  }
  static void store(AbiContext& cx, uint64_t p, const std::array<T, N>& v) {
    for (size_t i = 0; i < N; ++i) Lower<T, W>::store(cx, p + i * Canon<T, W>::size, v[i]);
  }
};

// ---- variants -----------------------------------------------------------------------
//
// Core values are bit patterns (i32 and f32 in the low 32 bits, zero above),
// so a case's payload needs no conversion to the joined flat types: it is
// written in place after the discriminant, and the slots it leaves are 0.

template <AddrWidth W>
struct Lower<std::monostate, W> {
  static constexpr uint32_t flat_count = 0;
  static void lower_flat(AbiContext&, std::monostate, uint64_t*) {}
  static void store(AbiContext&, uint64_t, std::monostate) {}
};

template <class... Cs, AddrWidth W>
struct Lower<std::variant<Cs...>, W> {
  using L = detail::CaseLayout<W, Cs...>;
  static constexpr uint32_t flat_count = 1 + std::max({uint32_t{0}, Lower<Cs, W>::flat_count...});
  static void lower_flat(AbiContext& cx, const std::variant<Cs...>& v, uint64_t* out) {
    std::fill(out, out + flat_count, uint64_t{0});
    out[0] = v.index();
    std::visit([&](const auto& payload) { Lower<std::decay_t<decltype(payload)>, W>::lower_flat(cx, payload, out + 1); },
               v);
  }
  static void store(AbiContext& cx, uint64_t p, const std::variant<Cs...>& v) {
    detail::put_discriminant<L::disc>(cx, p, static_cast<uint32_t>(v.index()));
    std::visit(
        [&](const auto& payload) { Lower<std::decay_t<decltype(payload)>, W>::store(cx, p + L::payload_offset, payload); },
        v);
  }
};

template <class T, AddrWidth W>
struct Lower<T, W, std::enable_if_t<is_adapted_v<T>>> {
  using R = typename Adapt<T>::repr;
  static constexpr uint32_t flat_count = Lower<R, W>::flat_count;
  static void lower_flat(AbiContext& cx, const T& v, uint64_t* out) { Lower<R, W>::lower_flat(cx, Adapt<T>::get(v), out); }
  static void store(AbiContext& cx, uint64_t p, const T& v) { Lower<R, W>::store(cx, p, Adapt<T>::get(v)); }
};

template <class T, AddrWidth W>
struct Lower<std::optional<T>, W> {
  using L = detail::CaseLayout<W, std::monostate, T>;
  static constexpr uint32_t flat_count = 1 + Lower<T, W>::flat_count;
  static void lower_flat(AbiContext& cx, const std::optional<T>& v, uint64_t* out) {
    std::fill(out, out + flat_count, uint64_t{0});
    if (!v) return;
    out[0] = 1;
    Lower<T, W>::lower_flat(cx, *v, out + 1);
  }
  static void store(AbiContext& cx, uint64_t p, const std::optional<T>& v) {
    detail::put<uint8_t>(cx, p, v ? 1 : 0);
    if (v) Lower<T, W>::store(cx, p + L::payload_offset, *v);
  }
};

// ---- records and tuples ---------------------------------------------------------------

template <class T, AddrWidth W>
struct Lower<T, W, std::void_t<decltype(Record<T>::fields)>> {
  using Fields = detail::FieldsOf<T>;
  template <size_t I>
  using FieldType = typename std::tuple_element_t<I, Fields>::type;
  static constexpr uint32_t flat_count = []<size_t... I>(std::index_sequence<I...>) {
    return (uint32_t{0} + ... + Lower<FieldType<I>, W>::flat_count);
  }(std::make_index_sequence<std::tuple_size_v<Fields>>{});

  static void lower_flat(AbiContext& cx, const T& v, uint64_t* out) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((Lower<FieldType<I>, W>::lower_flat(cx, v.*(std::get<I>(Record<T>::fields).member), out),
        out += Lower<FieldType<I>, W>::flat_count),
       ...);
    }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
  }
  static void store(AbiContext& cx, uint64_t p, const T& v) {
    using L = typename Canon<T, W>::L;
    [&]<size_t... I>(std::index_sequence<I...>) {
      (Lower<FieldType<I>, W>::store(cx, p + L::offsets[I], v.*(std::get<I>(Record<T>::fields).member)), ...);
    }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
  }
};

template <class... Ts, AddrWidth W>
struct Lower<std::tuple<Ts...>, W> {
  static constexpr uint32_t flat_count = (uint32_t{0} + ... + Lower<Ts, W>::flat_count);
  static void lower_flat(AbiContext& cx, const std::tuple<Ts...>& v, uint64_t* out) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((Lower<Ts, W>::lower_flat(cx, std::get<I>(v), out), out += Lower<Ts, W>::flat_count), ...);
    }(std::index_sequence_for<Ts...>{});
  }
  static void store(AbiContext& cx, uint64_t p, const std::tuple<Ts...>& v) {
    using L = detail::FieldLayout<W, Ts...>;
    [&]<size_t... I>(std::index_sequence<I...>) {
      (Lower<Ts, W>::store(cx, p + L::offsets[I], std::get<I>(v)), ...);
    }(std::index_sequence_for<Ts...>{});
  }
};

// ---- flat lifts ---------------------------------------------------------------------
//
// lift_flat for 32-bit memories: a value from its core values, with the
// rules of lifting: narrower integers truncated, any nonzero bool true,
// chars and discriminants checked (a trap), NaNs canonical by the options;
// strings, lists and maps read from the context's memory at the pointer and
// length they carry (views point into it).

template <class T, class = void>
struct FlatLift;

template <class T>
struct FlatLift<T, std::enable_if_t<is_flat_scalar_v<T>>> {
  static T lift(const AbiContext& cx, const uint64_t* in) { return from_flat<T>(in[0], cx.options()); }
};
template <class E>
struct FlatLift<E, std::enable_if_t<is_typed_enum_v<E>>> {
  static E lift(const AbiContext&, const uint64_t* in) {
    const auto d = static_cast<uint32_t>(in[0]);
    if (d >= Enum<E>::count) throw_trap("enum discriminant " + std::to_string(d) + " is out of range");
    return static_cast<E>(d);
  }
};
template <size_t N>
struct FlatLift<std::bitset<N>> {
  static std::bitset<N> lift(const AbiContext&, const uint64_t* in) {
    return std::bitset<N>(static_cast<uint32_t>(in[0]));
  }
};
template <class Tag>
struct FlatLift<Own<Tag>> {
  static Own<Tag> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Tag>(), TypeKind::Own), static_cast<uint32_t>(in[0]))};
  }
};
template <class Tag>
struct FlatLift<Borrow<Tag>> {
  static Borrow<Tag> lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<Tag>(), TypeKind::Borrow), static_cast<uint32_t>(in[0]))};
  }
};
template <>
struct FlatLift<ErrorContext> {
  static ErrorContext lift(const AbiContext& cx, const uint64_t* in) {
    return {detail::lift_handle(cx, detail::handle_type(cx, detail::tag_id<ErrorContext>(), TypeKind::ErrorContext),
                                static_cast<uint32_t>(in[0]))};
  }
};
namespace detail {
// Usage unless cx's memory is 32-bit, as the flat lifts of pointers need.
void require_memory32(const AbiContext& cx);
}  // namespace detail

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
template <class T, class A>
struct FlatLift<std::vector<T, A>> {
  static std::vector<T, A> lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    const Reader reader(cx);
    return Canon<std::vector<T, A>, AddrWidth::I32>::load_elements(reader, static_cast<uint32_t>(in[0]),
                                                                  static_cast<uint32_t>(in[1]));
  }
};
template <class K, class V, class C, class A>
struct FlatLift<std::map<K, V, C, A>> {
  static std::map<K, V, C, A> lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    const Reader reader(cx);
    return Canon<std::map<K, V, C, A>, AddrWidth::I32>::load_entries(reader, static_cast<uint32_t>(in[0]),
                                                                    static_cast<uint32_t>(in[1]));
  }
};
template <>
struct FlatLift<std::monostate> {
  static std::monostate lift(const AbiContext&, const uint64_t*) { return {}; }
};
template <class T, size_t N>
struct FlatLift<std::array<T, N>> {
  static std::array<T, N> lift(const AbiContext& cx, const uint64_t* in) {
    constexpr uint32_t step = Lower<T, AddrWidth::I32>::flat_count;
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<T, N>{FlatLift<T>::lift(cx, in + I * step)...};
    }(std::make_index_sequence<N>{});
  }
};
template <class... Ts>
struct FlatLift<std::tuple<Ts...>> {
  static std::tuple<Ts...> lift(const AbiContext& cx, const uint64_t* in) {
    constexpr std::array<uint32_t, sizeof...(Ts)> counts{Lower<Ts, AddrWidth::I32>::flat_count...};
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Ts...>{FlatLift<Ts>::lift(cx, in + offset_of(counts, I))...};
    }(std::index_sequence_for<Ts...>{});
  }
  static constexpr uint32_t offset_of(const std::array<uint32_t, sizeof...(Ts)>& counts, size_t i) {
    uint32_t at = 0;
    for (size_t k = 0; k < i; ++k) at += counts[k];
    return at;
  }
};
template <class T>
struct FlatLift<std::optional<T>> {
  static std::optional<T> lift(const AbiContext& cx, const uint64_t* in) {
    const auto d = static_cast<uint32_t>(in[0]);
    if (d > 1) throw_trap("option discriminant " + std::to_string(d) + " is out of range");
    if (d == 0) return std::nullopt;
    return FlatLift<T>::lift(cx, in + 1);
  }
};
template <class... Cs>
struct FlatLift<std::variant<Cs...>> {
  using V = std::variant<Cs...>;
  static V lift(const AbiContext& cx, const uint64_t* in) {
    const auto d = static_cast<uint32_t>(in[0]);
    if (d >= sizeof...(Cs)) throw_trap("variant discriminant " + std::to_string(d) + " is out of range");
    static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
      return std::array<V (*)(const AbiContext&, const uint64_t*), sizeof...(Cs)>{
          [](const AbiContext& cx, const uint64_t* payload) -> V {
            return V(std::in_place_index<I>, FlatLift<std::variant_alternative_t<I, V>>::lift(cx, payload));
          }...};
    }(std::index_sequence_for<Cs...>{});
    return cases[d](cx, in + 1);
  }
};
template <class T>
struct FlatLift<T, std::enable_if_t<is_adapted_v<T>>> {
  static T lift(const AbiContext& cx, const uint64_t* in) {
    return Adapt<T>::make(FlatLift<typename Adapt<T>::repr>::lift(cx, in));
  }
};
template <class T>
struct FlatLift<T, std::void_t<decltype(Record<T>::fields)>> {
  using Fields = detail::FieldsOf<T>;
  template <size_t I>
  using FieldType = typename std::tuple_element_t<I, Fields>::type;
  static T lift(const AbiContext& cx, const uint64_t* in) {
    T out{};
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((out.*(std::get<I>(Record<T>::fields).member) = FlatLift<FieldType<I>>::lift(cx, in),
        in += Lower<FieldType<I>, AddrWidth::I32>::flat_count),
       ...);
    }(std::make_index_sequence<std::tuple_size_v<Fields>>{});
    return out;
  }
};

namespace detail {
template <class T, class = void>
struct FlatLiftable : std::bool_constant<is_flat_scalar_v<T> || is_typed_enum_v<T>> {};
template <>
struct FlatLiftable<std::monostate> : std::true_type {};
template <size_t N>
struct FlatLiftable<std::bitset<N>> : std::true_type {};
template <class A>
struct FlatLiftable<std::basic_string<char, std::char_traits<char>, A>> : std::true_type {};
template <>
struct FlatLiftable<std::string_view> : std::true_type {};
template <class T, class A>
struct FlatLiftable<std::vector<T, A>> : std::true_type {};
template <class K, class V, class C, class A>
struct FlatLiftable<std::map<K, V, C, A>> : std::true_type {};
template <class Tag>
struct FlatLiftable<Own<Tag>> : std::true_type {};
template <class Tag>
struct FlatLiftable<Borrow<Tag>> : std::true_type {};
template <>
struct FlatLiftable<ErrorContext> : std::true_type {};
template <class T, size_t N>
struct FlatLiftable<std::array<T, N>> : FlatLiftable<T> {};
template <class T>
struct FlatLiftable<std::optional<T>> : FlatLiftable<T> {};
template <class... Ts>
struct FlatLiftable<std::tuple<Ts...>> : std::conjunction<FlatLiftable<Ts>...> {};
template <class... Ts>
struct FlatLiftable<std::variant<Ts...>> : std::conjunction<FlatLiftable<Ts>...> {};
template <class T, class Fields>
struct RecordFlatLiftable;
template <class T, class... Fs>
struct RecordFlatLiftable<T, std::tuple<Fs...>> : std::conjunction<FlatLiftable<typename Fs::type>...> {};
template <class T>
struct FlatLiftable<T, std::void_t<decltype(Record<T>::fields)>> : RecordFlatLiftable<T, FieldsOf<T>> {};
template <class T>
struct FlatLiftable<T, std::enable_if_t<is_adapted_v<T>>> : FlatLiftable<typename Adapt<T>::repr> {};
}  // namespace detail

// Whether FlatLift<T> can read T (every owning type of typed.hpp, and
// std::string_view).
template <class T>
inline constexpr bool is_flat_liftable_v = detail::FlatLiftable<T>::value;

// ---- checks before lowering ----------------------------------------------------------
//
// A typed call checks every argument before it lowers any: a value the ABI
// forbids (a char that is no Unicode scalar value, an enum value out of
// range, ill-formed UTF-8) is refused with nothing allocated in the callee
// and no handle moved, as the dynamic call refuses it when the Val is made;
// and a view into the callee's memory is refused, since lowering the
// arguments before it may move that memory.

namespace detail {
// std::span<const T>'s T.
template <class T>
struct SpanElement {
  static constexpr bool value = false;
};
template <class T>
struct SpanElement<std::span<const T>> {
  static constexpr bool value = true;
  using type = T;
};
template <class T, class = void>
struct NeedsCheck : std::bool_constant<std::is_same_v<T, char32_t> || is_typed_enum_v<T>> {};
template <class A>
struct NeedsCheck<std::basic_string<char, std::char_traits<char>, A>> : std::true_type {};
template <>
struct NeedsCheck<std::string_view> : std::true_type {};
template <class T>
struct NeedsCheck<std::span<const T>> : std::true_type {};
template <class T, class A>
struct NeedsCheck<std::vector<T, A>> : NeedsCheck<T> {};
template <class T, size_t N>
struct NeedsCheck<std::array<T, N>> : NeedsCheck<T> {};
template <class T>
struct NeedsCheck<std::optional<T>> : NeedsCheck<T> {};
template <class... Ts>
struct NeedsCheck<std::variant<Ts...>> : std::disjunction<NeedsCheck<Ts>...> {};
template <class... Ts>
struct NeedsCheck<std::tuple<Ts...>> : std::disjunction<NeedsCheck<Ts>...> {};
template <class K, class V, class C, class A>
struct NeedsCheck<std::map<K, V, C, A>> : std::disjunction<NeedsCheck<K>, NeedsCheck<V>> {};
template <class T, class Fields>
struct RecordNeedsCheck;
template <class T, class... Fs>
struct RecordNeedsCheck<T, std::tuple<Fs...>> : std::disjunction<NeedsCheck<typename Fs::type>...> {};
template <class T>
struct NeedsCheck<T, std::void_t<decltype(Record<T>::fields)>> : RecordNeedsCheck<T, FieldsOf<T>> {};
template <class T>
struct NeedsCheck<T, std::enable_if_t<is_adapted_v<T>>> : NeedsCheck<typename Adapt<T>::repr> {};

void check_utf8_argument(std::string_view text);
[[noreturn]] void view_into_callee_memory();
}  // namespace detail

template <class T>
void check_arg(const AbiContext& cx, const T& v) {
  if constexpr (!detail::NeedsCheck<T>::value) {
    return;
  } else if constexpr (is_adapted_v<T>) {
    check_arg(cx, Adapt<T>::get(v));
  } else if constexpr (std::is_same_v<T, char32_t>) {
    (void)to_flat(v);  // InvalidValue unless a Unicode scalar value
  } else if constexpr (is_typed_enum_v<T>) {
    if (static_cast<uint32_t>(v) >= Enum<T>::count) detail::bad_enum_value(static_cast<uint32_t>(v), Enum<T>::count);
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    if (detail::inside_memory(cx, v.data(), v.size())) detail::view_into_callee_memory();
    detail::check_utf8_argument(v);
  } else if constexpr (requires { typename T::traits_type; }) {  // an owning string
    detail::check_utf8_argument(v);
  } else if constexpr (detail::SpanElement<T>::value) {
    if (detail::inside_memory(cx, v.data(), v.size() * sizeof(typename detail::SpanElement<T>::type)))
      detail::view_into_callee_memory();
    for (const auto& e : v) check_arg(cx, e);
  } else if constexpr (requires { typename T::key_type; }) {  // a map
    for (const auto& [key, value] : v) {
      check_arg(cx, key);
      check_arg(cx, value);
    }
  } else if constexpr (requires { v.has_value(); }) {
    if (v) check_arg(cx, *v);
  } else if constexpr (requires { v.index(); }) {
    std::visit([&](const auto& c) { check_arg(cx, c); }, v);
  } else if constexpr (requires { std::tuple_size<T>::value; } && !requires { v.size(); }) {  // a tuple
    std::apply([&](const auto&... e) { (check_arg(cx, e), ...); }, v);
  } else if constexpr (requires { Record<T>::fields; }) {
    std::apply([&](const auto&... f) { (check_arg(cx, v.*(f.member)), ...); }, Record<T>::fields);
  } else {  // std::vector, std::array
    for (const auto& e : v) check_arg(cx, e);
  }
}

// ---- a typed call's arguments --------------------------------------------------------

namespace detail {
template <class T, class = void>
struct Lowerable : std::false_type {};
template <class T>
struct Lowerable<T, std::void_t<decltype(Lower<T, AddrWidth::I32>::flat_count)>> : std::true_type {};
}  // namespace detail

// Whether a typed call can take T as an argument: every owning type of
// typed.hpp, std::string_view, and std::span<const T> for a list.
template <class T>
inline constexpr bool is_lowerable_arg_v = detail::Lowerable<T>::value;

// Whether the component type `t` is what the C++ argument type lowers as.
template <class T>
bool arg_matches(const Type& t) {
  if constexpr (detail::SpanElement<T>::value) {
    using E = typename detail::SpanElement<T>::type;
    return detail::is_list(t) && Canon<E, AddrWidth::I32>::matches(*detail::element_type(t));
  } else {
    return Canon<T, AddrWidth::I32>::matches(t);
  }
}

// Appends the argument's core values to `flat`.
template <class T>
CMHOST_TYPED_INLINE void lower_arg(AbiContext& cx, const T& v, std::vector<uint64_t>& flat) {
  constexpr uint32_t n = Lower<T, AddrWidth::I32>::flat_count;
  if constexpr (n == 1 && is_flat_scalar_v<T>) {
    flat.push_back(lower_scalar(cx, v));
  } else {
    const size_t at = flat.size();
    flat.resize(at + n);
    Lower<T, AddrWidth::I32>::lower_flat(cx, v, flat.data() + at);
  }
}

// ---- a typed host function's call ---------------------------------------------------
//
// A host function called through a lowered import gets its arguments as
// the caller lowered them (flat, or through a pointer when they spill) and
// returns its result flat or through the out pointer, as `abi` says.

template <class... A>
std::tuple<A...> lift_some_args(const AbiContext& cx, const FunctionAbi& abi, std::span<const uint64_t> params);

// The arguments of a lowered call, as C++ values (32-bit memories).
template <class... A>
std::tuple<A...> lift_args(const AbiContext& cx, const FunctionAbi& abi, std::span<const uint64_t> params) {
  if constexpr (sizeof...(A) == 0) {
    return {};
  } else {
    return lift_some_args<A...>(cx, abi, params);
  }
}

template <class... A>
std::tuple<A...> lift_some_args(const AbiContext& cx, const FunctionAbi& abi, std::span<const uint64_t> params) {
  if (abi.params_spilled(AbiSide::Lower)) {
    detail::require_memory32(cx);
    const Reader reader(cx);
    return load<std::tuple<A...>>(reader, params[0]);
  }
  constexpr std::array<uint32_t, sizeof...(A) + 1> at = [] {
    std::array<uint32_t, sizeof...(A) + 1> out{};
    const uint32_t counts[] = {0, Lower<A, AddrWidth::I32>::flat_count...};
    for (size_t i = 1; i <= sizeof...(A); ++i) out[i] = out[i - 1] + counts[i];
    return out;
  }();
  if (params.size() < at[sizeof...(A)]) throw Error(ErrorKind::Usage, "too few core arguments for the typed call");
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<A...>{FlatLift<A>::lift(cx, params.data() + at[I])...};
  }(std::index_sequence_for<A...>{});
}

// Writes a lowered call's result: flat into `results`, or at the out pointer.
template <class R>
void lower_result(AbiContext& cx, const FunctionAbi& abi, std::span<const uint64_t> params, const R& value,
                  std::span<uint64_t> results) {
  if (const std::optional<uint64_t> out = abi.result_pointer(params)) {
    cx.require_memory("a result through memory");
    detail::require_memory32(cx);
    if (*out % Canon<R, AddrWidth::I32>::align != 0 || *out > cx.size() ||
        Canon<R, AddrWidth::I32>::size > cx.size() - *out)
      throw_trap("the result pointer " + std::to_string(*out) + " is misaligned or out of bounds");
    Lower<R, AddrWidth::I32>::store(cx, *out, value);
    return;
  }
  if (results.size() != Lower<R, AddrWidth::I32>::flat_count)
    throw Error(ErrorKind::Usage, "the typed result's core values do not fit the call");
  Lower<R, AddrWidth::I32>::lower_flat(cx, value, results.data());
}

}  // namespace cmhost::abi::typed
