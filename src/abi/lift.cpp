// Lifting: linear memory and core values to Val, driven by a compiled Program.
#include <bit>
#include <cstring>
#include <type_traits>

#include "cmhost/error.hpp"
#include "program.hpp"
#include "string_store.hpp"
#include "text.hpp"

static_assert(std::endian::native == std::endian::little,
              "cmhost reads guest memory with host loads: little-endian hosts only");

namespace cmhost::abi::detail {
namespace {

// Values are built in place: a compound's items are constructed in its
// item array (from the lift's ValArena), never moved, and a trap part way
// leaves a tree that drops cleanly (see item()).
template <AddrWidth W>
class Lifter {
  using Addr = std::conditional_t<W == AddrWidth::I32, uint32_t, uint64_t>;
  static constexpr uint32_t kPtr = sizeof(Addr);

 public:
  Lifter(AbiContext& cx, const Program& p)
      : cx_(cx), p_(p), canon_nan_(cx.options().canonicalize_nan), budget_(cx.lift_limit()) {}
  ~Lifter() {
    if (arena_) arena_->release();
  }
  Lifter(const Lifter&) = delete;
  Lifter& operator=(const Lifter&) = delete;

  // Builds the value stored at `ptr` at `dst` (raw storage, or an empty Val).
  void load(uint32_t oi, uint64_t ptr, Val* dst) {
    const Op& op = p_.ops[oi];
    const uint8_t* m = cx_.base() + ptr;
    if (uint64_t bits; integer_bits(op.code, m, bits)) {
      new (dst) Val(Val::from_bits(op.val_kind, bits));
      return;
    }
    switch (op.code) {
      case OpCode::F32: new (dst) Val(f32(read<uint32_t>(m))); return;
      case OpCode::F64: new (dst) Val(f64(read<uint64_t>(m))); return;
      case OpCode::Char: new (dst) Val(char_(op, read<uint32_t>(m))); return;
      case OpCode::String: string(op, read<Addr>(m), read<Addr>(m + kPtr), dst); return;
      case OpCode::List: list(op, read<Addr>(m), read<Addr>(m + kPtr), dst); return;
      case OpCode::FixedList: elements(op, ptr, op.count, dst); return;
      case OpCode::Record: record(op, ptr, dst); return;
      case OpCode::Variant: variant(op, ptr, dst); return;
      case OpCode::Flags: {
        uint32_t bits;
        switch (op.size) {
          case 1: bits = m[0]; break;
          case 2: bits = read<uint16_t>(m); break;
          default: bits = read<uint32_t>(m); break;
        }
        new (dst) Val(Val::from_bits(ValKind::Flags, bits & op.flags_mask));
        return;
      }
      case OpCode::Handle: new (dst) Val(handle(op, read<uint32_t>(m))); return;
      default: return;  // bools and integers: above
    }
  }

  // Builds the value of core values `in` at `dst` (raw storage, or an empty Val).
  void lift_flat(uint32_t oi, const uint64_t* in, Val* dst) {
    const Op& op = p_.ops[oi];
    // Slots joined by a variant may be wider than this value's own core type:
    // 32-bit values are the low half (the spec's wrap_i64_to_i32).
    const auto lo = static_cast<uint32_t>(in[0]);
    switch (op.code) {
      case OpCode::Bool: new (dst) Val(Val::from_bits(ValKind::Bool, lo != 0)); return;
      case OpCode::S8: new (dst) Val(Val::from_bits(ValKind::S8, sext(static_cast<int8_t>(lo)))); return;
      case OpCode::U8: new (dst) Val(Val::from_bits(ValKind::U8, static_cast<uint8_t>(lo))); return;
      case OpCode::S16: new (dst) Val(Val::from_bits(ValKind::S16, sext(static_cast<int16_t>(lo)))); return;
      case OpCode::U16: new (dst) Val(Val::from_bits(ValKind::U16, static_cast<uint16_t>(lo))); return;
      case OpCode::S32: new (dst) Val(Val::from_bits(ValKind::S32, sext(static_cast<int32_t>(lo)))); return;
      case OpCode::U32: new (dst) Val(Val::from_bits(ValKind::U32, lo)); return;
      case OpCode::S64: new (dst) Val(Val::from_bits(ValKind::S64, in[0])); return;
      case OpCode::U64: new (dst) Val(Val::from_bits(ValKind::U64, in[0])); return;
      case OpCode::F32: new (dst) Val(f32(lo)); return;
      case OpCode::F64: new (dst) Val(f64(in[0])); return;
      case OpCode::Char: new (dst) Val(char_(op, lo)); return;
      case OpCode::String: string(op, addr(in[0]), addr(in[1]), dst); return;
      case OpCode::List: list(op, addr(in[0]), addr(in[1]), dst); return;
      case OpCode::FixedList: {
        const uint32_t step = p_.ops[op.elem].flat_count;
        Val* out = compound(op.val_kind, 0, op.count, dst);
        bool droppable = true;
        for (uint32_t i = 0; i < op.count; ++i)
          droppable &= item(out, p_.ops[op.elem], [&](Val* slot) { lift_flat(op.elem, in + i * step, slot); });
        if (droppable) out->mark_droppable();
        return;
      }
      case OpCode::Record: {
        Val* out = compound(op.val_kind, 0, op.count, dst);
        const Child* c = &p_.children[op.children];
        bool droppable = true;
        for (uint32_t i = 0; i < op.count; ++i) {
          droppable &= item(out, p_.ops[c[i].op], [&](Val* slot) { lift_flat(c[i].op, in, slot); });
          in += p_.ops[c[i].op].flat_count;
        }
        if (droppable) out->mark_droppable();
        return;
      }
      case OpCode::Variant: {
        const uint32_t payload_op = case_op(op, lo);
        if (payload_op == kNoOp) {
          compound(op.val_kind, lo, 0, dst);
          return;
        }
        Val* out = compound(op.val_kind, lo, 1, dst);
        if (item(out, p_.ops[payload_op], [&](Val* slot) { lift_flat(payload_op, in + 1, slot); })) out->mark_droppable();
        return;
      }
      case OpCode::Flags: new (dst) Val(Val::from_bits(ValKind::Flags, lo & op.flags_mask)); return;
      case OpCode::Handle: new (dst) Val(handle(op, lo)); return;
    }
  }

 private:
  static uint64_t sext(int64_t v) { return static_cast<uint64_t>(v); }

  // Records and variants, the inner nodes of most trees. They return
  // whether what they built is arena_droppable.
  bool record(const Op& op, uint64_t ptr, Val* dst) { return fields(op, ptr, compound(op.val_kind, 0, op.count, dst)); }
  // The fields of record `op` at `ptr`, built as the items of `out`. Fields
  // of bools and integers are built here from the child table alone.
  bool fields(const Op& op, uint64_t ptr, Val* out) {
    const Child* c = &p_.children[op.children];
    const uint8_t* m = cx_.base() + ptr;
    bool droppable = true;
    for (uint32_t i = 0; i < op.count; ++i) {
      uint64_t bits;
      if (integer_bits(c[i].code, m + c[i].offset, bits)) {
        new (out->next_item()) Val(Val::from_bits(c[i].val_kind, bits));
        out->item_added();
      } else {
        droppable &= member(out, c[i].op, ptr + c[i].offset);
      }
    }
    if (droppable) out->mark_droppable();
    return droppable;
  }

  // A bool or integer stored at `m`, as Val bits; false for other codes.
  static bool integer_bits(OpCode code, const uint8_t* m, uint64_t& bits) {
    switch (code) {
      case OpCode::Bool: bits = m[0] != 0; return true;
      case OpCode::U8: bits = m[0]; return true;
      case OpCode::S8: bits = sext(read<int8_t>(m)); return true;
      case OpCode::U16: bits = read<uint16_t>(m); return true;
      case OpCode::S16: bits = sext(read<int16_t>(m)); return true;
      case OpCode::U32: bits = read<uint32_t>(m); return true;
      case OpCode::S32: bits = sext(read<int32_t>(m)); return true;
      case OpCode::U64:
      case OpCode::S64: bits = read<uint64_t>(m); return true;
      default: return false;
    }
  }

  bool variant(const Op& op, uint64_t ptr, Val* dst) {
    const uint8_t* m = cx_.base() + ptr;
    uint32_t disc;
    switch (op.discriminant_size) {
      case 1: disc = m[0]; break;
      case 2: disc = read<uint16_t>(m); break;
      default: disc = read<uint32_t>(m); break;
    }
    const uint32_t payload_op = case_op(op, disc);
    if (payload_op == kNoOp) {
      compound(op.val_kind, disc, 0, dst);
      return true;
    }
    const Op& payload = p_.ops[payload_op];
    bool droppable;
    if (payload.code == OpCode::Record && payload.count) {
      // The case's slot and its record's fields in one block: one
      // allocation, and the walk reads them together.
      charge((1 + uint64_t{payload.count}) * sizeof(Val));
      Val* items = arena().allocate_items(1 + size_t{payload.count});
      Val* out = new (dst) Val(Val::compound_over(arena(), op.val_kind, disc, items, 1));
      Val* record = new (out->next_item()) Val(Val::compound_over(arena(), payload.val_kind, 0, items + 1, payload.count));
      out->item_added();
      droppable = fields(payload, ptr + op.payload_offset, record);
    } else {
      droppable = member(compound(op.val_kind, disc, 1, dst), payload_op, ptr + op.payload_offset);
    }
    if (droppable) dst->mark_droppable();
    return droppable;
  }

  // Adds the value of op `oi` stored at `ptr` to `out` as its next item;
  // returns whether it is arena_droppable. The usual members (integers,
  // strings, small number lists, records, variants) are built after a
  // single dispatch.
  bool member(Val* out, uint32_t oi, uint64_t ptr) {
    const Op& op = p_.ops[oi];
    const uint8_t* m = cx_.base() + ptr;
    Val* slot = out->next_item();
    switch (op.code) {
      case OpCode::String:
        string(op, read<Addr>(m), read<Addr>(m + kPtr), slot);
        out->item_added();
        return slot->arena_droppable();
      case OpCode::List:
        if (!op.bulk) break;
        list(op, read<Addr>(m), read<Addr>(m + kPtr), slot);
        out->item_added();
        return slot->arena_droppable();
      case OpCode::Record:
        new (slot) Val();
        out->item_added();
        return record(op, ptr, slot);
      case OpCode::Variant:
        new (slot) Val();
        out->item_added();
        return variant(op, ptr, slot);
      default:
        if (uint64_t bits; integer_bits(op.code, m, bits)) {
          new (slot) Val(Val::from_bits(op.val_kind, bits));
          out->item_added();
          return true;
        }
        break;
    }
    return item(out, op, [&](Val* s) { load(oi, ptr, s); });
  }

  // The tree's arena, created by the first value that needs it.
  ValArena& arena() {
    if (!arena_) arena_ = ValArena::create();
    return *arena_;
  }
  // A compound value over the empty Val at `dst`, its items in the arena.
  Val* compound(ValKind kind, uint32_t case_index, uint64_t capacity, Val* dst) {
    if (capacity > UINT32_MAX) throw std::length_error("too many items in one value");
    if (capacity == 0) return new (dst) Val(Val::empty_compound(kind, case_index));
    charge(capacity * sizeof(Val));
    return new (dst) Val(Val::compound_in(arena(), kind, case_index, capacity));
  }
  // Adds an item of op's type to `out`, built by fill(slot); returns whether
  // it is arena_droppable. A compound is counted as an empty value before
  // its items are built, so a trap among them leaves it to be dropped; any
  // other value is built whole or not at all.
  template <class Fill>
  static bool item(Val* out, const Op& op, Fill&& fill) {
    Val* slot = out->next_item();
    switch (op.code) {
      case OpCode::List:
      case OpCode::FixedList:
      case OpCode::Record:
      case OpCode::Variant:
        new (slot) Val();
        out->item_added();
        fill(slot);
        break;
      default:
        fill(slot);
        out->item_added();
        break;
    }
    return slot->arena_droppable();
  }
  static uint64_t addr(uint64_t core) { return static_cast<Addr>(core); }

  Val f32(uint32_t bits) {
    if (canon_nan_ && is_nan32(bits)) bits = kCanonicalNan32;
    return Val::from_bits(ValKind::F32, bits);
  }
  Val f64(uint64_t bits) {
    if (canon_nan_ && is_nan64(bits)) bits = kCanonicalNan64;
    return Val::from_bits(ValKind::F64, bits);
  }

  Val char_(const Op& op, uint32_t c) {
    if (c >= 0x110000)
      trap_in(*op.type, "char code point " + std::to_string(c) + " is above 0x10FFFF");
    if (c >= 0xD800 && c <= 0xDFFF)
      trap_in(*op.type, "char code point " + std::to_string(c) + " is a surrogate");
    return Val::from_bits(ValKind::Char, c);
  }

  Val handle(const Op& op, uint32_t index) {
    if (HandleHooks* h = cx_.hooks()) index = h->lift_handle(*op.type, index);
    return Val::from_bits(op.val_kind, index);
  }

  uint32_t case_op(const Op& op, uint32_t disc) {
    if (disc >= op.count)
      trap_in(*op.type, "invalid discriminant " + std::to_string(disc) + " (" +
                            std::to_string(op.count) + " cases)");
    return p_.children[op.children + disc].op;
  }

  void string(const Op& op, uint64_t ptr, uint64_t tagged, Val* dst) {
    // Short ASCII text in UTF-8, the usual id or label, needs no more checks.
    if (utf8_ && tagged <= kShortText && ptr <= cx_.size() && tagged <= cx_.size() - ptr &&
        is_ascii(cx_.base() + ptr, tagged)) {
      new (dst) Val(text({reinterpret_cast<const char*>(cx_.base() + ptr), tagged}));
      return;
    }
    const StringSource s = read_string(cx_, ptr, tagged, *op.type);
    switch (s.form) {
      case TextForm::Utf8:
        new (dst) Val(text({reinterpret_cast<const char*>(s.data), s.code_units}));
        return;
      case TextForm::Utf16: utf16le_to_utf8(s.data, s.code_units, transcoded_); break;
      case TextForm::Latin1: latin1_to_utf8(s.data, s.code_units, transcoded_); break;
    }
    new (dst) Val(text(transcoded_));
  }
  // Number lists and strings go into the tree's arena when they are small
  // enough to share its chunks; big blocks get their own allocation, so a
  // value moved out of the tree does not keep a huge chunk alive.
  static constexpr size_t kArenaBlockMax = 4096;
  Val packed(ValKind element, uint64_t count, size_t bytes, uint8_t** data) {
    charge(bytes);
    if (bytes > Val::kMaxInlinePacked && bytes <= kArenaBlockMax) {
      return Val::packed_in(arena(), element, count, data);
    }
    return Val::packed_uninitialized(element, count, data);
  }
  // Well-formed UTF-8 text: inline when short, in the tree's arena up to
  // kArenaBlockMax bytes, on the heap beyond.
  Val text(std::string_view utf8) {
    if (utf8.size() <= Val::kMaxInlineText) return Val::string_unchecked(utf8);
    charge(utf8.size());
    if (utf8.size() > kArenaBlockMax) return Val::string_unchecked(utf8);
    return Val::string_in(arena(), utf8);
  }
  // Counts host bytes against the context's lift limit.
  void charge(uint64_t bytes) {
    if (bytes > budget_) [[unlikely]]
      cx_.lift_limit_reached(bytes);
    budget_ -= bytes;
  }

  void list(const Op& op, uint64_t ptr, uint64_t length, Val* dst) {
    cx_.require_memory("lists");
    const Op& e = p_.ops[op.elem];
    if (length > kMaxListByteLength || length * e.size > kMaxListByteLength)
      trap_in(*op.type, "list of " + std::to_string(length) + " elements of " +
                            std::to_string(e.size) + " bytes is longer than 2^28-1 bytes");
    check_range(cx_, ptr, length * e.size, e.align, "list", *op.type);
    elements(op, ptr, length, dst);
  }

  void elements(const Op& op, uint64_t ptr, uint64_t length, Val* dst) {
    const Op& e = p_.ops[op.elem];
    if (op.bulk) {
      const size_t bytes = length * e.size;
      if (bytes <= Val::kMaxInlinePacked) {  // paths, small id lists
        const uint8_t* source = cx_.base() + ptr;
        uint8_t canonical[Val::kMaxInlinePacked];
        if (canon_nan_ && (op.bulk_kind == ValKind::F32 || op.bulk_kind == ValKind::F64)) {
          copy_short(canonical, source, bytes);
          canonicalize_floats(op.bulk_kind, canonical, length);
          source = canonical;
        }
        new (dst) Val(Val::packed_inline(op.bulk_kind, source, bytes));
        return;
      }
      uint8_t* bytes_out = nullptr;
      new (dst) Val(packed(op.bulk_kind, length, bytes, &bytes_out));
      if (bytes) std::memcpy(bytes_out, cx_.base() + ptr, bytes);
      if (canon_nan_) canonicalize_floats(op.bulk_kind, bytes_out, length);
      return;
    }
    Val* out = compound(op.val_kind, 0, length, dst);
    bool droppable = true;
    // Each element is counted as an empty value before it is built: see item().
    const auto compounds = [&](auto build) {
      for (uint64_t i = 0; i < length; ++i) {
        Val* slot = new (out->next_item()) Val();
        out->item_added();
        droppable &= build(ptr + i * e.size, slot);
      }
    };
    if (e.code == OpCode::Variant) {
      compounds([&](uint64_t p, Val* slot) { return variant(e, p, slot); });
    } else if (e.code == OpCode::Record) {
      compounds([&](uint64_t p, Val* slot) { return record(e, p, slot); });
    } else {
      for (uint64_t i = 0; i < length; ++i)
        droppable &= item(out, e, [&](Val* slot) { load(op.elem, ptr + i * e.size, slot); });
    }
    if (droppable) out->mark_droppable();
  }

  static constexpr uint64_t kShortText = 64;
  static bool is_ascii(const uint8_t* s, uint64_t n) {
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8)
      if (read<uint64_t>(s + i) & 0x8080808080808080ull) return false;
    for (; i < n; ++i)
      if (s[i] & 0x80) return false;
    return true;
  }

  AbiContext& cx_;
  const Program& p_;
  const bool canon_nan_;
  const bool utf8_ = cx_.options().encoding == StringEncoding::Utf8 && cx_.base() != nullptr;
  uint64_t budget_;  // host bytes the lift may still allocate
  ValArena* arena_ = nullptr;  // created by the first compound with items; one reference
  std::string transcoded_;  // scratch for UTF-16 and Latin-1 text, reused per string
};

}  // namespace

void canonicalize_floats(ValKind kind, uint8_t* p, uint64_t n) {
  if (kind == ValKind::F32) {
    for (uint64_t i = 0; i < n; ++i)
      if (is_nan32(read<uint32_t>(p + 4 * i))) write(p + 4 * i, kCanonicalNan32);
  } else if (kind == ValKind::F64) {
    for (uint64_t i = 0; i < n; ++i)
      if (is_nan64(read<uint64_t>(p + 8 * i))) write(p + 8 * i, kCanonicalNan64);
  }
}

namespace {
// The root holds the tree's arena; the lifter's own reference goes with it.
template <AddrWidth W, class Build>
Val lift_root(AbiContext& cx, const Program& p, Build&& build) {
  Lifter<W> lifter(cx, p);
  Val root;
  build(lifter, &root);
  root.hold_arena();
  return root;
}
}  // namespace

Val load(AbiContext& cx, const Program& p, uint32_t op, uint64_t ptr) {
  auto build = [&](auto& lifter, Val* root) { lifter.load(op, ptr, root); };
  if (p.width == AddrWidth::I32) return lift_root<AddrWidth::I32>(cx, p, build);
  return lift_root<AddrWidth::I64>(cx, p, build);
}

Val lift_flat(AbiContext& cx, const Program& p, uint32_t op, const uint64_t* in) {
  auto build = [&](auto& lifter, Val* root) { lifter.lift_flat(op, in, root); };
  if (p.width == AddrWidth::I32) return lift_root<AddrWidth::I32>(cx, p, build);
  return lift_root<AddrWidth::I64>(cx, p, build);
}

}  // namespace cmhost::abi::detail
