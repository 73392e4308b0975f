// Properties of typed values over every shape (cmhost/abi/typed.hpp):
// whether a loaded T can be left in an arena (arena_releasable_v), points
// into guest memory (holds_view_v), or can be lifted from core values
// (is_flat_liftable_v), or holds handles (holds_handle_v).
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <map>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cmhost/abi/frame_arena.hpp"
#include "cmhost/abi/typed/adapt.hpp"
#include "cmhost/abi/typed/handle.hpp"
#include "cmhost/abi/typed/list.hpp"
#include "cmhost/abi/typed/record.hpp"
#include "cmhost/abi/typed/scalar.hpp"
#include "cmhost/abi/typed/string.hpp"
#include "cmhost/abi/typed/variant.hpp"

namespace cmhost::abi::typed {

namespace detail {
// Stands for any member in an aggregate initialisation (unevaluated only):
// how many initialisers T takes is how many members it has.
struct AnyMember {
  template <class U>
  operator U&() const&&;
};
template <class T, size_t... I>
constexpr bool takes_initialisers(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyMember{})...}; };
}
template <class T, size_t N>
constexpr bool has_members = std::is_aggregate_v<T> && takes_initialisers<T>(std::make_index_sequence<N>{}) &&
                             !takes_initialisers<T>(std::make_index_sequence<N + 1>{});

template <class T, class = void>
struct ArenaReleasable : std::bool_constant<std::is_arithmetic_v<T> || std::is_enum_v<T>> {};
template <>
struct ArenaReleasable<std::monostate> : std::true_type {};
template <>
struct ArenaReleasable<std::pmr::string> : std::true_type {};
template <class T>
struct ArenaReleasable<std::pmr::vector<T>> : ArenaReleasable<T> {};
template <>
struct ArenaReleasable<FrameString> : std::true_type {};
template <class T>
struct ArenaReleasable<FrameVector<T>> : ArenaReleasable<T> {};
template <class T>
struct ArenaReleasable<std::optional<T>> : ArenaReleasable<T> {};
template <class... Ts>
struct ArenaReleasable<std::variant<Ts...>> : std::conjunction<ArenaReleasable<Ts>...> {};
template <class... Ts>
struct ArenaReleasable<std::tuple<Ts...>> : std::conjunction<ArenaReleasable<Ts>...> {};
template <class T, class Fields>
struct RecordReleasable;
template <class T, class... Fs>
struct RecordReleasable<T, std::tuple<Fs...>>
    : std::bool_constant<std::conjunction_v<ArenaReleasable<typename Fs::type>...> &&
                         (std::is_trivially_destructible_v<T> || has_members<T, sizeof...(Fs)>)> {};
template <class T>
struct ArenaReleasable<T, std::void_t<decltype(Record<T>::fields)>> : RecordReleasable<T, FieldsOf<T>> {};
template <class T>
struct ArenaReleasable<T, std::enable_if_t<is_adapted_v<T>>> : ArenaReleasable<typename Adapt<T>::repr> {};
}  // namespace detail

// Whether a T loaded with every container in one monotonic arena is freed
// whole by releasing the arena, so its destructors need not run. True for
// numbers, enums, std::monostate, std::pmr::string, FrameString, and
// std::pmr::vector, FrameVector, std::optional, std::variant and
// std::tuple of such; and for a record
// whose Record<> fields are such and are all its members (an aggregate
// with no others; a trivially destructible record may have others). False
// for std::string and std::vector, which own heap memory, and for views,
// which point into guest memory and the reader.
template <class T>
inline constexpr bool arena_releasable_v = detail::ArenaReleasable<T>::value;

// ---- views --------------------------------------------------------------------

namespace detail {
template <class T, class = void>
struct HoldsView : std::false_type {};
template <>
struct HoldsView<std::string_view> : std::true_type {};
template <class T, AddrWidth W>
struct HoldsView<ListView<T, W>> : std::true_type {};
template <class T, class A>
struct HoldsView<std::vector<T, A>> : HoldsView<T> {};
template <class T>
struct HoldsView<std::optional<T>> : HoldsView<T> {};
template <class T, size_t N>
struct HoldsView<std::array<T, N>> : HoldsView<T> {};
template <class T>
struct HoldsView<std::span<const T>> : std::true_type {};
template <class K, class V, class C, class A>
struct HoldsView<std::map<K, V, C, A>> : std::disjunction<HoldsView<K>, HoldsView<V>> {};
template <class... Ts>
struct HoldsView<std::variant<Ts...>> : std::disjunction<HoldsView<Ts>...> {};
template <class... Ts>
struct HoldsView<std::tuple<Ts...>> : std::disjunction<HoldsView<Ts>...> {};
template <class T, class Fields>
struct RecordHoldsView;
template <class T, class... Fs>
struct RecordHoldsView<T, std::tuple<Fs...>> : std::disjunction<HoldsView<typename Fs::type>...> {};
template <class T>
struct HoldsView<T, std::void_t<decltype(Record<T>::fields)>> : RecordHoldsView<T, FieldsOf<T>> {};
template <class T>
struct HoldsView<T, std::enable_if_t<is_adapted_v<T>>> : HoldsView<typename Adapt<T>::repr> {};
}  // namespace detail

// Whether a loaded T points into guest memory (string_view, ListView, or
// anything holding one): valid only while the memory is, not after a call.
template <class T>
inline constexpr bool holds_view_v = detail::HoldsView<T>::value;

// ---- handles -------------------------------------------------------------------

namespace detail {
template <class T, class = void>
struct HoldsHandle : std::false_type {};
template <class Tag>
struct HoldsHandle<Own<Tag>> : std::true_type {};
template <class Tag>
struct HoldsHandle<Borrow<Tag>> : std::true_type {};
template <>
struct HoldsHandle<ErrorContext> : std::true_type {};
template <class T>
struct HoldsHandle<Stream<T>> : std::true_type {};
template <class T>
struct HoldsHandle<Future<T>> : std::true_type {};
template <class T, class A>
struct HoldsHandle<std::vector<T, A>> : HoldsHandle<T> {};
template <class T>
struct HoldsHandle<std::optional<T>> : HoldsHandle<T> {};
template <class T, size_t N>
struct HoldsHandle<std::array<T, N>> : HoldsHandle<T> {};
template <class K, class V, class C, class A>
struct HoldsHandle<std::map<K, V, C, A>> : std::disjunction<HoldsHandle<K>, HoldsHandle<V>> {};
template <class... Ts>
struct HoldsHandle<std::variant<Ts...>> : std::disjunction<HoldsHandle<Ts>...> {};
template <class... Ts>
struct HoldsHandle<std::tuple<Ts...>> : std::disjunction<HoldsHandle<Ts>...> {};
template <class T, class Fields>
struct RecordHoldsHandle;
template <class T, class... Fs>
struct RecordHoldsHandle<T, std::tuple<Fs...>> : std::disjunction<HoldsHandle<typename Fs::type>...> {};
template <class T>
struct HoldsHandle<T, std::void_t<decltype(Record<T>::fields)>> : RecordHoldsHandle<T, FieldsOf<T>> {};
template <class T>
struct HoldsHandle<T, std::enable_if_t<is_adapted_v<T>>> : HoldsHandle<typename Adapt<T>::repr> {};
}  // namespace detail

// Whether a T holds handles (own, borrow, stream, future, error-context),
// whose tags must be bound to the types they move as (HandleTypes).
template <class T>
inline constexpr bool holds_handle_v = detail::HoldsHandle<T>::value;

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
template <class T>
struct FlatLiftable<Stream<T>> : std::true_type {};
template <class T>
struct FlatLiftable<Future<T>> : std::true_type {};
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

}  // namespace cmhost::abi::typed
