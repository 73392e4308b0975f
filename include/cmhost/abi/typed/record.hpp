// Records and tuples in typed values (cmhost/abi/typed.hpp): a struct with
// a Record<T> specialisation naming its fields, and std::tuple; their field
// layout (FieldLayout), also that of a map's entries.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cmhost/abi/typed/core.hpp"

namespace cmhost::abi::typed {

// A record's fields: `static constexpr auto fields = std::make_tuple(field("name", &T::member), ...)`.
template <class T>
struct Record;

template <class C, class M>
struct Field {
  const char* name;
  M C::*member;
  using type = M;
};
template <class C, class M>
constexpr Field<C, M> field(const char* name, M C::*member) {
  return {name, member};
}

// ---- lifts ---------------------------------------------------------------------

namespace detail {

// Field offsets of a record-like sequence of types.
template <AddrWidth W, class... Fs>
struct FieldLayout {
  static constexpr size_t count = sizeof...(Fs);
  static constexpr uint32_t align = std::max({uint32_t{1}, Lift<Fs, W>::align...});
  static constexpr std::array<uint32_t, count> offsets = [] {
    std::array<uint32_t, count> out{};
    const uint32_t sizes[] = {Lift<Fs, W>::size...};
    const uint32_t aligns[] = {Lift<Fs, W>::align...};
    uint32_t at = 0;
    for (size_t i = 0; i < count; ++i) {
      at = align_to(at, aligns[i]);
      out[i] = at;
      at += sizes[i];
    }
    return out;
  }();
  static constexpr uint32_t size = [] {
    const uint32_t sizes[] = {Lift<Fs, W>::size...};
    return align_to(offsets[count - 1] + sizes[count - 1], align);
  }();
};

template <class T>
using FieldsOf = std::remove_cvref_t<decltype(Record<T>::fields)>;

template <class Tuple>
struct FieldTypes;
template <class... Fs>
struct FieldTypes<std::tuple<Fs...>> {
  template <AddrWidth W>
  using Layout = FieldLayout<W, typename Fs::type...>;
};

}  // namespace detail

template <class T, AddrWidth W>
struct Lift<T, W, std::void_t<decltype(Record<T>::fields)>> {
  using L = typename detail::FieldTypes<detail::FieldsOf<T>>::template Layout<W>;
  static constexpr uint32_t size = L::size, align = L::align;

  static T load(const Reader& r, uint64_t p) {
    T out{};
    load_into(r, p, out);
    return out;
  }
  CMHOST_TYPED_INLINE static void load_into(const Reader& r, uint64_t p, T& out) {
    load_fields(r, p, out, std::make_index_sequence<L::count>{});
  }
  static bool matches(const Type& t, HandleTypes* found) {
    return detail::kind_is(t, TypeKind::Record) && detail::field_count(t) == L::count &&
           matches_fields(t, found, std::make_index_sequence<L::count>{});
  }

 private:
  // Fields are loaded in place, never assigned: assigning would copy a
  // std::pmr member into the default resource.
  template <size_t... I>
  static void load_fields(const Reader& r, uint64_t p, T& out, std::index_sequence<I...>) {
    constexpr auto& fs = Record<T>::fields;
    (detail::load_into<typename std::tuple_element_t<I, detail::FieldsOf<T>>::type, W>(r, p + L::offsets[I],
                                                                                       out.*(std::get<I>(fs).member)),
     ...);
  }
  template <size_t... I>
  static bool matches_fields(const Type& t, HandleTypes* found, std::index_sequence<I...>) {
    return (Lift<typename std::tuple_element_t<I, detail::FieldsOf<T>>::type, W>::matches(*detail::field_type(t, I), found) &&
            ...);
  }
};

template <class... Ts, AddrWidth W>
struct Lift<std::tuple<Ts...>, W> {
  using L = detail::FieldLayout<W, Ts...>;
  static constexpr uint32_t size = L::size, align = L::align;
  static std::tuple<Ts...> load(const Reader& r, uint64_t p) {
    return load_all(r, p, std::index_sequence_for<Ts...>{});
  }
  static bool matches(const Type& t, HandleTypes* found) {
    return detail::kind_is(t, TypeKind::Tuple) && detail::field_count(t) == sizeof...(Ts) &&
           matches_all(t, found, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... I>
  static std::tuple<Ts...> load_all(const Reader& r, uint64_t p, std::index_sequence<I...>) {
    // Braces: fields load in order, as lifting moves their handles.
    return std::tuple<Ts...>{Lift<Ts, W>::load(r, p + L::offsets[I])...};
  }
  template <size_t... I>
  static bool matches_all(const Type& t, HandleTypes* found, std::index_sequence<I...>) {
    return (Lift<Ts, W>::matches(*detail::field_type(t, I), found) && ...);
  }
};

// ---- lowers ------------------------------------------------------------------------

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
    using L = typename Lift<T, W>::L;
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

// ---- flat lifts ----------------------------------------------------------------------

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

}  // namespace cmhost::abi::typed
