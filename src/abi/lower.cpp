// Lowering: Val to linear memory and core values, driven by a compiled Program.
// Any realloc may move memory, so every write goes through cx.base() afresh.
#include <type_traits>

#include "cmhost/error.hpp"
#include "program.hpp"
#include "string_store.hpp"
#include "text.hpp"

namespace cmhost::abi::detail {
namespace {

// The spec asserts allocation sizes fit realloc's i32 parameters.
constexpr uint64_t kReallocMax = 0xFFFFFFFFull;

[[noreturn]] void invalid(const Op& op, const std::string& why) {
  throw_invalid_value(why + " (lowering " + op.type->to_wit() + ")");
}

template <AddrWidth W>
class Lowerer {
  using Addr = std::conditional_t<W == AddrWidth::I32, uint32_t, uint64_t>;
  static constexpr uint32_t kPtr = sizeof(Addr);

  struct Range {
    uint64_t ptr;
    uint64_t length;
  };

 public:
  Lowerer(AbiContext& cx, const Program& p)
      : cx_(cx), p_(p), canon_nan_(cx.options().canonicalize_nan) {}

  void store(uint32_t oi, const Val& v, uint64_t ptr) {
    const Op& op = p_.ops[oi];
    check_kind(op, v);
    switch (op.code) {
      case OpCode::Bool: put<uint8_t>(ptr, v.scalar_bits() != 0); return;
      case OpCode::S8:
      case OpCode::U8: put<uint8_t>(ptr, static_cast<uint8_t>(v.scalar_bits())); return;
      case OpCode::S16:
      case OpCode::U16: put<uint16_t>(ptr, static_cast<uint16_t>(v.scalar_bits())); return;
      case OpCode::S32:
      case OpCode::U32: put<uint32_t>(ptr, static_cast<uint32_t>(v.scalar_bits())); return;
      case OpCode::S64:
      case OpCode::U64: put<uint64_t>(ptr, v.scalar_bits()); return;
      case OpCode::F32: put<uint32_t>(ptr, f32(v)); return;
      case OpCode::F64: put<uint64_t>(ptr, f64(v)); return;
      case OpCode::Char: put<uint32_t>(ptr, char_(op, v)); return;
      case OpCode::String: {
        const Range r = string(op, v.as_string());
        put<Addr>(ptr, static_cast<Addr>(r.ptr));
        put<Addr>(ptr + kPtr, static_cast<Addr>(r.length));
        return;
      }
      case OpCode::List: {
        const Range r = list(op, v);
        put<Addr>(ptr, static_cast<Addr>(r.ptr));
        put<Addr>(ptr + kPtr, static_cast<Addr>(r.length));
        return;
      }
      case OpCode::FixedList:
        if (v.list_size() != op.count)
          invalid(op, "fixed-length list needs " + std::to_string(op.count) + " elements, got " +
                          std::to_string(v.list_size()));
        elements(op, v, ptr);
        return;
      case OpCode::Record: {
        const auto items = fields(op, v);
        const Child* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i) store(c[i].op, items[i], ptr + c[i].offset);
        return;
      }
      case OpCode::Variant: {
        const uint32_t disc = v.case_index();
        const uint32_t payload_op = case_op(op, v);
        switch (op.discriminant_size) {
          case 1: put<uint8_t>(ptr, static_cast<uint8_t>(disc)); break;
          case 2: put<uint16_t>(ptr, static_cast<uint16_t>(disc)); break;
          default: put<uint32_t>(ptr, disc); break;
        }
        if (payload_op != kNoOp) store(payload_op, *v.payload(), ptr + op.payload_offset);
        return;
      }
      case OpCode::Flags: {
        const uint32_t bits = flags(op, v);
        switch (op.size) {
          case 1: put<uint8_t>(ptr, static_cast<uint8_t>(bits)); break;
          case 2: put<uint16_t>(ptr, static_cast<uint16_t>(bits)); break;
          default: put<uint32_t>(ptr, bits); break;
        }
        return;
      }
      case OpCode::Handle: put<uint32_t>(ptr, handle(op, v)); return;
    }
  }

  // Writes op.flat_count core values at out.
  void lower_flat(uint32_t oi, const Val& v, uint64_t* out) {
    const Op& op = p_.ops[oi];
    check_kind(op, v);
    switch (op.code) {
      case OpCode::Bool: out[0] = v.scalar_bits() != 0; return;
      case OpCode::U8:
      case OpCode::U16:
      case OpCode::U32:
      case OpCode::S64:
      case OpCode::U64: out[0] = v.scalar_bits(); return;
      case OpCode::S8:
      case OpCode::S16:
      case OpCode::S32: out[0] = static_cast<uint32_t>(v.scalar_bits()); return;
      case OpCode::F32: out[0] = f32(v); return;
      case OpCode::F64: out[0] = f64(v); return;
      case OpCode::Char: out[0] = char_(op, v); return;
      case OpCode::String: {
        const Range r = string(op, v.as_string());
        out[0] = r.ptr;
        out[1] = r.length;
        return;
      }
      case OpCode::List: {
        const Range r = list(op, v);
        out[0] = r.ptr;
        out[1] = r.length;
        return;
      }
      case OpCode::FixedList: {
        if (v.list_size() != op.count)
          invalid(op, "fixed-length list needs " + std::to_string(op.count) + " elements, got " +
                          std::to_string(v.list_size()));
        const uint32_t step = p_.ops[op.elem].flat_count;
        if (v.is_packed()) {
          for (uint32_t i = 0; i < op.count; ++i) lower_flat(op.elem, v.list_element(i), out + i * step);
        } else {
          const auto items = v.items();
          for (uint32_t i = 0; i < op.count; ++i) lower_flat(op.elem, items[i], out + i * step);
        }
        return;
      }
      case OpCode::Record: {
        const auto items = fields(op, v);
        const Child* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i) {
          lower_flat(c[i].op, items[i], out);
          out += p_.ops[c[i].op].flat_count;
        }
        return;
      }
      case OpCode::Variant: {
        const uint32_t payload_op = case_op(op, v);
        // Slots the case does not use are zero; joined slots hold the
        // payload's bits zero-extended, which is the representation already.
        std::fill(out, out + op.flat_count, uint64_t{0});
        out[0] = v.case_index();
        if (payload_op != kNoOp) lower_flat(payload_op, *v.payload(), out + 1);
        return;
      }
      case OpCode::Flags: out[0] = flags(op, v); return;
      case OpCode::Handle: out[0] = handle(op, v); return;
    }
  }

 private:
  template <typename T>
  void put(uint64_t ptr, T value) {
    write(cx_.base() + ptr, value);
  }

  static void check_kind(const Op& op, const Val& v) {
    if (v.kind() != op.val_kind)
      invalid(op, std::string("expected a ") + to_string(op.val_kind) + " value, got " +
                      to_string(v.kind()));
  }

  uint32_t f32(const Val& v) const {
    auto bits = static_cast<uint32_t>(v.scalar_bits());
    if (canon_nan_ && is_nan32(bits)) bits = kCanonicalNan32;
    return bits;
  }
  uint64_t f64(const Val& v) const {
    uint64_t bits = v.scalar_bits();
    if (canon_nan_ && is_nan64(bits)) bits = kCanonicalNan64;
    return bits;
  }

  static uint32_t char_(const Op& op, const Val& v) {
    const uint64_t c = v.scalar_bits();
    if (c > 0x10FFFF || !is_unicode_scalar(static_cast<uint32_t>(c)))
      invalid(op, "char " + std::to_string(c) + " is not a Unicode scalar value");
    return static_cast<uint32_t>(c);
  }

  static uint32_t flags(const Op& op, const Val& v) {
    const auto bits = static_cast<uint32_t>(v.scalar_bits());
    if (bits & ~op.flags_mask) invalid(op, "flags value sets bits beyond its labels");
    return bits;
  }

  uint32_t handle(const Op& op, const Val& v) {
    auto index = static_cast<uint32_t>(v.scalar_bits());
    if (HandleHooks* h = cx_.hooks()) index = h->lower_handle(*op.type, index);
    return index;
  }

  std::span<const Val> fields(const Op& op, const Val& v) {
    const auto items = v.items();
    if (items.size() != op.count)
      invalid(op, "expected " + std::to_string(op.count) + " fields, got " +
                      std::to_string(items.size()));
    return items;
  }

  uint32_t case_op(const Op& op, const Val& v) {
    const uint32_t disc = v.case_index();
    if (disc >= op.count)
      invalid(op, "case " + std::to_string(disc) + " out of range (" + std::to_string(op.count) +
                      " cases)");
    const uint32_t payload_op = p_.children[op.children + disc].op;
    if ((payload_op != kNoOp) != (v.payload() != nullptr))
      invalid(op, payload_op != kNoOp ? "case " + std::to_string(disc) + " needs a payload"
                                      : "case " + std::to_string(disc) + " has no payload");
    return payload_op;
  }

  uint64_t allocate(const Op& op, uint64_t old_ptr, uint64_t old_size, uint32_t align,
                    uint64_t new_size, const char* what) {
    const uint64_t ptr = cx_.realloc(old_ptr, old_size, align, new_size);
    check_range(cx_, ptr, new_size, align, what, *op.type);
    return ptr;
  }

  Range list(const Op& op, const Val& v) {
    cx_.require_memory("lists");
    const uint64_t n = v.list_size();
    const Op& e = p_.ops[op.elem];
    if (n > kReallocMax / e.size)
      invalid(op, "list of " + std::to_string(n) + " elements is too long to lower");
    const uint64_t ptr = allocate(op, 0, 0, e.align, n * e.size, "list");
    elements(op, v, ptr);
    return {ptr, n};
  }

  void elements(const Op& op, const Val& v, uint64_t ptr) {
    const Op& e = p_.ops[op.elem];
    if (v.is_packed()) {
      if (!op.bulk || v.packed_element_kind() != op.bulk_kind)
        invalid(op, std::string("packed list of ") + to_string(v.packed_element_kind()) +
                        " does not match the element type");
      const auto bytes = v.packed_bytes();
      uint8_t* dst = cx_.base() + ptr;
      if (!bytes.empty()) std::memcpy(dst, bytes.data(), bytes.size());
      if (canon_nan_) canonicalize_floats(op.bulk_kind, dst, v.list_size());
      return;
    }
    const auto items = v.items();
    if (v.kind() == ValKind::List || v.kind() == ValKind::Map) {
      for (size_t i = 0; i < items.size(); ++i) store(op.elem, items[i], ptr + i * e.size);
    }
  }

  Range string(const Op& op, std::string_view s) {
    cx_.require_memory("strings");
    const uint64_t n8 = s.size();
    // The spec asserts worst-case sizes fit realloc's i32 parameters.
    const uint64_t worst_factor = cx_.options().encoding == StringEncoding::Utf8 ? 1 : 2;
    if (worst_factor * n8 > kReallocMax) invalid(op, "string is too long to lower");
    const StringSource src{reinterpret_cast<const uint8_t*>(s.data()), n8, TextForm::Utf8, false};
    const StoredString r = store_string(cx_, src, *op.type);
    return {r.ptr, r.tagged_code_units};
  }

  AbiContext& cx_;
  const Program& p_;
  const bool canon_nan_;
};

}  // namespace

void store(AbiContext& cx, const Program& p, uint32_t op, const Val& v, uint64_t ptr) {
  if (p.width == AddrWidth::I32) return Lowerer<AddrWidth::I32>(cx, p).store(op, v, ptr);
  Lowerer<AddrWidth::I64>(cx, p).store(op, v, ptr);
}

void lower_flat(AbiContext& cx, const Program& p, uint32_t op, const Val& v, uint64_t* out) {
  if (p.width == AddrWidth::I32) return Lowerer<AddrWidth::I32>(cx, p).lower_flat(op, v, out);
  Lowerer<AddrWidth::I64>(cx, p).lower_flat(op, v, out);
}

}  // namespace cmhost::abi::detail
