// Lists in typed values (cmhost/abi/typed.hpp): std::vector,
// std::pmr::vector, FrameVector, ListView (read in place) and
// std::span<const T> (written only) for list<T>, std::array for list<T, N>,
// and std::map for map<K, V>.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <memory_resource>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cmhost/abi/typed/core.hpp"
#include "cmhost/abi/typed/record.hpp"
#include "cmhost/abi/typed/scalar.hpp"

namespace cmhost::abi::typed {

// list<T> read in place: elements are loaded when accessed.
template <class T, AddrWidth W = AddrWidth::I32>
class ListView {
 public:
  ListView() = default;
  ListView(const Reader* r, uint64_t ptr, uint64_t length) : r_(r), ptr_(ptr), length_(length) {}
  uint64_t size() const { return length_; }
  bool empty() const { return length_ == 0; }
  T operator[](uint64_t i) const { return Lift<T, W>::load(*r_, address(i)); }
  // Where element i lives, for reading it in another form (visit_variant).
  uint64_t address(uint64_t i) const { return ptr_ + i * Lift<T, W>::size; }
  const Reader& reader() const { return *r_; }

  class iterator {
   public:
    iterator(const ListView* v, uint64_t i) : v_(v), i_(i) {}
    T operator*() const { return (*v_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }

   private:
    const ListView* v_;
    uint64_t i_;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, length_}; }

 private:
  const Reader* r_ = nullptr;
  uint64_t ptr_ = 0;
  uint64_t length_ = 0;
};

// ---- lifts ---------------------------------------------------------------------

namespace detail {
// Checks a list's (ptr, length) as lifting does; returns the element range.
template <class T, AddrWidth W>
CMHOST_TYPED_INLINE void check_elements(const Reader& r, uint64_t ptr, uint64_t length) {
  constexpr uint32_t es = Lift<T, W>::size;
  if (length > kMaxListByteLength / es) r.fail("list of " + std::to_string(length) + " elements is too long");
  r.check(ptr, length * es, Lift<T, W>::align, "list");
}
template <class T, AddrWidth W>
CMHOST_TYPED_INLINE std::pair<uint64_t, uint64_t> checked_list(const Reader& r, uint64_t p) {
  const auto [ptr, length] = pointer_pair<W>(r, p);
  check_elements<T, W>(r, ptr, length);
  return {ptr, length};
}
}  // namespace detail

// What list<T> forms share: a (ptr, length) pair in memory.
template <class T, AddrWidth W>
struct ListLift {
  static constexpr uint32_t size = 2 * ptr_size(W), align = ptr_size(W);
  static bool matches(const Type& t, HandleTypes* found) {
    return detail::is_list(t) && Lift<T, W>::matches(*detail::element_type(t), found);
  }
};

namespace detail {
// An empty container of type C using the reader's memory resource if C
// takes one.
template <class C>
C empty_container(const Reader& r) {
  if constexpr (std::is_same_v<typename C::allocator_type, std::pmr::polymorphic_allocator<typename C::value_type>>)
    return C(r.resource());
  else
    return C();
}
}  // namespace detail

// std::vector and std::pmr::vector. Elements are built in place where the
// element type can do so (variants: the case's payload is constructed in
// the vector's slot), so a list of records moves nothing.
template <class T, class A, AddrWidth W>
struct Lift<std::vector<T, A>, W> : ListLift<T, W> {
  CMHOST_TYPED_INLINE static std::vector<T, A> load(const Reader& r, uint64_t p) {
    const auto [ptr, length] = detail::pointer_pair<W>(r, p);
    return load_elements(r, ptr, length);
  }
  // The list of `length` elements at `ptr`, checked as lifting checks it.
  CMHOST_TYPED_INLINE static std::vector<T, A> load_elements(const Reader& r, uint64_t ptr, uint64_t length) {
    detail::check_elements<T, W>(r, ptr, length);
    r.charge(length * sizeof(T));
    auto out = detail::empty_container<std::vector<T, A>>(r);
    if constexpr (sizeof(T) == 1 && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const auto* bytes = reinterpret_cast<const T*>(r.at(ptr));
      out.assign(bytes, bytes + length);  // bytes cross as one block copy
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      out.resize(length);  // numbers cross as one block copy
      if (length) std::memcpy(out.data(), r.at(ptr), length * sizeof(T));
    } else {
      out.reserve(length);
      for (uint64_t i = 0; i < length; ++i) {
        const uint64_t at = ptr + i * Lift<T, W>::size;
        if constexpr (requires { Lift<T, W>::emplace_back(r, at, out); }) {
          Lift<T, W>::emplace_back(r, at, out);
        } else if constexpr (std::is_default_constructible_v<T> && requires { Lift<T, W>::load_into(r, at, out.back()); }) {
          out.emplace_back();
          Lift<T, W>::load_into(r, at, out.back());
        } else {
          out.push_back(Lift<T, W>::load(r, at));
        }
      }
    }
    return out;
  }
};

template <class T, AddrWidth W>
struct Lift<ListView<T, W>, W> : ListLift<T, W> {
  CMHOST_TYPED_INLINE static ListView<T, W> load(const Reader& r, uint64_t p) {
    const auto [ptr, length] = detail::checked_list<T, W>(r, p);
    return ListView<T, W>(&r, ptr, length);
  }
};

// list<T, N> as std::array<T, N>.
template <class T, size_t N, AddrWidth W>
struct Lift<std::array<T, N>, W> {
  static_assert(N >= 1, "a fixed-length list has at least one element");
  static constexpr uint32_t size = Lift<T, W>::size * N, align = Lift<T, W>::align;
  static std::array<T, N> load(const Reader& r, uint64_t p) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<T, N>{Lift<T, W>::load(r, p + I * Lift<T, W>::size)...};
    }(std::make_index_sequence<N>{});
  }
  static bool matches(const Type& t, HandleTypes* found) {
    return detail::kind_is(t, TypeKind::FixedList) && detail::fixed_length(t) == N &&
           Lift<T, W>::matches(*detail::element_type(t), found);
  }
};

namespace detail {
// A map entry as the canonical ABI lays it out: the tuple (key, value).
template <class K, class V, AddrWidth W>
using MapEntry = FieldLayout<W, K, V>;
}  // namespace detail

// map<K, V> as std::map<K, V>: the guest's list of entries, in order; a key
// that comes again replaces the earlier entry.
template <class K, class V, class C, class A, AddrWidth W>
struct Lift<std::map<K, V, C, A>, W> {
  using E = detail::MapEntry<K, V, W>;
  static constexpr uint32_t size = 2 * ptr_size(W), align = ptr_size(W);
  static std::map<K, V, C, A> load(const Reader& r, uint64_t p) {
    const auto [ptr, length] = detail::pointer_pair<W>(r, p);
    return load_entries(r, ptr, length);
  }
  static std::map<K, V, C, A> load_entries(const Reader& r, uint64_t ptr, uint64_t length) {
    if (length > kMaxListByteLength / E::size) r.fail("map of " + std::to_string(length) + " entries is too long");
    r.check(ptr, length * E::size, E::align, "map");
    r.charge(length * (sizeof(K) + sizeof(V) + 4 * sizeof(void*)));  // a tree node per entry
    std::map<K, V, C, A> out;
    for (uint64_t i = 0; i < length; ++i) {
      const uint64_t at = ptr + i * E::size;
      K key = Lift<K, W>::load(r, at + E::offsets[0]);  // the key first, as lifting does
      out.insert_or_assign(std::move(key), Lift<V, W>::load(r, at + E::offsets[1]));
    }
    return out;
  }
  static bool matches(const Type& t, HandleTypes* found) {
    if (!detail::kind_is(t, TypeKind::Map)) return false;
    const Type& entry = *detail::element_type(t);
    return Lift<K, W>::matches(*detail::field_type(entry, 0), found) && Lift<V, W>::matches(*detail::field_type(entry, 1), found);
  }
};

// ---- lowers ------------------------------------------------------------------------

// `count` elements of `size` bytes (their canonical ABI bytes) at `data`.
std::pair<uint64_t, uint64_t> lower_elements(AbiContext& cx, const void* data, uint64_t count, uint32_t size);

namespace detail {
// `bytes` bytes aligned to `align` from the callee's realloc: a trap when
// realloc answers out of bounds or misaligned.
uint64_t allocate(AbiContext& cx, uint32_t align, uint64_t bytes);
// InvalidValue: a list (or map) of `count` elements of `size` bytes is longer
// than the ABI allows.
void check_list_length(uint64_t count, uint32_t size);

// The elements [data, data + count) as a list in the callee's memory.
template <class T, AddrWidth W>
std::pair<uint64_t, uint64_t> lower_list(AbiContext& cx, const T* data, uint64_t count) {
  constexpr uint32_t size = Lift<T, W>::size;
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
    const uint64_t ptr = allocate(cx, Lift<T, W>::align, count * size);
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
    for (size_t i = 0; i < N; ++i) Lower<T, W>::store(cx, p + i * Lift<T, W>::size, v[i]);
  }
};

// ---- flat lifts ----------------------------------------------------------------------

template <class T, class A>
struct FlatLift<std::vector<T, A>> {
  static std::vector<T, A> lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    const Reader reader(cx);
    return Lift<std::vector<T, A>, AddrWidth::I32>::load_elements(reader, static_cast<uint32_t>(in[0]),
                                                                  static_cast<uint32_t>(in[1]));
  }
};
template <class K, class V, class C, class A>
struct FlatLift<std::map<K, V, C, A>> {
  static std::map<K, V, C, A> lift(const AbiContext& cx, const uint64_t* in) {
    detail::require_memory32(cx);
    const Reader reader(cx);
    return Lift<std::map<K, V, C, A>, AddrWidth::I32>::load_entries(reader, static_cast<uint32_t>(in[0]),
                                                                    static_cast<uint32_t>(in[1]));
  }
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

}  // namespace cmhost::abi::typed
