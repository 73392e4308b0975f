// The entry points of typed values (cmhost/abi/typed.hpp): a whole value
// loaded from guest memory or matched against a component type, a call's
// result loaded, and a typed call's arguments checked and lowered and a
// host function's arguments lifted and its result lowered.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
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
#include "cmhost/abi/typed/core.hpp"
#include "cmhost/abi/typed/properties.hpp"

namespace cmhost::abi::typed {

// ---- entry points ----------------------------------------------------------------

// The value of type T stored at `ptr` (checked for alignment and bounds).
template <class T, AddrWidth W = AddrWidth::I32>
T load(const Reader& r, uint64_t ptr) {
  r.check(ptr, Lift<T, W>::size, Lift<T, W>::align, "value");
  return Lift<T, W>::load(r, ptr);
}

// Calls f(std::in_place_index<I>, payload) for the case of variant V stored
// at `ptr` (already checked, e.g. a ListView element), without building the
// variant: the visitor form of a lift.
template <class V, AddrWidth W = AddrWidth::I32, class F>
void visit_variant(const Reader& r, uint64_t ptr, F&& f) {
  using C = Lift<V, W>;
  using Visitor = std::remove_reference_t<F>;
  // One entry per case, indexed by the discriminant: a jump, not a search.
  static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<void (*)(const Reader&, uint64_t, Visitor&), sizeof...(I)>{
        [](const Reader& r, uint64_t payload, Visitor& f) {
          f(std::in_place_index<I>, Lift<std::variant_alternative_t<I, V>, W>::load(r, payload));
        }...};
  }(std::make_index_sequence<std::variant_size_v<V>>{});
  cases[C::L::discriminant(r, ptr)](r, ptr + C::L::payload_offset, f);
}

// Whether C++ type T can stand for `type` (shapes compared; names are not).
// With `found`, the handle tags T holds are bound there (see Lift).
template <class T, AddrWidth W = AddrWidth::I32>
bool matches(const Type& type, HandleTypes* found = nullptr) {
  return Lift<T, W>::matches(type, found);
}

// A lifted call's result where the callee left it: the callee's memory and
// its core results (one flat value, or the pointer to spilled results).
// Valid while the reader runs; post-return runs after.
struct CallResult {
  const AbiContext& cx;
  std::span<const uint64_t> core;
  bool spilled;
};

// The result of type T of a call whose results are spilled (lists,
// strings, records: anything flattening to more than one core value).
template <class T, AddrWidth W = AddrWidth::I32>
T load_result(const Reader& r, const CallResult& result) {
  if (!result.spilled || result.core.size() != 1)  // the caller's mistake, not the guest's
    throw Error(ErrorKind::Usage, "typed result loads need a result passed through memory");
  return load<T, W>(r, result.core[0]);
}

// The result of type T loaded into `arena` and left there, every container
// included (std::pmr ones take it as the reader's resource, frame ones as
// the current frame arena): it lives until the arena is released, which
// frees it with no destructor run per element, as protobuf's arenas free
// messages.
template <class T, AddrWidth W = AddrWidth::I32>
  requires arena_releasable_v<T>
T& load_result_into(std::pmr::monotonic_buffer_resource& arena, const CallResult& result) {
  const FrameScope frame(arena, FrameScope::windowed);
  const Reader reader(result.cx, &arena);
  void* slot = arena.allocate(sizeof(T), alignof(T));
  return *std::construct_at(static_cast<T*>(slot), load_result<T, W>(reader, result));
}

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

// Whether the component type `t` is what the C++ argument type lowers as
// (binding T's handle tags in `found`, if given: see Lift).
template <class T>
bool arg_matches(const Type& t, HandleTypes* found = nullptr) {
  if constexpr (detail::SpanElement<T>::value) {
    using E = typename detail::SpanElement<T>::type;
    return detail::is_list(t) && Lift<E, AddrWidth::I32>::matches(*detail::element_type(t), found);
  } else {
    return Lift<T, AddrWidth::I32>::matches(t, found);
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
    if (*out % Lift<R, AddrWidth::I32>::align != 0 || *out > cx.size() ||
        Lift<R, AddrWidth::I32>::size > cx.size() - *out)
      throw_trap("the result pointer " + std::to_string(*out) + " is misaligned or out of bounds");
    Lower<R, AddrWidth::I32>::store(cx, *out, value);
    return;
  }
  if (results.size() != Lower<R, AddrWidth::I32>::flat_count)
    throw Error(ErrorKind::Usage, "the typed result's core values do not fit the call");
  Lower<R, AddrWidth::I32>::lower_flat(cx, value, results.data());
}

}  // namespace cmhost::abi::typed
