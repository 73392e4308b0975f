// Dynamic component values.
//
// A Val is small (32 bytes) and cheap to move: variants keep a case index, not
// a name; records keep fields by position (names live in the Type); strings
// of up to 23 bytes live inside the Val; lists of numbers can be packed into
// one byte block so they cross the boundary with a single copy. Lifting
// builds a value's item arrays, long strings and small number lists in one
// arena (ValArena), so a lifted tree of thousands of records is laid out in
// order and dropped at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/abi/type.hpp"

namespace cmhost::abi {

// The kind of a value is the kind of its type, except that values of
// fixed-length lists are Lists.
using ValKind = TypeKind;

class Val;

namespace detail {
// Copies n <= 24 bytes with overlapping fixed-size moves: no call, no loop.
// Short text and small number lists are copied this way by the thousand.
inline void copy_short(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (n >= 8) {
    const size_t mid = n > 16 ? 8 : n - 8;
    uint64_t a, b, c;
    std::memcpy(&a, s, 8);
    std::memcpy(&b, s + mid, 8);
    std::memcpy(&c, s + n - 8, 8);
    std::memcpy(d, &a, 8);
    std::memcpy(d + mid, &b, 8);
    std::memcpy(d + n - 8, &c, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, s, 4);
    std::memcpy(&b, s + n - 4, 4);
    std::memcpy(d, &a, 4);
    std::memcpy(d + n - 4, &b, 4);
  } else if (n) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}
}  // namespace detail

// Where a lifted tree's item arrays and long strings come from: bump allocation in chunks
// reused by the thread, freed together when the last Val holding a
// reference to the arena goes. Vals inside the tree hold no reference; a Val
// moved out of it takes one, and a copy is a deep copy out of the arena.
class ValArena {
 public:
  static ValArena* create();  // one reference, the caller's
  void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  Val* allocate_items(size_t count) {
    const size_t bytes = count * kItemBytes;
    if (bytes <= static_cast<size_t>(end_ - next_)) {
      Val* out = reinterpret_cast<Val*>(next_);
#if defined(__GNUC__)
      __builtin_prefetch(next_ + 1024, 1);  // the lines a tree being built writes next
#endif
      next_ += bytes;
      return out;
    }
    return grow(bytes);
  }
  // Room for `size` bytes of text; keeps the next item array aligned.
  char* allocate_text(size_t size) {
    return reinterpret_cast<char*>(allocate_items((size + kItemBytes - 1) / kItemBytes));
  }

 private:
  static constexpr size_t kItemBytes = 32;  // sizeof(Val), checked in val.cpp
  struct Chunk;
  ValArena() = default;
  Val* grow(size_t bytes);
  void destroy() noexcept;
  std::atomic<uint32_t> refs_{1};
  unsigned char* next_ = nullptr;
  unsigned char* end_ = nullptr;
  Chunk* chunks_ = nullptr;  // newest first; the last holds this object
};

class Val {
 public:
  Val() noexcept : kind_(ValKind::Bool) { storage_.u = 0; }
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
  static Val string_unchecked(std::string_view v) {
    Val out(ValKind::String, 0);
    out.init_text(v);
    return out;
  }

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

  // Scalar accessors throw InvalidValue when the kind differs. They are
  // inline: walking a lifted tree is mostly these.
  bool as_bool() const { return checked(ValKind::Bool, "bool") != 0; }
  int8_t as_s8() const { return static_cast<int8_t>(checked(ValKind::S8, "s8")); }
  uint8_t as_u8() const { return static_cast<uint8_t>(checked(ValKind::U8, "u8")); }
  int16_t as_s16() const { return static_cast<int16_t>(checked(ValKind::S16, "s16")); }
  uint16_t as_u16() const { return static_cast<uint16_t>(checked(ValKind::U16, "u16")); }
  int32_t as_s32() const { return static_cast<int32_t>(checked(ValKind::S32, "s32")); }
  uint32_t as_u32() const { return static_cast<uint32_t>(checked(ValKind::U32, "u32")); }
  int64_t as_s64() const { return static_cast<int64_t>(checked(ValKind::S64, "s64")); }
  uint64_t as_u64() const { return checked(ValKind::U64, "u64"); }
  float as_f32() const;
  double as_f64() const;
  char32_t as_char() const { return static_cast<char32_t>(checked(ValKind::Char, "char")); }
  std::string_view as_string() const {  // valid while the Val lives unchanged
    if (repr_ != Repr::Text) wrong_kind("string");
    if (storage_.text.form <= kMaxInlineText) return {storage_.text.bytes, storage_.text.form};
    return out_of_line_text();
  }
  uint32_t as_flags() const { return static_cast<uint32_t>(checked(ValKind::Flags, "flags")); }
  uint32_t as_handle() const;  // own, borrow, stream, future, error-context

  // Raw scalar bits: integers sign- or zero-extended to 64 bits, floats as
  // their IEEE bit pattern, bool 0/1, char its code point.
  uint64_t scalar_bits() const { return storage_.u; }

  // Lists and maps.
  size_t list_size() const;
  Val list_element(size_t i) const;  // works for packed and unpacked lists
  bool is_packed() const { return repr_ == Repr::Packed; }
  ValKind packed_element_kind() const { return static_cast<ValKind>(elem_); }
  std::span<const uint8_t> packed_bytes() const {
    if (repr_ != Repr::Packed) return {};
    return {storage_.packed.data(), storage_.packed.byte_size};
  }

  // Lists (unpacked), records, tuples, maps: the elements; variants: the
  // payload if any.
  std::span<const Val> items() const {
    if (repr_ != Repr::Items) return {};
    return {storage_.items.data, storage_.items.size};
  }
  std::span<Val> items_mut();

  // Variants, enums, options (0 none, 1 some), results (0 ok, 1 err).
  uint32_t case_index() const { return case_; }
  const Val* payload() const {
    if (repr_ != Repr::Items || storage_.items.size == 0) return nullptr;
    return storage_.items.data;
  }

  bool operator==(const Val& other) const;  // floats compare by bit pattern

  // For the canonical ABI programs: build values without re-checking.
  static Val from_bits(ValKind kind, uint64_t bits) { return Val(kind, bits); }
  static Val compound(ValKind kind, uint32_t case_index, std::vector<Val> items);
  // A compound value with room for `capacity` items, added in order with
  // emplace_item (the value is built in place, without a move).
  static Val compound_with_capacity(ValKind kind, uint32_t case_index, size_t capacity);
  // A compound with no items (an enum, a case without payload, none).
  static Val empty_compound(ValKind kind, uint32_t case_index) {
    Val out(kind, 0);
    out.case_ = case_index;
    out.storage_.items = Items{nullptr, 0, 0, nullptr};
    out.repr_ = Repr::Items;
    return out;
  }
  template <typename Make>
  void emplace_item(Make&& make) {
    new (storage_.items.data + storage_.items.size) Val(make());
    ++storage_.items.size;
  }
  static Val packed_uninitialized(ValKind element, size_t count, uint8_t** data);

  // For lifting into an arena: a compound whose items live in `arena`. Items
  // are built in place: construct one at next_item(), then item_added().
  // When every item is done and arena_droppable(), mark_droppable() lets
  // dropping the tree skip walking it.
  static Val compound_in(ValArena& arena, ValKind kind, uint32_t case_index, size_t capacity) {
    Val* items = capacity ? arena.allocate_items(capacity) : nullptr;  // may throw: nothing built yet
    return compound_over(arena, kind, case_index, items, capacity);
  }
  // The same over `capacity` item slots the caller took from `arena`, so
  // that nested compounds can share one allocation.
  static Val compound_over(ValArena& arena, ValKind kind, uint32_t case_index, Val* items, size_t capacity) {
    Val out(kind, 0);
    out.case_ = case_index;
    out.storage_.items = Items{items, 0, static_cast<uint32_t>(capacity), capacity ? &arena : nullptr};
    out.repr_ = Repr::Items;
    return out;
  }
  // For lifting: text in the arena when it does not fit inside the Val.
  static constexpr size_t kMaxInlineText = 23, kMaxInlinePacked = 8;
  // One object returned on every path: a move would make the text take a
  // reference to the arena, and the tree a walk when dropped.
  static Val string_in(ValArena& arena, std::string_view text) {
    Val out(ValKind::String, 0);
    if (text.size() <= kMaxInlineText || text.size() > UINT32_MAX) {
      out.init_text(text);
    } else {
      char* data = arena.allocate_text(text.size());  // may throw: `out` is still a scalar
      std::memcpy(data, text.data(), text.size());
      out.set_out_of_line_text(kArenaText, data, text.size(), &arena);
      out.repr_ = Repr::Text;
    }
    return out;
  }
  // For lifting: a packed list of `count` numbers whose bytes (filled by
  // the caller through *data) live in the arena when they do not fit inside
  // the Val.
  static Val packed_in(ValArena& arena, ValKind element, size_t count, uint8_t** data);
  // For lifting: a packed list of numbers of at most kMaxInlinePacked bytes,
  // held inside the Val.
  static Val packed_inline(ValKind element, const uint8_t* bytes, size_t byte_size) {
    if (byte_size > kMaxInlinePacked) throw std::length_error("packed_inline: more bytes than a Val holds");
    Val out(ValKind::List, 0);
    out.storage_.packed.heap = nullptr;
    out.storage_.packed.byte_size = byte_size;
    detail::copy_short(out.storage_.packed.inline_bytes, bytes, byte_size);
    out.elem_ = static_cast<uint8_t>(element);
    out.repr_ = Repr::Packed;
    return out;
  }
  Val* next_item() { return storage_.items.data + storage_.items.size; }
  void item_added() { ++storage_.items.size; }
  // Dropping this value needs no work: nothing on the heap, no reference held.
  bool arena_droppable() const {
    switch (repr_) {
      case Repr::Scalar: return true;
      case Repr::Text:
        return storage_.text.form <= kMaxInlineText ||
               (storage_.text.form == kArenaText && (arena_flags_ & kArenaFlagRef) == 0);
      case Repr::Packed:
        return storage_.packed.heap == nullptr ||
               (arena_flags_ & (kArenaFlagBytesInArena | kArenaFlagRef)) == kArenaFlagBytesInArena;
      case Repr::Items:
        return storage_.items.capacity == 0 || (storage_.items.arena && (arena_flags_ & kArenaFlagRef) == 0 &&
                                                (arena_flags_ & kArenaFlagDroppable));
    }
    return false;
  }
  void mark_droppable() { arena_flags_ |= kArenaFlagDroppable; }
  // Makes this value (the root of a lifted tree) keep its arena alive.
  void hold_arena() {
    if (ValArena* arena = arena_of(); arena && !(arena_flags_ & kArenaFlagRef)) {
      arena->add_ref();
      arena_flags_ |= kArenaFlagRef;
    }
  }

 private:
  enum class Repr : uint8_t { Scalar, Text, Items, Packed };
  // Numbers of a packed list: up to kMaxInlinePacked bytes inline (paths, small
  // id lists), longer on the heap. Moves are bitwise, as for text.
  struct Packed {
    uint8_t* heap;  // null when inline; in the arena (whose address replaces the inline bytes) if kArenaFlagBytesInArena
    uint64_t byte_size;
    uint8_t inline_bytes[kMaxInlinePacked];
    uint8_t* data() { return heap ? heap : inline_bytes; }
    const uint8_t* data() const { return heap ? heap : inline_bytes; }
  };
  // A fixed-capacity item array; small ones come from a per-thread pool, as
  // lifting builds and drops them by the thousand.
  struct Items {
    Val* data;
    uint32_t size;
    uint32_t capacity;
    ValArena* arena;  // null: data is from the item pool
  };
  // arena_flags_: this Val holds a reference to the arena of its items,
  // text or packed bytes; its subtree is arena_droppable; its packed bytes
  // are in an arena.
  static constexpr uint8_t kArenaFlagRef = 1, kArenaFlagDroppable = 2, kArenaFlagBytesInArena = 4;
  // UTF-8 text: up to kMaxInlineText bytes inline (most names, ids and labels),
  // longer on the heap, or in the arena of a lifted tree. Moves are bitwise:
  // nothing points into the Val.
  static constexpr uint8_t kHeapText = 0xFF, kArenaText = 0xFE;
  struct Text {
    // Inline text, or (kHeapText) data pointer and 64-bit size, or
    // (kArenaText) data pointer, ValArena pointer and 32-bit size.
    char bytes[kMaxInlineText];
    uint8_t form;  // the inline size, kHeapText or kArenaText
  };
  // Scalars (integers, floats as bits, handles, flags) or what the repr says.
  union Storage {
    Storage() {}
    ~Storage() {}
    uint64_t u;
    Text text;
    Items items;
    Packed packed;
  };

  Val(ValKind kind, uint64_t bits) noexcept : kind_(kind) { storage_.u = bits; }
  void set_inline_text(std::string_view text) {
    detail::copy_short(storage_.text.bytes, text.data(), text.size());
    storage_.text.form = static_cast<uint8_t>(text.size());
  }
  void set_out_of_line_text(uint8_t form, const char* data, size_t size, ValArena* arena) {
    std::memcpy(storage_.text.bytes, &data, sizeof data);
    if (form == kArenaText) {
      const auto size32 = static_cast<uint32_t>(size);
      std::memcpy(storage_.text.bytes + 8, &arena, sizeof arena);
      std::memcpy(storage_.text.bytes + 16, &size32, sizeof size32);
    } else {
      const uint64_t size64 = size;
      std::memcpy(storage_.text.bytes + 8, &size64, sizeof size64);
    }
    storage_.text.form = form;
  }
  // The arena this Val's items or text live in, if any.
  ValArena* arena_of() const {
    if (repr_ == Repr::Items) return storage_.items.arena;
    if (repr_ == Repr::Text && storage_.text.form == kArenaText) {
      ValArena* arena;
      std::memcpy(&arena, storage_.text.bytes + 8, sizeof arena);
      return arena;
    }
    if (repr_ == Repr::Packed && (arena_flags_ & kArenaFlagBytesInArena)) {
      ValArena* arena;
      std::memcpy(&arena, storage_.packed.inline_bytes, sizeof arena);
      return arena;
    }
    return nullptr;
  }
  void destroy() noexcept {
    if (repr_ != Repr::Scalar) destroy_storage();
  }
  void destroy_storage() noexcept;
  void init_items(size_t capacity);
  void init_text(std::string_view text) {
    if (text.size() > kMaxInlineText) return init_heap_text(text);
    set_inline_text(text);
    repr_ = Repr::Text;
  }
  void init_heap_text(std::string_view text);
  void init_packed(size_t byte_size);
  void copy_from(const Val& other);
  void move_from(Val&& other) noexcept {
    elem_ = other.elem_;
    case_ = other.case_;
    repr_ = other.repr_;
    arena_flags_ = other.arena_flags_;
    switch (repr_) {
      case Repr::Scalar: storage_.u = other.storage_.u; return;
      case Repr::Items: storage_.items = other.storage_.items; break;
      case Repr::Text: storage_.text = other.storage_.text; break;
      case Repr::Packed: storage_.packed = other.storage_.packed; break;
    }
    other.repr_ = Repr::Scalar;
    other.storage_.u = 0;
    hold_arena();  // leaving its tree: keep the arena alive
  }
  [[noreturn]] void wrong_kind(const char* wanted) const;
  uint64_t checked(ValKind kind, const char* name) const {
    if (kind_ != kind) wrong_kind(name);
    return storage_.u;
  }
  std::string_view out_of_line_text() const;

  ValKind kind_;
  Repr repr_ = Repr::Scalar;
  uint8_t elem_ = 0;  // packed element kind
  uint8_t arena_flags_ = 0;
  uint32_t case_ = 0;
  Storage storage_;
};

uint32_t scalar_size(ValKind kind);  // bytes of a packed element, 0 if not packable

}  // namespace cmhost::abi
