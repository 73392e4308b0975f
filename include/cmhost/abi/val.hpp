// Dynamic component values.
//
// A Val is small (48 bytes) and cheap to move: variants keep a case index, not
// a name; records keep fields by position (names live in the Type); strings
// use std::string's inline buffer; lists of numbers can be packed into one
// byte block so they cross the boundary with a single copy.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/abi/type.hpp"

namespace cmhost::abi {

// The kind of a value is the kind of its type, except that values of
// fixed-length lists are Lists.
using ValKind = TypeKind;

class Val {
 public:
  Val() noexcept : kind_(ValKind::Bool) { scalar_.u = 0; }
  Val(const Val& other);
  Val(Val&& other) noexcept : kind_(other.kind_) { move_from(std::move(other)); }
  Val& operator=(const Val& other);
  Val& operator=(Val&& other) noexcept {
    if (this != &other) {
      Val taken(std::move(other));  // `other` may live inside *this
      destroy();
      kind_ = taken.kind_;
      move_from(std::move(taken));
    }
    return *this;
  }
  ~Val() { destroy(); }

  static Val bool_(bool v) { return Val(ValKind::Bool, v ? 1u : 0u); }
  static Val s8(int8_t v) { return Val(ValKind::S8, static_cast<uint64_t>(int64_t{v})); }
  static Val u8(uint8_t v) { return Val(ValKind::U8, v); }
  static Val s16(int16_t v) { return Val(ValKind::S16, static_cast<uint64_t>(int64_t{v})); }
  static Val u16(uint16_t v) { return Val(ValKind::U16, v); }
  static Val s32(int32_t v) { return Val(ValKind::S32, static_cast<uint64_t>(int64_t{v})); }
  static Val u32(uint32_t v) { return Val(ValKind::U32, v); }
  static Val s64(int64_t v) { return Val(ValKind::S64, static_cast<uint64_t>(v)); }
  static Val u64(uint64_t v) { return Val(ValKind::U64, v); }
  static Val f32(float v);
  static Val f64(double v);
  // A Unicode scalar value; throws InvalidValue for surrogates and > 0x10FFFF.
  static Val char_(char32_t v);
  // UTF-8 text; throws InvalidValue unless it is well-formed.
  static Val string(std::string_view v);
  // For text already known to be well-formed UTF-8 (the lift programs).
  static Val string_unchecked(std::string_view v);

  static Val list(std::vector<Val> elements);
  // A list of numbers (u8..u64, s8..s64, f32, f64) as one little-endian block
  // of `count` elements.
  static Val packed_list(ValKind element, const void* data, size_t count);
  static Val bytes(std::span<const uint8_t> data) {
    return packed_list(ValKind::U8, data.data(), data.size());
  }
  static Val record(std::vector<Val> fields);
  static Val tuple(std::vector<Val> elements);
  static Val variant(uint32_t case_index, std::optional<Val> payload = std::nullopt);
  static Val enum_(uint32_t case_index);
  static Val none();
  static Val some(Val payload);
  static Val ok(std::optional<Val> payload = std::nullopt);
  static Val err(std::optional<Val> payload = std::nullopt);
  static Val flags(uint32_t mask);  // bit i set = label i set
  static Val map(std::vector<Val> entries);  // each entry a 2-tuple
  static Val own(uint32_t handle) { return Val(ValKind::Own, handle); }
  static Val borrow(uint32_t handle) { return Val(ValKind::Borrow, handle); }
  static Val stream(uint32_t handle) { return Val(ValKind::Stream, handle); }
  static Val future(uint32_t handle) { return Val(ValKind::Future, handle); }
  static Val error_context(uint32_t handle) { return Val(ValKind::ErrorContext, handle); }

  ValKind kind() const { return kind_; }

  // Scalar accessors throw InvalidValue when the kind differs.
  bool as_bool() const;
  int8_t as_s8() const;
  uint8_t as_u8() const;
  int16_t as_s16() const;
  uint16_t as_u16() const;
  int32_t as_s32() const;
  uint32_t as_u32() const;
  int64_t as_s64() const;
  uint64_t as_u64() const;
  float as_f32() const;
  double as_f64() const;
  char32_t as_char() const;
  std::string_view as_string() const;  // valid while the Val lives unchanged
  uint32_t as_flags() const;
  uint32_t as_handle() const;  // own, borrow, stream, future, error-context

  // Raw scalar bits: integers sign- or zero-extended to 64 bits, floats as
  // their IEEE bit pattern, bool 0/1, char its code point.
  uint64_t scalar_bits() const { return scalar_.u; }

  // Lists and maps.
  size_t list_size() const;
  Val list_element(size_t i) const;  // works for packed and unpacked lists
  bool is_packed() const { return repr_ == Repr::Packed; }
  ValKind packed_element_kind() const { return static_cast<ValKind>(elem_); }
  std::span<const uint8_t> packed_bytes() const;

  // Lists (unpacked), records, tuples, maps: the elements; variants: the
  // payload if any.
  std::span<const Val> items() const;
  std::span<Val> items_mut();

  // Variants, enums, options (0 none, 1 some), results (0 ok, 1 err).
  uint32_t case_index() const { return case_; }
  const Val* payload() const;

  bool operator==(const Val& other) const;  // floats compare by bit pattern

  // For the canonical ABI programs: build values without re-checking.
  static Val from_bits(ValKind kind, uint64_t bits) { return Val(kind, bits); }
  static Val compound(ValKind kind, uint32_t case_index, std::vector<Val> items);
  // A compound value with room for `capacity` items, added in order with
  // emplace_item (the value is built in place, without a move).
  static Val compound_with_capacity(ValKind kind, uint32_t case_index, size_t capacity);
  template <typename Make>
  void emplace_item(Make&& make) {
    new (storage_.items.data + storage_.items.size) Val(make());
    ++storage_.items.size;
  }
  static Val packed_uninitialized(ValKind element, size_t count, uint8_t** data);

 private:
  enum class Repr : uint8_t { Scalar, Text, Items, Packed };
  // Numbers of a packed list: up to kInlinePacked bytes inline (paths, small
  // id lists), longer on the heap. Moves are bitwise, as for text.
  static constexpr size_t kInlinePacked = 16;
  struct Packed {
    uint8_t* heap;  // null when inline
    size_t byte_size;
    uint8_t inline_bytes[kInlinePacked];
    uint8_t* data() { return heap ? heap : inline_bytes; }
    const uint8_t* data() const { return heap ? heap : inline_bytes; }
  };
  // A fixed-capacity item array; small ones come from a per-thread pool, as
  // lifting builds and drops them by the thousand.
  struct Items {
    Val* data;
    uint32_t size;
    uint32_t capacity;
  };
  // UTF-8 text: up to kInlineText bytes inline (most names, ids and labels),
  // longer on the heap. Moves are bitwise: nothing points into the Val.
  static constexpr size_t kInlineText = 31;
  static constexpr uint8_t kHeapText = 0xFF;
  struct Text {
    char bytes[kInlineText];  // inline text, or a heap pointer and a size
    uint8_t inline_size;      // kHeapText when on the heap
  };
  union Storage {
    Storage() {}
    ~Storage() {}
    Text text;
    Items items;
    Packed packed;
  };

  Val(ValKind kind, uint64_t bits) noexcept : kind_(kind) { scalar_.u = bits; }
  void destroy() noexcept {
    if (repr_ != Repr::Scalar) destroy_storage();
  }
  void destroy_storage() noexcept;
  void init_items(size_t capacity);
  void init_text(std::string_view text);
  void init_packed(size_t byte_size);
  void copy_from(const Val& other);
  void move_from(Val&& other) noexcept {
    elem_ = other.elem_;
    case_ = other.case_;
    scalar_ = other.scalar_;
    repr_ = other.repr_;
    switch (repr_) {
      case Repr::Scalar: return;
      case Repr::Items:
        storage_.items = other.storage_.items;
        other.repr_ = Repr::Scalar;
        return;
      case Repr::Text:
        storage_.text = other.storage_.text;
        other.repr_ = Repr::Scalar;
        return;
      case Repr::Packed:
        storage_.packed = other.storage_.packed;
        other.repr_ = Repr::Scalar;
        return;
    }
  }
  [[noreturn]] void wrong_kind(const char* wanted) const;

  ValKind kind_;
  Repr repr_ = Repr::Scalar;
  uint8_t elem_ = 0;  // packed element kind
  uint32_t case_ = 0;
  union {
    uint64_t u;
    double d;
  } scalar_;
  Storage storage_;
};

uint32_t scalar_size(ValKind kind);  // bytes of a packed element, 0 if not packable

}  // namespace cmhost::abi
