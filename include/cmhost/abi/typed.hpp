// Typed lifts: canonical ABI loads specialised at compile time for C++
// types, the code a bindings generator would emit. A C++ type stands for a
// WIT type:
//
//   bool, (u)int8..64_t, float, double, char32_t   the primitives
//   std::string / std::string_view                  string (a view reads in place)
//   std::vector<T> / ListView<T>                    list<T> (a view loads on access)
//   std::pmr::string / std::pmr::vector<T>          string, list<T> allocated from the
//                                                   reader's memory resource (an arena)
//   FrameString / FrameVector<T>                    string, list<T> allocated from the
//                                                   thread's frame arena (frame_arena.hpp)
//   std::optional<T>                                option<T>
//   std::variant<Cs...>                             variant (std::monostate: no payload;
//                                                   also result<T, E> and enum shapes)
//   std::tuple<Ts...>                               tuple
//   a struct with a Record<T> specialisation        record
//   an enum class with an Enum<E> specialisation    enum
//   std::bitset<N>                                  flags with N labels
//   std::array<T, N>                                list<T, N>
//   std::map<K, V>                                  map<K, V>
//   Own<R>, Borrow<R>, ErrorContext                 own<r>, borrow<r>, error-context
//
// cmhost/abi/typed_lower.hpp writes the same types into guest memory and
// into flat core values (the lowering direction).
//
// Sizes, alignments, offsets and discriminant widths are constants of the
// instantiated templates; loading reads guest memory directly with the
// spec's checks (bounds, alignment, UTF-8, discriminants, chars) and builds
// no Val. Views (string_view, ListView) point into guest memory: they are
// valid until the guest runs again, and need UTF-8 strings. std::pmr
// containers take the Reader's memory resource, so a batch of values can
// come from one arena and be dropped at once:
//
//   std::pmr::monotonic_buffer_resource arena(buffer, sizeof buffer);
//   typed::Reader reader(cx, &arena);
//   auto ops = typed::load<std::pmr::vector<Op>>(reader, ptr);
//
// load_result_into goes one step further for a call's result: the value is
// left in the arena and freed with it, without a destructor walk.
//
//   struct Point { uint32_t x; std::string label; };
//   template <> struct cmhost::abi::typed::Record<Point> {
//     static constexpr auto fields = std::make_tuple(field("x", &Point::x), field("label", &Point::label));
//   };
//   Point p = typed::load<Point>(cx, ptr);
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "cmhost/abi/canon.hpp"
#include "cmhost/abi/frame_arena.hpp"
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

// Canon<T, W>: size, align, load(reader, ptr) and matches(type) for the
// 32-bit (W = I32) or 64-bit memory layout.
template <class T, AddrWidth W, class = void>
struct Canon;

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

// list<T> read in place: elements are loaded when accessed.
template <class T, AddrWidth W = AddrWidth::I32>
class ListView {
 public:
  ListView() = default;
  ListView(const Reader* r, uint64_t ptr, uint64_t length) : r_(r), ptr_(ptr), length_(length) {}
  uint64_t size() const { return length_; }
  bool empty() const { return length_ == 0; }
  T operator[](uint64_t i) const { return Canon<T, W>::load(*r_, address(i)); }
  // Where element i lives, for reading it in another form (visit_variant).
  uint64_t address(uint64_t i) const { return ptr_ + i * Canon<T, W>::size; }
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
uint32_t canonical_nan32();
uint64_t canonical_nan64();
bool is_nan32(uint32_t bits);
// A Unicode scalar value: what a char holds.
constexpr bool is_scalar_value(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c < 0x110000); }
bool is_nan64(uint64_t bits);
[[noreturn]] void bad_char(const Reader& r, uint32_t c);
[[noreturn]] void bad_discriminant(const Reader& r, uint32_t disc, size_t cases);

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
  if constexpr (requires { Canon<T, W>::load_into(r, p, out); })
    Canon<T, W>::load_into(r, p, out);
  else if constexpr (std::is_trivially_copyable_v<T>)
    out = Canon<T, W>::load(r, p);
  else
    detail::replace(out, Canon<T, W>::load(r, p));
}

}  // namespace detail

// ---- primitives ----------------------------------------------------------------

template <class T, TypeKind K, AddrWidth W>
struct ScalarCanon {
  static constexpr uint32_t size = sizeof(T), align = sizeof(T);
  CMHOST_TYPED_INLINE static T load(const Reader& r, uint64_t p) { return r.read<T>(p); }
  static bool matches(const Type& t) { return detail::kind_is(t, K); }
};

template <AddrWidth W> struct Canon<uint8_t, W> : ScalarCanon<uint8_t, TypeKind::U8, W> {};
template <AddrWidth W> struct Canon<int8_t, W> : ScalarCanon<int8_t, TypeKind::S8, W> {};
template <AddrWidth W> struct Canon<uint16_t, W> : ScalarCanon<uint16_t, TypeKind::U16, W> {};
template <AddrWidth W> struct Canon<int16_t, W> : ScalarCanon<int16_t, TypeKind::S16, W> {};
template <AddrWidth W> struct Canon<uint32_t, W> : ScalarCanon<uint32_t, TypeKind::U32, W> {};
template <AddrWidth W> struct Canon<int32_t, W> : ScalarCanon<int32_t, TypeKind::S32, W> {};
template <AddrWidth W> struct Canon<uint64_t, W> : ScalarCanon<uint64_t, TypeKind::U64, W> {};
template <AddrWidth W> struct Canon<int64_t, W> : ScalarCanon<int64_t, TypeKind::S64, W> {};

template <AddrWidth W>
struct Canon<bool, W> {
  static constexpr uint32_t size = 1, align = 1;
  static bool load(const Reader& r, uint64_t p) { return *r.at(p) != 0; }
  static bool matches(const Type& t) { return detail::kind_is(t, TypeKind::Bool); }
};

// Floats: NaNs become the canonical NaN, as lifting does.
template <class T, class Bits, TypeKind K>
struct FloatCanon {
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
  static bool matches(const Type& t) { return detail::kind_is(t, K); }
};
template <AddrWidth W> struct Canon<float, W> : FloatCanon<float, uint32_t, TypeKind::F32> {};
template <AddrWidth W> struct Canon<double, W> : FloatCanon<double, uint64_t, TypeKind::F64> {};

template <AddrWidth W>
struct Canon<char32_t, W> {
  static constexpr uint32_t size = 4, align = 4;
  static char32_t load(const Reader& r, uint64_t p) {
    const uint32_t c = r.read<uint32_t>(p);
    if (!detail::is_scalar_value(c)) detail::bad_char(r, c);
    return c;
  }
  static bool matches(const Type& t) { return detail::kind_is(t, TypeKind::Char); }
};

template <AddrWidth W>
struct Canon<std::monostate, W> {  // a case without payload
  static constexpr uint32_t size = 0, align = 1;
  static std::monostate load(const Reader&, uint64_t) { return {}; }
};

// ---- strings and lists -------------------------------------------------------------

// string as an owned std::string or a std::string_view into guest memory.
template <class S, AddrWidth W>
struct StringCanon {
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
  static bool matches(const Type& t) { return detail::kind_is(t, TypeKind::String); }
};
// std::string, std::pmr::string, FrameString.
template <class A, AddrWidth W>
struct Canon<std::basic_string<char, std::char_traits<char>, A>, W>
    : StringCanon<std::basic_string<char, std::char_traits<char>, A>, W> {};
template <AddrWidth W> struct Canon<std::string_view, W> : StringCanon<std::string_view, W> {};

namespace detail {
// Checks a list's (ptr, length) as lifting does; returns the element range.
template <class T, AddrWidth W>
CMHOST_TYPED_INLINE void check_elements(const Reader& r, uint64_t ptr, uint64_t length) {
  constexpr uint32_t es = Canon<T, W>::size;
  if (length > kMaxListByteLength / es) r.fail("list of " + std::to_string(length) + " elements is too long");
  r.check(ptr, length * es, Canon<T, W>::align, "list");
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
struct ListCanon {
  static constexpr uint32_t size = 2 * ptr_size(W), align = ptr_size(W);
  static bool matches(const Type& t) {
    return detail::is_list(t) && Canon<T, W>::matches(*detail::element_type(t));
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
struct Canon<std::vector<T, A>, W> : ListCanon<T, W> {
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
        const uint64_t at = ptr + i * Canon<T, W>::size;
        if constexpr (requires { Canon<T, W>::emplace_back(r, at, out); }) {
          Canon<T, W>::emplace_back(r, at, out);
        } else if constexpr (std::is_default_constructible_v<T> && requires { Canon<T, W>::load_into(r, at, out.back()); }) {
          out.emplace_back();
          Canon<T, W>::load_into(r, at, out.back());
        } else {
          out.push_back(Canon<T, W>::load(r, at));
        }
      }
    }
    return out;
  }
};

template <class T, AddrWidth W>
struct Canon<ListView<T, W>, W> : ListCanon<T, W> {
  CMHOST_TYPED_INLINE static ListView<T, W> load(const Reader& r, uint64_t p) {
    const auto [ptr, length] = detail::checked_list<T, W>(r, p);
    return ListView<T, W>(&r, ptr, length);
  }
};

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

template <class T, AddrWidth W>
struct Canon<T, W, std::enable_if_t<is_adapted_v<T>>> {
  using R = typename Adapt<T>::repr;
  static constexpr uint32_t size = Canon<R, W>::size, align = Canon<R, W>::align;
  static T load(const Reader& r, uint64_t p) { return Adapt<T>::make(Canon<R, W>::load(r, p)); }
  static void load_into(const Reader& r, uint64_t p, T& out)
    requires requires(T& t) { { Adapt<T>::get(t) } -> std::same_as<R&>; }
  {
    detail::load_into<R, W>(r, p, Adapt<T>::get(out));
  }
  static bool matches(const Type& t) { return Canon<R, W>::matches(t); }
};

// ---- variants ------------------------------------------------------------------

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
  static constexpr uint32_t payload_align = std::max({uint32_t{1}, Canon<Cs, W>::align...});
  static constexpr uint32_t payload_size = std::max({uint32_t{0}, Canon<Cs, W>::size...});
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
bool case_matches(const Type* payload) {
  if constexpr (std::is_same_v<C, std::monostate>)
    return payload == nullptr;
  else if constexpr (is_adapted_v<C>)
    return case_matches<typename Adapt<C>::repr, W>(payload);
  else
    return payload != nullptr && Canon<C, W>::matches(*payload);
}

}  // namespace detail

template <class... Cs, AddrWidth W>
struct Canon<std::variant<Cs...>, W> {
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
          out.template emplace<I>(Canon<C, W>::load(r, p));
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
  static bool matches(const Type& t) {
    if (detail::case_count(t) != sizeof...(Cs)) return false;
    return matches_cases(t, std::index_sequence_for<Cs...>{});
  }

 private:
  template <size_t... I>
  static constexpr auto make_loaders(std::index_sequence<I...>) {
    return std::array<V (*)(const Reader&, uint64_t), sizeof...(Cs)>{[](const Reader& r, uint64_t p) -> V {
      return V(std::in_place_index<I>, Canon<std::variant_alternative_t<I, V>, W>::load(r, p));
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
            out.emplace_back(std::in_place_index<I>, Canon<C, W>::load(r, p));
          }
        }...};
  }
  template <size_t... I>
  static bool matches_cases(const Type& t, std::index_sequence<I...>) {
    return (detail::case_matches<std::variant_alternative_t<I, V>, W>(detail::case_type(t, I)) && ...);
  }
};

template <class T, AddrWidth W>
struct Canon<std::optional<T>, W> {
  using L = detail::CaseLayout<W, std::monostate, T>;
  static constexpr uint32_t size = L::size, align = L::align;
  CMHOST_TYPED_INLINE static std::optional<T> load(const Reader& r, uint64_t p) {
    if (L::discriminant(r, p) == 0) return std::nullopt;
    return Canon<T, W>::load(r, p + L::payload_offset);
  }
  CMHOST_TYPED_INLINE static void load_into(const Reader& r, uint64_t p, std::optional<T>& out) {
    if (L::discriminant(r, p) == 0) {
      out.reset();
    } else if constexpr (std::is_default_constructible_v<T>) {
      if (!out) out.emplace();
      detail::load_into<T, W>(r, p + L::payload_offset, *out);
    } else {
      out.emplace(Canon<T, W>::load(r, p + L::payload_offset));
    }
  }
  static bool matches(const Type& t) {
    return detail::kind_is(t, TypeKind::Option) && Canon<T, W>::matches(*detail::case_type(t, 1));
  }
};

// ---- records and tuples -----------------------------------------------------------

namespace detail {

// Field offsets of a record-like sequence of types.
template <AddrWidth W, class... Fs>
struct FieldLayout {
  static constexpr size_t count = sizeof...(Fs);
  static constexpr uint32_t align = std::max({uint32_t{1}, Canon<Fs, W>::align...});
  static constexpr std::array<uint32_t, count> offsets = [] {
    std::array<uint32_t, count> out{};
    const uint32_t sizes[] = {Canon<Fs, W>::size...};
    const uint32_t aligns[] = {Canon<Fs, W>::align...};
    uint32_t at = 0;
    for (size_t i = 0; i < count; ++i) {
      at = align_to(at, aligns[i]);
      out[i] = at;
      at += sizes[i];
    }
    return out;
  }();
  static constexpr uint32_t size = [] {
    const uint32_t sizes[] = {Canon<Fs, W>::size...};
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
struct Canon<T, W, std::void_t<decltype(Record<T>::fields)>> {
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
  static bool matches(const Type& t) {
    return detail::kind_is(t, TypeKind::Record) && detail::field_count(t) == L::count &&
           matches_fields(t, std::make_index_sequence<L::count>{});
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
  static bool matches_fields(const Type& t, std::index_sequence<I...>) {
    return (Canon<typename std::tuple_element_t<I, detail::FieldsOf<T>>::type, W>::matches(*detail::field_type(t, I)) &&
            ...);
  }
};

template <class... Ts, AddrWidth W>
struct Canon<std::tuple<Ts...>, W> {
  using L = detail::FieldLayout<W, Ts...>;
  static constexpr uint32_t size = L::size, align = L::align;
  static std::tuple<Ts...> load(const Reader& r, uint64_t p) {
    return load_all(r, p, std::index_sequence_for<Ts...>{});
  }
  static bool matches(const Type& t) {
    return detail::kind_is(t, TypeKind::Tuple) && detail::field_count(t) == sizeof...(Ts) &&
           matches_all(t, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t... I>
  static std::tuple<Ts...> load_all(const Reader& r, uint64_t p, std::index_sequence<I...>) {
    // Braces: fields load in order, as lifting moves their handles.
    return std::tuple<Ts...>{Canon<Ts, W>::load(r, p + L::offsets[I])...};
  }
  template <size_t... I>
  static bool matches_all(const Type& t, std::index_sequence<I...>) {
    return (Canon<Ts, W>::matches(*detail::field_type(t, I)) && ...);
  }
};

// ---- flags, enums, fixed-length lists, maps ---------------------------------------

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
struct Canon<E, W, std::enable_if_t<is_typed_enum_v<E>>> {
  static constexpr size_t count = Enum<E>::count;
  static constexpr uint32_t size = discriminant_size(count), align = size;
  static E load(const Reader& r, uint64_t p) {
    const uint32_t d = detail::read_discriminant<size>(r, p);
    if (d >= count) detail::bad_discriminant(r, d, count);
    return static_cast<E>(d);
  }
  static bool matches(const Type& t) { return detail::kind_is(t, TypeKind::Enum) && detail::case_count(t) == count; }
};

// flags with N labels as std::bitset<N> (bit i: label i).
template <size_t N, AddrWidth W>
struct Canon<std::bitset<N>, W> {
  static_assert(N >= 1 && N <= 32, "a flags type has 1 to 32 labels");
  static constexpr uint32_t size = detail::flags_size<N>(), align = size;
  static std::bitset<N> load(const Reader& r, uint64_t p) {
    const uint32_t bits = detail::read_discriminant<size>(r, p);
    return std::bitset<N>(bits);  // bits beyond the labels are ignored, as lifting does
  }
  static bool matches(const Type& t) {
    return detail::kind_is(t, TypeKind::Flags) && detail::label_count(t) == N;
  }
};

// list<T, N> as std::array<T, N>.
template <class T, size_t N, AddrWidth W>
struct Canon<std::array<T, N>, W> {
  static_assert(N >= 1, "a fixed-length list has at least one element");
  static constexpr uint32_t size = Canon<T, W>::size * N, align = Canon<T, W>::align;
  static std::array<T, N> load(const Reader& r, uint64_t p) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<T, N>{Canon<T, W>::load(r, p + I * Canon<T, W>::size)...};
    }(std::make_index_sequence<N>{});
  }
  static bool matches(const Type& t) {
    return detail::kind_is(t, TypeKind::FixedList) && detail::fixed_length(t) == N &&
           Canon<T, W>::matches(*detail::element_type(t));
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
struct Canon<std::map<K, V, C, A>, W> {
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
      K key = Canon<K, W>::load(r, at + E::offsets[0]);  // the key first, as lifting does
      out.insert_or_assign(std::move(key), Canon<V, W>::load(r, at + E::offsets[1]));
    }
    return out;
  }
  static bool matches(const Type& t) {
    if (!detail::kind_is(t, TypeKind::Map)) return false;
    const Type& entry = *detail::element_type(t);
    return Canon<K, W>::matches(*detail::field_type(entry, 0)) && Canon<V, W>::matches(*detail::field_type(entry, 1));
  }
};

// ---- resource handles ----------------------------------------------------------
//
// own<R> and borrow<R> as the host holds them: a handle of the store's host
// table (what Val::own and Val::borrow carry). `Tag` names the resource type
// in C++, a host resource's class or any tag type for a guest's: within one
// signature a tag stands for one resource type, bound when the signature is
// checked (Instance::typed_func), so a load or lower finds the component
// type it moves the handle as.

template <class Tag>
struct Own {
  uint32_t handle = 0;
  bool operator==(const Own&) const = default;
};
template <class Tag>
struct Borrow {
  uint32_t handle = 0;
  bool operator==(const Borrow&) const = default;
};

namespace detail {
// A tag's identity (tags may be incomplete types, which typeid refuses).
template <class Tag>
struct TagId {
  static constexpr char id = 0;
};
template <class Tag>
constexpr const void* tag_id() {
  return &TagId<Tag>::id;
}
}  // namespace detail

// The own and borrow types the handle tags of one signature stand for.
class HandleTypes {
 public:
  // The type of kind Own or Borrow `tag` stands for; null when unbound.
  const Type* find(const void* tag, TypeKind kind) const {
    for (const auto& b : bindings_)
      if (b.tag == tag && b.type->kind() == kind) return b.type;
    return nullptr;
  }
  // Binds `tag` to the handle type `type` (kept by the caller); false when
  // the tag stands for another resource type already.
  bool bind(const void* tag, const Type& type);
  bool empty() const { return bindings_.empty(); }

 private:
  struct Binding {
    const void* tag;
    const Type* type;
  };
  std::vector<Binding> bindings_;
};

namespace detail {
// Where matches() binds handle tags while a signature is checked (null: it
// only compares shapes). Set for the duration of one check, on one thread.
inline thread_local HandleTypes* binding_handles = nullptr;
}  // namespace detail

// While it lives, matches() binds the handle tags it meets in `handles`.
class BindingHandles {
 public:
  explicit BindingHandles(HandleTypes& handles) : saved_(detail::binding_handles) {
    detail::binding_handles = &handles;
  }
  ~BindingHandles() { detail::binding_handles = saved_; }
  BindingHandles(const BindingHandles&) = delete;
  BindingHandles& operator=(const BindingHandles&) = delete;

 private:
  HandleTypes* saved_;
};

namespace detail {

// The handle type `tag` stands for in this call; Usage when none.
const Type& handle_type(const AbiContext& cx, const void* tag, TypeKind kind);
uint32_t lift_handle(const AbiContext& cx, const Type& type, uint32_t index);

template <class Tag, TypeKind K>
struct HandleCanon {
  static constexpr uint32_t size = 4, align = 4;
  static bool matches(const Type& t) {
    if (!kind_is(t, K)) return false;
    return !binding_handles || binding_handles->bind(detail::tag_id<Tag>(), t);
  }
  static uint32_t load_handle(const Reader& r, uint64_t p) {
    const AbiContext& cx = r.context();
    return lift_handle(cx, handle_type(cx, detail::tag_id<Tag>(), K), r.read<uint32_t>(p));
  }
};
}  // namespace detail

template <class Tag, AddrWidth W>
struct Canon<Own<Tag>, W> : detail::HandleCanon<Tag, TypeKind::Own> {
  static Own<Tag> load(const Reader& r, uint64_t p) { return {Canon::load_handle(r, p)}; }
};
template <class Tag, AddrWidth W>
struct Canon<Borrow<Tag>, W> : detail::HandleCanon<Tag, TypeKind::Borrow> {
  static Borrow<Tag> load(const Reader& r, uint64_t p) { return {Canon::load_handle(r, p)}; }
};

// error-context: the host's handle to an error context (its debug message
// stays where it was made); passed to a guest, the handle moves there.
struct ErrorContext {
  uint32_t handle = 0;
  bool operator==(const ErrorContext&) const = default;
};
template <AddrWidth W>
struct Canon<ErrorContext, W> : detail::HandleCanon<ErrorContext, TypeKind::ErrorContext> {
  static ErrorContext load(const Reader& r, uint64_t p) { return {Canon::load_handle(r, p)}; }
};

// ---- entry points ----------------------------------------------------------------

// The value of type T stored at `ptr` (checked for alignment and bounds).
template <class T, AddrWidth W = AddrWidth::I32>
T load(const Reader& r, uint64_t ptr) {
  r.check(ptr, Canon<T, W>::size, Canon<T, W>::align, "value");
  return Canon<T, W>::load(r, ptr);
}

// Calls f(std::in_place_index<I>, payload) for the case of variant V stored
// at `ptr` (already checked, e.g. a ListView element), without building the
// variant: the visitor form of a lift.
template <class V, AddrWidth W = AddrWidth::I32, class F>
void visit_variant(const Reader& r, uint64_t ptr, F&& f) {
  using C = Canon<V, W>;
  using Visitor = std::remove_reference_t<F>;
  // One entry per case, indexed by the discriminant: a jump, not a search.
  static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<void (*)(const Reader&, uint64_t, Visitor&), sizeof...(I)>{
        [](const Reader& r, uint64_t payload, Visitor& f) {
          f(std::in_place_index<I>, Canon<std::variant_alternative_t<I, V>, W>::load(r, payload));
        }...};
  }(std::make_index_sequence<std::variant_size_v<V>>{});
  cases[C::L::discriminant(r, ptr)](r, ptr + C::L::payload_offset, f);
}

// Whether C++ type T can stand for `type` (shapes compared; names are not).
template <class T, AddrWidth W = AddrWidth::I32>
bool matches(const Type& type) {
  return Canon<T, W>::matches(type);
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

}  // namespace cmhost::abi::typed
