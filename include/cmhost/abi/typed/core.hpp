// The core of the typed values (cmhost/abi/typed.hpp): the Reader that
// lifts read guest memory through, the traits each shape specialises
// (Lift, Lower, FlatLift) and what the shapes' reads and writes share.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "cmhost/abi/canon.hpp"
#include "cmhost/error.hpp"

// The loads are small and run once per value: inlining them into the
// caller's loop is most of their speed, so it is not left to heuristics.
#if defined(__GNUC__)
#define CMHOST_TYPED_INLINE [[gnu::always_inline]] inline
#else
#define CMHOST_TYPED_INLINE inline
#endif

namespace cmhost::abi::typed {

namespace detail {
// Puts `fresh` in place of `out` by construction, not assignment (which
// could copy it into the memory resource `out` has). `out` is destroyed
// only once `fresh` exists, so a trap while loading leaves it whole.
template <class T>
CMHOST_TYPED_INLINE void replace(T& out, T&& fresh) {
  if constexpr (std::is_nothrow_move_constructible_v<T>) {
    std::destroy_at(&out);
    std::construct_at(&out, std::move(fresh));
  } else {
    out = std::move(fresh);
  }
}
}  // namespace detail

// Guest memory for one read: the base stays put because nothing calls into
// the guest while reading.
class Reader {
 public:
  // `resource` serves the std::pmr containers loaded through this reader.
  explicit Reader(const AbiContext& cx, std::pmr::memory_resource* resource = std::pmr::get_default_resource())
      : cx_(cx),
        resource_(resource),
        base_(cx.base()),
        size_(cx.size()),
        canon_nan_(cx.options().canonicalize_nan),
        utf8_(cx.options().encoding == StringEncoding::Utf8),
        lift_budget_(cx.lift_limit()) {}

  const AbiContext& context() const { return cx_; }
  std::pmr::memory_resource* resource() const { return resource_; }
  const uint8_t* at(uint64_t ptr) const { return base_ + ptr; }
  bool canonicalize_nan() const { return canon_nan_; }

  template <class T>
  CMHOST_TYPED_INLINE T read(uint64_t ptr) const {
    T v;
    std::memcpy(&v, base_ + ptr, sizeof(T));
    return v;
  }
  // Traps unless [ptr, ptr + bytes) is in memory and ptr is aligned.
  CMHOST_TYPED_INLINE void check(uint64_t ptr, uint64_t bytes, uint32_t align, const char* what) const {
    if ((ptr & (align - 1)) != 0 || ptr > size_ || bytes > size_ - ptr) fail_range(ptr, bytes, align, what);
  }
  // Strings: the common case (UTF-8 options, ASCII text) is checked inline;
  // anything else takes the general path, with the same checks and traps.
  std::string string(uint64_t ptr, uint64_t tagged_units) const {
    if (const char* s = ascii_utf8(ptr, tagged_units)) {
      charge_text(tagged_units);
      return std::string(s, tagged_units);
    }
    return string_general(ptr, tagged_units);
  }
  std::pmr::string pmr_string(uint64_t ptr, uint64_t tagged_units) const {
    if (const char* s = ascii_utf8(ptr, tagged_units)) {
      charge_text(tagged_units);
      return std::pmr::string(s, tagged_units, resource_);
    }
    return std::pmr::string(string_general(ptr, tagged_units), resource_);
  }
  // Replaces `out` with the string, built in place.
  CMHOST_TYPED_INLINE void string_into(uint64_t ptr, uint64_t tagged_units, std::string& out) const {
    if (const char* s = ascii_utf8(ptr, tagged_units)) {
      charge_text(tagged_units);
      out.assign(s, tagged_units);
    } else {
      out = string_general(ptr, tagged_units);
    }
  }
  // Strings with another allocator (std::pmr::string, FrameString): built
  // in place with the reader's resource or the allocator `out` has. A trap
  // comes before `out` is touched; a failed allocation leaves it empty.
  template <class A>
  CMHOST_TYPED_INLINE void string_into(uint64_t ptr, uint64_t tagged_units,
                                       std::basic_string<char, std::char_traits<char>, A>& out) const {
    const A allocator = [&] {
      if constexpr (std::is_same_v<A, std::pmr::polymorphic_allocator<char>>)
        return A(resource_);
      else
        return out.get_allocator();
    }();
    if (const char* s = ascii_utf8(ptr, tagged_units)) {
      charge_text(tagged_units);
      rebuild(out, s, tagged_units, allocator);
    } else {
      const std::string general = string_general(ptr, tagged_units);
      rebuild(out, general.data(), general.size(), allocator);
    }
  }
  CMHOST_TYPED_INLINE std::string_view string_view(uint64_t ptr, uint64_t tagged_units) const {
    if (const char* s = ascii_utf8(ptr, tagged_units)) return std::string_view(s, tagged_units);
    return string_view_general(ptr, tagged_units);
  }
  [[noreturn]] void fail(const std::string& reason) const;
  // Counts host bytes the lift allocates against AbiContext::lift_limit.
  CMHOST_TYPED_INLINE void charge(uint64_t bytes) const {
    if (bytes > lift_budget_) [[unlikely]]
      cx_.lift_limit_reached(bytes);
    lift_budget_ -= bytes;
  }
  // Text of `bytes` bytes: short text lives inside the string object (which
  // its container was charged for) and allocates nothing.
  CMHOST_TYPED_INLINE void charge_text(uint64_t bytes) const {
    if (bytes > kInlineTextBytes) charge(bytes);
  }
  static constexpr uint64_t kInlineTextBytes = 15;  // libstdc++'s short-string capacity

 private:
  // Constructs `out` afresh (an assignment would keep its allocator).
  template <class S, class A>
  CMHOST_TYPED_INLINE static void rebuild(S& out, const char* data, size_t size, const A& allocator) {
    std::destroy_at(&out);
    try {
      std::construct_at(&out, data, size, allocator);
    } catch (...) {
      std::construct_at(&out, allocator);
      throw;
    }
  }
  CMHOST_TYPED_INLINE const char* ascii_utf8(uint64_t ptr, uint64_t length) const {
    if (!utf8_ || ptr > size_ || length > size_ - ptr || length > kMaxStringByteLength) return nullptr;
    const uint8_t* s = base_ + ptr;
    uint64_t i = 0;
    for (; i + 8 <= length; i += 8) {
      uint64_t word;
      std::memcpy(&word, s + i, 8);
      if (word & 0x8080808080808080ull) return nullptr;
    }
    for (; i < length; ++i)
      if (s[i] & 0x80) return nullptr;
    return reinterpret_cast<const char*>(s);
  }
  std::string string_general(uint64_t ptr, uint64_t tagged_units) const;
  std::string_view string_view_general(uint64_t ptr, uint64_t tagged_units) const;
  [[noreturn]] void fail_range(uint64_t ptr, uint64_t bytes, uint32_t align, const char* what) const;
  const AbiContext& cx_;
  std::pmr::memory_resource* resource_;
  const uint8_t* base_;
  uint64_t size_;
  bool canon_nan_;
  bool utf8_;
  mutable uint64_t lift_budget_;  // what the lift may still allocate
};

constexpr uint32_t align_to(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }
constexpr uint32_t discriminant_size(size_t cases) { return cases <= 256 ? 1 : cases <= 65536 ? 2 : 4; }

// Lift<T, W>: size, align, load(reader, ptr) and matches(type, found) for
// the 32-bit (W = I32) or 64-bit memory layout. matches() compares shapes
// and, when `found` is not null, binds there the handle tags it meets
// (resource handles, handle.hpp); a tag bound to two resource types fails.
template <class T, AddrWidth W, class = void>
struct Lift;

class HandleTypes;

// Lower<T, W>: a C++ type's store and lower_flat (CanonicalABI.md store and
// lower_flat) for the 32-bit or 64-bit memory layout:
//
//   Lower<T, W>::flat_count          how many core values T flattens to
//   Lower<T, W>::lower_flat(cx, v, out)   writes them at out[0 .. flat_count)
//   Lower<T, W>::store(cx, ptr, v)   writes v at ptr (allocated by the caller)
template <class T, AddrWidth W, class = void>
struct Lower;

// FlatLift<T>: lift_flat for 32-bit memories, a value from its core
// values, with the rules of lifting: narrower integers truncated, any
// nonzero bool true, chars and discriminants checked (a trap), NaNs
// canonical by the options; strings, lists and maps read from the
// context's memory at the pointer and length they carry (views point into
// it).
//
//   FlatLift<T>::lift(cx, in)        reads T from flat_count core values
template <class T, class = void>
struct FlatLift;

namespace detail {

bool kind_is(const Type& t, TypeKind kind);
bool is_list(const Type& t);
size_t field_count(const Type& t);  // record or tuple fields, else SIZE_MAX
const Type* field_type(const Type& t, size_t i);
size_t case_count(const Type& t);   // variant-like cases, else SIZE_MAX
const Type* case_type(const Type& t, size_t i);  // null: no payload
const Type* element_type(const Type& t);
size_t label_count(const Type& t);  // flags labels
uint32_t fixed_length(const Type& t);

template <AddrWidth W>
using Addr = std::conditional_t<W == AddrWidth::I32, uint32_t, uint64_t>;

// A (ptr, length) pair at p.
template <AddrWidth W>
CMHOST_TYPED_INLINE std::pair<uint64_t, uint64_t> pointer_pair(const Reader& r, uint64_t p) {
  return {r.read<Addr<W>>(p), r.read<Addr<W>>(p + sizeof(Addr<W>))};
}

// Loads the value at p into an existing object, building what it can in
// place (records field by field, strings from guest bytes): no temporary
// is built and moved.
template <class T, AddrWidth W>
CMHOST_TYPED_INLINE void load_into(const Reader& r, uint64_t p, T& out) {
  if constexpr (requires { Lift<T, W>::load_into(r, p, out); })
    Lift<T, W>::load_into(r, p, out);
  else if constexpr (std::is_trivially_copyable_v<T>)
    out = Lift<T, W>::load(r, p);
  else
    detail::replace(out, Lift<T, W>::load(r, p));
}

template <class T>
CMHOST_TYPED_INLINE void put(AbiContext& cx, uint64_t p, T v) {
  std::memcpy(cx.base() + p, &v, sizeof(T));
}
template <AddrWidth W>
CMHOST_TYPED_INLINE void put_pair(AbiContext& cx, uint64_t p, uint64_t a, uint64_t b) {
  put<Addr<W>>(cx, p, static_cast<Addr<W>>(a));
  put<Addr<W>>(cx, p + sizeof(Addr<W>), static_cast<Addr<W>>(b));
}
// Whether [data, data + n) lies in cx's memory (which realloc may move).
bool inside_memory(const AbiContext& cx, const void* data, uint64_t n);
// Usage unless cx's memory is 32-bit, as the flat lifts of pointers need.
void require_memory32(const AbiContext& cx);

}  // namespace detail

}  // namespace cmhost::abi::typed
