// Variant shapes in typed values (cmhost/abi/typed.hpp): variants
// (std::variant, with std::monostate or Case<void> for a case without
// payload, Case<T> for a named case), options (std::optional), results
// (Result<T, E>), enums (an enum class with an Enum<E> specialisation) and
// flags (std::bitset<N>, Flags<Self, N>).
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "cmhost/abi/typed/adapt.hpp"
#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

namespace detail {
[[noreturn]] void bad_discriminant(const Reader& r, uint32_t disc, size_t cases);
}  // namespace detail

// ---- lifts: variants and options ------------------------------------------------

template <AddrWidth W>
struct Lift<std::monostate, W> {  // a case without payload
  static constexpr uint32_t size = 0, align = 1;
  static std::monostate load(const Reader&, uint64_t) { return {}; }
};

namespace detail {

// A discriminant (or flags) of `bytes` bytes at p.
template <uint32_t bytes>
CMHOST_TYPED_INLINE uint32_t read_discriminant(const Reader& r, uint64_t p) {
  if constexpr (bytes == 1)
    return *r.at(p);
  else if constexpr (bytes == 2)
    return r.read<uint16_t>(p);
  else
    return r.read<uint32_t>(p);
}

template <AddrWidth W, class... Cs>
struct CaseLayout {
  static constexpr uint32_t disc = discriminant_size(sizeof...(Cs));
  static constexpr uint32_t payload_align = std::max({uint32_t{1}, Lift<Cs, W>::align...});
  static constexpr uint32_t payload_size = std::max({uint32_t{0}, Lift<Cs, W>::size...});
  static constexpr uint32_t align = std::max(disc, payload_align);
  static constexpr uint32_t payload_offset = align_to(disc, payload_align);
  static constexpr uint32_t size = align_to(payload_offset + payload_size, align);

  CMHOST_TYPED_INLINE static uint32_t discriminant(const Reader& r, uint64_t p) {
    const uint32_t d = read_discriminant<disc>(r, p);
    if (d >= sizeof...(Cs)) bad_discriminant(r, d, sizeof...(Cs));
    return d;
  }
};

template <class C, AddrWidth W>
bool case_matches(const Type* payload, HandleTypes* found) {
  if constexpr (std::is_same_v<C, std::monostate>)
    return payload == nullptr;
  else if constexpr (is_adapted_v<C>)
    return case_matches<typename Adapt<C>::repr, W>(payload, found);
  else
    return payload != nullptr && Lift<C, W>::matches(*payload, found);
}

}  // namespace detail

template <class... Cs, AddrWidth W>
struct Lift<std::variant<Cs...>, W> {
  using L = detail::CaseLayout<W, Cs...>;
  using V = std::variant<Cs...>;
  static constexpr uint32_t size = L::size, align = L::align;

  static V load(const Reader& r, uint64_t p) {
    // One loader per case, picked by the discriminant.
    static constexpr auto loaders = make_loaders(std::index_sequence_for<Cs...>{});
    return loaders[L::discriminant(r, p)](r, p + L::payload_offset);
  }
  static void load_into(const Reader& r, uint64_t p, V& out) {
    static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
      return std::array<void (*)(const Reader&, uint64_t, V&), sizeof...(Cs)>{[](const Reader& r, uint64_t p, V& out) {
        using C = std::variant_alternative_t<I, V>;
        if constexpr (std::is_default_constructible_v<C>) {
          if (out.index() != I) out.template emplace<I>();
          detail::load_into<C, W>(r, p, *std::get_if<I>(&out));
        } else {
          out.template emplace<I>(Lift<C, W>::load(r, p));
        }
      }...};
    }(std::index_sequence_for<Cs...>{});
    cases[L::discriminant(r, p)](r, p + L::payload_offset, out);
  }
  // Loads the variant at p as a new last element of `out`, constructing the
  // case in place.
  template <class Vec>
  static void emplace_back(const Reader& r, uint64_t p, Vec& out) {
    static constexpr auto appenders = make_appenders<Vec>(std::index_sequence_for<Cs...>{});
    appenders[L::discriminant(r, p)](r, p + L::payload_offset, out);
  }
  static bool matches(const Type& t, HandleTypes* found) {
    if (detail::case_count(t) != sizeof...(Cs)) return false;
    return matches_cases(t, found, std::index_sequence_for<Cs...>{});
  }

 private:
  template <size_t... I>
  static constexpr auto make_loaders(std::index_sequence<I...>) {
    return std::array<V (*)(const Reader&, uint64_t), sizeof...(Cs)>{[](const Reader& r, uint64_t p) -> V {
      return V(std::in_place_index<I>, Lift<std::variant_alternative_t<I, V>, W>::load(r, p));
    }...};
  }
  template <class Vec, size_t... I>
  static constexpr auto make_appenders(std::index_sequence<I...>) {
    return std::array<void (*)(const Reader&, uint64_t, Vec&), sizeof...(Cs)>{
        [](const Reader& r, uint64_t p, Vec& out) {
          using C = std::variant_alternative_t<I, V>;
          if constexpr (std::is_default_constructible_v<C>) {
            out.emplace_back(std::in_place_index<I>);
            detail::load_into<C, W>(r, p, *std::get_if<I>(&out.back()));
          } else {
            out.emplace_back(std::in_place_index<I>, Lift<C, W>::load(r, p));
          }
        }...};
  }
  template <size_t... I>
  static bool matches_cases(const Type& t, HandleTypes* found, std::index_sequence<I...>) {
    return (detail::case_matches<std::variant_alternative_t<I, V>, W>(detail::case_type(t, I), found) && ...);
  }
};

template <class T, AddrWidth W>
struct Lift<std::optional<T>, W> {
  using L = detail::CaseLayout<W, std::monostate, T>;
  static constexpr uint32_t size = L::size, align = L::align;
  CMHOST_TYPED_INLINE static std::optional<T> load(const Reader& r, uint64_t p) {
    if (L::discriminant(r, p) == 0) return std::nullopt;
    return Lift<T, W>::load(r, p + L::payload_offset);
  }
  CMHOST_TYPED_INLINE static void load_into(const Reader& r, uint64_t p, std::optional<T>& out) {
    if (L::discriminant(r, p) == 0) {
      out.reset();
    } else if constexpr (std::is_default_constructible_v<T>) {
      if (!out) out.emplace();
      detail::load_into<T, W>(r, p + L::payload_offset, *out);
    } else {
      out.emplace(Lift<T, W>::load(r, p + L::payload_offset));
    }
  }
  static bool matches(const Type& t, HandleTypes* found) {
    return detail::kind_is(t, TypeKind::Option) && Lift<T, W>::matches(*detail::case_type(t, 1), found);
  }
};

// ---- lifts: enums and flags ------------------------------------------------------

// An enum's cases for an `enum class E` (its values 0 .. count-1):
//   template <> struct cmhost::abi::typed::Enum<Color> { static constexpr size_t count = 3; };
template <class E>
struct Enum;

namespace detail {
template <class E, class = void>
struct IsEnum : std::false_type {};
template <class E>
struct IsEnum<E, std::void_t<decltype(Enum<E>::count)>> : std::bool_constant<std::is_enum_v<E>> {};
template <size_t N>
constexpr uint32_t flags_size() {
  return N <= 8 ? 1 : N <= 16 ? 2 : 4 * ((N + 31) / 32);
}
}  // namespace detail

template <class E>
inline constexpr bool is_typed_enum_v = detail::IsEnum<E>::value;

template <class E, AddrWidth W>
struct Lift<E, W, std::enable_if_t<is_typed_enum_v<E>>> {
  static constexpr size_t count = Enum<E>::count;
  static constexpr uint32_t size = discriminant_size(count), align = size;
  static E load(const Reader& r, uint64_t p) {
    const uint32_t d = detail::read_discriminant<size>(r, p);
    if (d >= count) detail::bad_discriminant(r, d, count);
    return static_cast<E>(d);
  }
  static bool matches(const Type& t, HandleTypes*) { return detail::kind_is(t, TypeKind::Enum) && detail::case_count(t) == count; }
};

// flags with N labels as std::bitset<N> (bit i: label i).
template <size_t N, AddrWidth W>
struct Lift<std::bitset<N>, W> {
  static_assert(N >= 1 && N <= 32, "a flags type has 1 to 32 labels");
  static constexpr uint32_t size = detail::flags_size<N>(), align = size;
  static std::bitset<N> load(const Reader& r, uint64_t p) {
    const uint32_t bits = detail::read_discriminant<size>(r, p);
    return std::bitset<N>(bits);  // bits beyond the labels are ignored, as lifting does
  }
  static bool matches(const Type& t, HandleTypes*) {
    return detail::kind_is(t, TypeKind::Flags) && detail::label_count(t) == N;
  }
};

// ---- adapted forms: named cases, results, flags ----------------------------------

// A case of a variant that has a name of its own, so that std::visit and
// std::holds_alternative tell cases apart even when their payloads have
// one type: `struct Circle : Case<float> { using Case::Case; };`
// (Circle{1.5f}, c.value), or `struct None : Case<void> {};` for a case
// without payload. The variant is a std::variant of such cases, in WIT
// order.
template <class T>
struct Case {
  using case_payload = T;
  Case() = default;
  explicit Case(T v) : value(std::move(v)) {}
  T value{};
  bool operator==(const Case&) const = default;
};
template <>
struct Case<void> {
  using case_payload = void;
  bool operator==(const Case&) const = default;
};

template <class C>
struct Adapt<C, std::void_t<typename C::case_payload>> {
  using P = typename C::case_payload;
  using repr = std::conditional_t<std::is_void_v<P>, std::monostate, P>;
  static decltype(auto) get(const C& c) {
    if constexpr (std::is_void_v<P>)
      return std::monostate{};
    else
      return (static_cast<const Case<P>&>(c).value);
  }
  static repr& get(C& c)
    requires(!std::is_void_v<P>)
  {
    return static_cast<Case<P>&>(c).value;
  }
  static C make(repr&& r) {
    if constexpr (std::is_void_v<P>)
      return C{};
    else
      return C(std::move(r));
  }
};

namespace detail {
template <class T>
using or_monostate = std::conditional_t<std::is_void_v<T>, std::monostate, T>;
}  // namespace detail

// result<T, E>, either side possibly empty (void):
//   Result<uint32_t, std::string>::ok(7), Result<void, std::string>::err("no")
//   if (r.is_ok()) use(r.value()); else report(r.error());
template <class T, class E>
class Result {
 public:
  using value_type = T;
  using error_type = E;
  using repr = std::variant<detail::or_monostate<T>, detail::or_monostate<E>>;

  Result() = default;
  explicit Result(repr v) : v_(std::move(v)) {}
  // The value (I = 0) or the error (I = 1), made in place.
  template <size_t I, class... A>
  explicit Result(std::in_place_index_t<I> side, A&&... a) : v_(side, std::forward<A>(a)...) {}
  template <class... A>
  static Result ok(A&&... a) {
    return Result(std::in_place_index<0>, std::forward<A>(a)...);
  }
  template <class... A>
  static Result err(A&&... a) {
    return Result(std::in_place_index<1>, std::forward<A>(a)...);
  }
  bool is_ok() const { return v_.index() == 0; }
  bool is_err() const { return v_.index() == 1; }
  // The value or error; std::bad_variant_access when it is the other one.
  const detail::or_monostate<T>& value() const { return std::get<0>(v_); }
  detail::or_monostate<T>& value() { return std::get<0>(v_); }
  const detail::or_monostate<E>& error() const { return std::get<1>(v_); }
  detail::or_monostate<E>& error() { return std::get<1>(v_); }
  const repr& representation() const { return v_; }
  repr& representation() { return v_; }
  bool operator==(const Result&) const = default;

 private:
  repr v_;
};

template <class T, class E>
struct Adapt<Result<T, E>> {
  using repr = typename Result<T, E>::repr;
  static const repr& get(const Result<T, E>& r) { return r.representation(); }
  static repr& get(Result<T, E>& r) { return r.representation(); }
  static Result<T, E> make(repr&& r) { return Result<T, E>(std::move(r)); }
};

// flags with N labels as a bitmask type with a named constant per label:
//   struct Perms : Flags<Perms, 2> { static const Perms read, write; };
//   Perms p = Perms::read | Perms::write;  if (p.has(Perms::read)) ...
template <class Self, size_t N>
struct Flags {
  static_assert(N >= 1 && N <= 32, "a flags type has 1 to 32 labels");
  static constexpr size_t FlagCount = N;
  uint32_t bits = 0;

  static constexpr Self from_bits(uint32_t b) {
    Self s{};
    s.bits = b & mask();
    return s;
  }
  static constexpr Self all() { return from_bits(mask()); }
  constexpr bool has(Self o) const { return (bits & o.bits) == o.bits; }
  constexpr bool empty() const { return bits == 0; }
  constexpr Self operator|(Self o) const { return from_bits(bits | o.bits); }
  constexpr Self operator&(Self o) const { return from_bits(bits & o.bits); }
  constexpr Self operator^(Self o) const { return from_bits(bits ^ o.bits); }
  constexpr Self operator~() const { return from_bits(~bits); }
  constexpr Self& operator|=(Self o) { return self() = *this | o; }
  constexpr Self& operator&=(Self o) { return self() = *this & o; }
  constexpr bool operator==(const Flags&) const = default;

 private:
  static constexpr uint32_t mask() { return N == 32 ? ~uint32_t{0} : (uint32_t{1} << N) - 1; }
  constexpr Self& self() { return static_cast<Self&>(*this); }
};

template <class F>
struct Adapt<F, std::enable_if_t<std::is_base_of_v<Flags<F, F::FlagCount>, F>>> {
  using repr = std::bitset<F::FlagCount>;
  static repr get(const F& f) { return repr(f.bits); }
  static F make(repr&& r) { return F::from_bits(static_cast<uint32_t>(r.to_ulong())); }
};

// ---- lowers ------------------------------------------------------------------------

namespace detail {
[[noreturn]] void bad_enum_value(uint32_t value, size_t count);
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
    detail::put_discriminant<Lift<E, W>::size>(cx, p, value(v));
  }
};

template <size_t N, AddrWidth W>
struct Lower<std::bitset<N>, W> {
  static constexpr uint32_t flat_count = 1;
  static void lower_flat(AbiContext&, const std::bitset<N>& v, uint64_t* out) { out[0] = v.to_ulong(); }
  static void store(AbiContext& cx, uint64_t p, const std::bitset<N>& v) {
    detail::put_discriminant<Lift<std::bitset<N>, W>::size>(cx, p, static_cast<uint32_t>(v.to_ulong()));
  }
};

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

// ---- flat lifts ----------------------------------------------------------------------

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
template <>
struct FlatLift<std::monostate> {
  static std::monostate lift(const AbiContext&, const uint64_t*) { return {}; }
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

}  // namespace cmhost::abi::typed
