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

template <AddrWidth W>
class Lifter {
  using Addr = std::conditional_t<W == AddrWidth::I32, uint32_t, uint64_t>;
  static constexpr uint32_t kPtr = sizeof(Addr);

 public:
  Lifter(AbiContext& cx, const Program& p)
      : cx_(cx), p_(p), canon_nan_(cx.options().canonicalize_nan) {}

  Val load(uint32_t oi, uint64_t ptr) {
    const Op& op = p_.ops[oi];
    const uint8_t* m = cx_.base() + ptr;
    switch (op.code) {
      case OpCode::Bool: return Val::from_bits(ValKind::Bool, m[0] != 0);
      case OpCode::S8: return Val::from_bits(ValKind::S8, sext(read<int8_t>(m)));
      case OpCode::U8: return Val::from_bits(ValKind::U8, m[0]);
      case OpCode::S16: return Val::from_bits(ValKind::S16, sext(read<int16_t>(m)));
      case OpCode::U16: return Val::from_bits(ValKind::U16, read<uint16_t>(m));
      case OpCode::S32: return Val::from_bits(ValKind::S32, sext(read<int32_t>(m)));
      case OpCode::U32: return Val::from_bits(ValKind::U32, read<uint32_t>(m));
      case OpCode::S64: return Val::from_bits(ValKind::S64, read<uint64_t>(m));
      case OpCode::U64: return Val::from_bits(ValKind::U64, read<uint64_t>(m));
      case OpCode::F32: return f32(read<uint32_t>(m));
      case OpCode::F64: return f64(read<uint64_t>(m));
      case OpCode::Char: return char_(op, read<uint32_t>(m));
      case OpCode::String: return string(op, read<Addr>(m), read<Addr>(m + kPtr));
      case OpCode::List: return list(op, read<Addr>(m), read<Addr>(m + kPtr));
      case OpCode::FixedList: return elements(op, ptr, op.count);
      case OpCode::Record: {
        Val out = Val::compound_with_capacity(op.val_kind, 0, op.count);
        const Child* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i)
          out.emplace_item([&] { return load(c[i].op, ptr + c[i].offset); });
        return out;
      }
      case OpCode::Variant: {
        uint32_t disc;
        switch (op.discriminant_size) {
          case 1: disc = m[0]; break;
          case 2: disc = read<uint16_t>(m); break;
          default: disc = read<uint32_t>(m); break;
        }
        const uint32_t payload_op = case_op(op, disc);
        if (payload_op == kNoOp) return Val::compound_with_capacity(op.val_kind, disc, 0);
        Val out = Val::compound_with_capacity(op.val_kind, disc, 1);
        out.emplace_item([&] { return load(payload_op, ptr + op.payload_offset); });
        return out;
      }
      case OpCode::Flags: {
        uint32_t bits;
        switch (op.size) {
          case 1: bits = m[0]; break;
          case 2: bits = read<uint16_t>(m); break;
          default: bits = read<uint32_t>(m); break;
        }
        return Val::from_bits(ValKind::Flags, bits & op.flags_mask);
      }
      case OpCode::Handle: return handle(op, read<uint32_t>(m));
    }
    return {};
  }

  Val lift_flat(uint32_t oi, const uint64_t* in) {
    const Op& op = p_.ops[oi];
    // Slots joined by a variant may be wider than this value's own core type:
    // 32-bit values are the low half (the spec's wrap_i64_to_i32).
    const auto lo = static_cast<uint32_t>(in[0]);
    switch (op.code) {
      case OpCode::Bool: return Val::from_bits(ValKind::Bool, lo != 0);
      case OpCode::S8: return Val::from_bits(ValKind::S8, sext(static_cast<int8_t>(lo)));
      case OpCode::U8: return Val::from_bits(ValKind::U8, static_cast<uint8_t>(lo));
      case OpCode::S16: return Val::from_bits(ValKind::S16, sext(static_cast<int16_t>(lo)));
      case OpCode::U16: return Val::from_bits(ValKind::U16, static_cast<uint16_t>(lo));
      case OpCode::S32: return Val::from_bits(ValKind::S32, sext(static_cast<int32_t>(lo)));
      case OpCode::U32: return Val::from_bits(ValKind::U32, lo);
      case OpCode::S64: return Val::from_bits(ValKind::S64, in[0]);
      case OpCode::U64: return Val::from_bits(ValKind::U64, in[0]);
      case OpCode::F32: return f32(lo);
      case OpCode::F64: return f64(in[0]);
      case OpCode::Char: return char_(op, lo);
      case OpCode::String: return string(op, addr(in[0]), addr(in[1]));
      case OpCode::List: return list(op, addr(in[0]), addr(in[1]));
      case OpCode::FixedList: {
        const uint32_t step = p_.ops[op.elem].flat_count;
        Val out = Val::compound_with_capacity(op.val_kind, 0, op.count);
        for (uint32_t i = 0; i < op.count; ++i)
          out.emplace_item([&] { return lift_flat(op.elem, in + i * step); });
        return out;
      }
      case OpCode::Record: {
        Val out = Val::compound_with_capacity(op.val_kind, 0, op.count);
        const Child* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i) {
          out.emplace_item([&] { return lift_flat(c[i].op, in); });
          in += p_.ops[c[i].op].flat_count;
        }
        return out;
      }
      case OpCode::Variant: {
        const uint32_t payload_op = case_op(op, lo);
        if (payload_op == kNoOp) return Val::compound_with_capacity(op.val_kind, lo, 0);
        Val out = Val::compound_with_capacity(op.val_kind, lo, 1);
        out.emplace_item([&] { return lift_flat(payload_op, in + 1); });
        return out;
      }
      case OpCode::Flags: return Val::from_bits(ValKind::Flags, lo & op.flags_mask);
      case OpCode::Handle: return handle(op, lo);
    }
    return {};
  }

 private:
  static uint64_t sext(int64_t v) { return static_cast<uint64_t>(v); }
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

  Val string(const Op& op, uint64_t ptr, uint64_t tagged) {
    const StringSource s = read_string(cx_, ptr, tagged, *op.type);
    switch (s.form) {
      case TextForm::Utf8:
        return Val::string_unchecked({reinterpret_cast<const char*>(s.data), s.code_units});
      case TextForm::Utf16: utf16le_to_utf8(s.data, s.code_units, transcoded_); break;
      case TextForm::Latin1: latin1_to_utf8(s.data, s.code_units, transcoded_); break;
    }
    return Val::string_unchecked(transcoded_);
  }

  Val list(const Op& op, uint64_t ptr, uint64_t length) {
    cx_.require_memory("lists");
    const Op& e = p_.ops[op.elem];
    if (length > kMaxListByteLength / e.size)
      trap_in(*op.type, "list of " + std::to_string(length) + " elements of " +
                            std::to_string(e.size) + " bytes is longer than 2^28-1 bytes");
    check_range(cx_, ptr, length * e.size, e.align, "list", *op.type);
    return elements(op, ptr, length);
  }

  Val elements(const Op& op, uint64_t ptr, uint64_t length) {
    const Op& e = p_.ops[op.elem];
    if (op.bulk) {
      uint8_t* dst = nullptr;
      Val out = Val::packed_uninitialized(op.bulk_kind, length, &dst);
      const size_t bytes = length * e.size;
      if (bytes) std::memcpy(dst, cx_.base() + ptr, bytes);
      if (canon_nan_) canonicalize_floats(op.bulk_kind, dst, length);
      return out;
    }
    Val out = Val::compound_with_capacity(op.val_kind, 0, length);
    for (uint64_t i = 0; i < length; ++i) out.emplace_item([&] { return load(op.elem, ptr + i * e.size); });
    return out;
  }

  AbiContext& cx_;
  const Program& p_;
  const bool canon_nan_;
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

Val load(AbiContext& cx, const Program& p, uint32_t op, uint64_t ptr) {
  if (p.width == AddrWidth::I32) return Lifter<AddrWidth::I32>(cx, p).load(op, ptr);
  return Lifter<AddrWidth::I64>(cx, p).load(op, ptr);
}

Val lift_flat(AbiContext& cx, const Program& p, uint32_t op, const uint64_t* in) {
  if (p.width == AddrWidth::I32) return Lifter<AddrWidth::I32>(cx, p).lift_flat(op, in);
  return Lifter<AddrWidth::I64>(cx, p).lift_flat(op, in);
}

}  // namespace cmhost::abi::detail
