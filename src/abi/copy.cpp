// Cross-component copies: one compiled program per pair of types walks the
// source and writes the destination directly. Only the destination calls
// realloc, so the source memory stays put during a copy; the destination's
// base is re-read after every allocation.
#include "cmhost/abi/copy.hpp"

#include <map>
#include <type_traits>

#include "cmhost/error.hpp"
#include "program.hpp"
#include "string_store.hpp"

namespace cmhost::abi {
namespace detail {

struct CopySide {
  uint32_t size;
  uint32_t align;
  uint32_t payload_offset;  // Variant
};

struct CopyOp {
  OpCode code;
  uint8_t discriminant_size;  // Variant (the same in both widths)
  bool bulk;                  // List/FixedList of numbers: one block copy
  ValKind bulk_kind;
  uint32_t flat_count;        // the same in both widths
  uint32_t elem;              // List/FixedList
  uint32_t count;             // FixedList length, Record fields, Variant cases
  uint32_t children;          // Record/Variant: first entry in CopyProgram::children
  uint32_t flags_mask;
  CopySide from, to;
  const Type* from_type;      // for handle identities and messages
  const Type* to_type;
};

struct CopyChild {
  uint32_t op;  // kNoOp for a case without payload
  uint32_t from_offset;
  uint32_t to_offset;
};

struct CopyProgram {
  TypeRef from_root, to_root;  // keep every Type* in ops alive
  AddrWidth from_width, to_width;
  std::vector<CopyOp> ops;
  std::vector<CopyChild> children;
  uint32_t root = 0;
};

namespace {

class CopyCompiler {
 public:
  explicit CopyCompiler(CopyProgram& p) : p_(p) {}

  uint32_t compile(const TypeRef& from, const TypeRef& to) {
    if (auto it = memo_.find({from.get(), to.get()}); it != memo_.end()) return it->second;
    if (from->kind() != to->kind() || from->fields().size() != to->fields().size() ||
        from->cases().size() != to->cases().size() || from->labels().size() != to->labels().size() ||
        from->fixed_length() != to->fixed_length() || !from->element() != !to->element())
      throw Error(ErrorKind::Usage, "cannot copy " + from->to_wit() + " into " + to->to_wit() +
                                        ": the types differ");
    const Layout& fl = from->layout(p_.from_width);
    const Layout& tl = to->layout(p_.to_width);
    CopyOp op{};
    op.code = opcode_of(from->kind());
    op.flat_count = fl.flat_count;
    op.from = {fl.size, fl.align, fl.payload_offset};
    op.to = {tl.size, tl.align, tl.payload_offset};
    op.from_type = from.get();
    op.to_type = to.get();
    op.elem = kNoOp;
    switch (op.code) {
      case OpCode::Flags:
        op.count = static_cast<uint32_t>(from->labels().size());
        op.flags_mask = op.count >= 32 ? 0xFFFFFFFFu : ((1u << op.count) - 1);
        break;
      case OpCode::List:
      case OpCode::FixedList:
        op.count = from->fixed_length();
        op.bulk_kind = from->element()->kind();
        op.bulk = scalar_size(op.bulk_kind) != 0;
        op.elem = compile(from->element(), to->element());
        break;
      case OpCode::Record: {
        op.count = static_cast<uint32_t>(from->fields().size());
        std::vector<CopyChild> fields;
        for (uint32_t i = 0; i < op.count; ++i)
          fields.push_back({compile(from->fields()[i].type, to->fields()[i].type), fl.offsets[i], tl.offsets[i]});
        op.children = append(fields);
        break;
      }
      case OpCode::Variant: {
        op.count = static_cast<uint32_t>(from->cases().size());
        op.discriminant_size = fl.discriminant_size;
        std::vector<CopyChild> cases;
        for (uint32_t i = 0; i < op.count; ++i) {
          const TypeRef& f = from->cases()[i].type;
          const TypeRef& t = to->cases()[i].type;
          if (!f != !t)
            throw Error(ErrorKind::Usage, "cannot copy " + from->to_wit() + " into " + to->to_wit() +
                                              ": a case's payload differs");
          cases.push_back({f ? compile(f, t) : kNoOp, 0, 0});
        }
        op.children = append(cases);
        break;
      }
      default: break;
    }
    const auto index = static_cast<uint32_t>(p_.ops.size());
    p_.ops.push_back(op);
    memo_.emplace(std::pair{from.get(), to.get()}, index);
    return index;
  }

 private:
  uint32_t append(const std::vector<CopyChild>& children) {
    const auto at = static_cast<uint32_t>(p_.children.size());
    p_.children.insert(p_.children.end(), children.begin(), children.end());
    return at;
  }

  CopyProgram& p_;
  std::map<std::pair<const Type*, const Type*>, uint32_t> memo_;
};

template <AddrWidth W>
using AddrOf = std::conditional_t<W == AddrWidth::I32, uint32_t, uint64_t>;

template <AddrWidth FromW, AddrWidth ToW>
class Copier {
  using FromAddr = AddrOf<FromW>;
  using ToAddr = AddrOf<ToW>;
  static constexpr uint32_t kFromPtr = sizeof(FromAddr);
  static constexpr uint32_t kToPtr = sizeof(ToAddr);

  struct Range {
    uint64_t ptr;
    uint64_t length;
  };

 public:
  Copier(AbiContext& from, AbiContext& to, const CopyProgram& p)
      : from_(from),
        to_(to),
        p_(p),
        canon_nan_(from.options().canonicalize_nan || to.options().canonicalize_nan) {}

  void copy(uint32_t oi, uint64_t fp, uint64_t tp) {
    const CopyOp& op = p_.ops[oi];
    const uint8_t* s = from_.base() + fp;
    switch (op.code) {
      case OpCode::Bool: put<uint8_t>(tp, s[0] != 0); return;
      case OpCode::S8:
      case OpCode::U8: put<uint8_t>(tp, s[0]); return;
      case OpCode::S16:
      case OpCode::U16: put(tp, read<uint16_t>(s)); return;
      case OpCode::S32:
      case OpCode::U32: put(tp, read<uint32_t>(s)); return;
      case OpCode::S64:
      case OpCode::U64: put(tp, read<uint64_t>(s)); return;
      case OpCode::F32: put(tp, f32(read<uint32_t>(s))); return;
      case OpCode::F64: put(tp, f64(read<uint64_t>(s))); return;
      case OpCode::Char: put(tp, char_(op, read<uint32_t>(s))); return;
      case OpCode::String:
      case OpCode::List: {
        const Range r = op.code == OpCode::String ? string(op, read<FromAddr>(s), read<FromAddr>(s + kFromPtr))
                                                  : list(op, read<FromAddr>(s), read<FromAddr>(s + kFromPtr));
        put(tp, static_cast<ToAddr>(r.ptr));
        put(tp + kToPtr, static_cast<ToAddr>(r.length));
        return;
      }
      case OpCode::FixedList: elements(op, fp, tp, op.count); return;
      case OpCode::Record: {
        const CopyChild* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i) copy(c[i].op, fp + c[i].from_offset, tp + c[i].to_offset);
        return;
      }
      case OpCode::Variant: {
        uint32_t disc;
        switch (op.discriminant_size) {
          case 1: disc = s[0]; put<uint8_t>(tp, static_cast<uint8_t>(disc)); break;
          case 2: disc = read<uint16_t>(s); put<uint16_t>(tp, static_cast<uint16_t>(disc)); break;
          default: disc = read<uint32_t>(s); put<uint32_t>(tp, disc); break;
        }
        const uint32_t payload = case_op(op, disc);
        if (payload != kNoOp) copy(payload, fp + op.from.payload_offset, tp + op.to.payload_offset);
        return;
      }
      case OpCode::Flags:
        switch (op.from.size) {
          case 1: put<uint8_t>(tp, s[0] & op.flags_mask); break;
          case 2: put<uint16_t>(tp, read<uint16_t>(s) & op.flags_mask); break;
          default: put<uint32_t>(tp, read<uint32_t>(s) & op.flags_mask); break;
        }
        return;
      case OpCode::Handle: put(tp, handle(op, read<uint32_t>(s))); return;
    }
  }

  void copy_flat(uint32_t oi, const uint64_t* in, uint64_t* out) {
    const CopyOp& op = p_.ops[oi];
    // Slots joined by a variant may be wider than this value's own core
    // type: 32-bit values are the low half (the spec's wrap_i64_to_i32).
    const auto lo = static_cast<uint32_t>(in[0]);
    switch (op.code) {
      case OpCode::Bool: out[0] = lo != 0; return;
      case OpCode::S8: out[0] = static_cast<uint32_t>(int32_t{static_cast<int8_t>(lo)}); return;
      case OpCode::U8: out[0] = static_cast<uint8_t>(lo); return;
      case OpCode::S16: out[0] = static_cast<uint32_t>(int32_t{static_cast<int16_t>(lo)}); return;
      case OpCode::U16: out[0] = static_cast<uint16_t>(lo); return;
      case OpCode::S32:
      case OpCode::U32: out[0] = lo; return;
      case OpCode::S64:
      case OpCode::U64: out[0] = in[0]; return;
      case OpCode::F32: out[0] = f32(lo); return;
      case OpCode::F64: out[0] = f64(in[0]); return;
      case OpCode::Char: out[0] = char_(op, lo); return;
      case OpCode::String:
      case OpCode::List: {
        const auto ptr = static_cast<FromAddr>(in[0]), length = static_cast<FromAddr>(in[1]);
        const Range r = op.code == OpCode::String ? string(op, ptr, length) : list(op, ptr, length);
        out[0] = r.ptr;
        out[1] = r.length;
        return;
      }
      case OpCode::FixedList: {
        const uint32_t step = p_.ops[op.elem].flat_count;
        for (uint32_t i = 0; i < op.count; ++i) copy_flat(op.elem, in + i * step, out + i * step);
        return;
      }
      case OpCode::Record: {
        const CopyChild* c = &p_.children[op.children];
        for (uint32_t i = 0; i < op.count; ++i) {
          copy_flat(c[i].op, in, out);
          const uint32_t n = p_.ops[c[i].op].flat_count;
          in += n;
          out += n;
        }
        return;
      }
      case OpCode::Variant: {
        const uint32_t payload = case_op(op, lo);
        // Slots the case does not use are zero; joined slots hold the
        // payload's bits zero-extended.
        std::fill(out, out + op.flat_count, uint64_t{0});
        out[0] = lo;
        if (payload != kNoOp) copy_flat(payload, in + 1, out + 1);
        return;
      }
      case OpCode::Flags: out[0] = lo & op.flags_mask; return;
      case OpCode::Handle: out[0] = handle(op, lo); return;
    }
  }

 private:
  template <typename T>
  void put(uint64_t ptr, T value) {
    write(to_.base() + ptr, value);
  }

  uint32_t f32(uint32_t bits) const { return canon_nan_ && is_nan32(bits) ? kCanonicalNan32 : bits; }
  uint64_t f64(uint64_t bits) const { return canon_nan_ && is_nan64(bits) ? kCanonicalNan64 : bits; }

  static uint32_t char_(const CopyOp& op, uint32_t c) {
    if (c >= 0x110000)
      trap_in(*op.from_type, "char code point " + std::to_string(c) + " is above 0x10FFFF");
    if (c >= 0xD800 && c <= 0xDFFF)
      trap_in(*op.from_type, "char code point " + std::to_string(c) + " is a surrogate");
    return c;
  }

  uint32_t case_op(const CopyOp& op, uint32_t disc) const {
    if (disc >= op.count)
      trap_in(*op.from_type, "invalid discriminant " + std::to_string(disc) + " (" +
                                 std::to_string(op.count) + " cases)");
    return p_.children[op.children + disc].op;
  }

  uint32_t handle(const CopyOp& op, uint32_t index) {
    if (HandleHooks* h = from_.hooks()) index = h->lift_handle(*op.from_type, index);
    if (HandleHooks* h = to_.hooks()) index = h->lower_handle(*op.to_type, index);
    return index;
  }

  Range string(const CopyOp& op, uint64_t ptr, uint64_t tagged) {
    const StringSource src = read_string(from_, ptr, tagged, *op.from_type);
    const StoredString r = store_string(to_, src, *op.to_type);
    return {r.ptr, r.tagged_code_units};
  }

  Range list(const CopyOp& op, uint64_t ptr, uint64_t length) {
    from_.require_memory("lists");
    to_.require_memory("lists");
    const CopyOp& e = p_.ops[op.elem];
    if (length > kMaxListByteLength / e.from.size)
      trap_in(*op.from_type, "list of " + std::to_string(length) + " elements of " +
                                 std::to_string(e.from.size) + " bytes is longer than 2^28-1 bytes");
    check_range(from_, ptr, length * e.from.size, e.from.align, "list", *op.from_type);
    const uint64_t bytes = length * e.to.size;
    const uint64_t to_ptr = to_.realloc(0, 0, e.to.align, bytes);
    check_range(to_, to_ptr, bytes, e.to.align, "list", *op.to_type);
    elements(op, ptr, to_ptr, length);
    return {to_ptr, length};
  }

  void elements(const CopyOp& op, uint64_t fp, uint64_t tp, uint64_t length) {
    const CopyOp& e = p_.ops[op.elem];
    if (op.bulk) {
      const uint64_t bytes = length * e.from.size;
      uint8_t* dst = to_.base() + tp;
      if (bytes) std::memcpy(dst, from_.base() + fp, bytes);
      if (canon_nan_) canonicalize_floats(op.bulk_kind, dst, length);
      return;
    }
    for (uint64_t i = 0; i < length; ++i) copy(op.elem, fp + i * e.from.size, tp + i * e.to.size);
  }

  AbiContext& from_;
  AbiContext& to_;
  const CopyProgram& p_;
  const bool canon_nan_;
};

template <typename F>
void with_copier(AbiContext& from, AbiContext& to, const CopyProgram& p, F&& f) {
  const bool from32 = p.from_width == AddrWidth::I32, to32 = p.to_width == AddrWidth::I32;
  if (from32 && to32) {
    Copier<AddrWidth::I32, AddrWidth::I32> c(from, to, p);
    f(c);
  } else if (from32) {
    Copier<AddrWidth::I32, AddrWidth::I64> c(from, to, p);
    f(c);
  } else if (to32) {
    Copier<AddrWidth::I64, AddrWidth::I32> c(from, to, p);
    f(c);
  } else {
    Copier<AddrWidth::I64, AddrWidth::I64> c(from, to, p);
    f(c);
  }
}

void check_widths(const AbiContext& from, const AbiContext& to, const CopyProgram& p) {
  if (from.options().addr != p.from_width || to.options().addr != p.to_width)
    throw Error(ErrorKind::Usage, "copy program compiled for other address widths");
}

}  // namespace
}  // namespace detail

// ---- ValueCopy ------------------------------------------------------------------

ValueCopy::ValueCopy(TypeRef from, AddrWidth from_width, TypeRef to, AddrWidth to_width)
    : program_(std::make_unique<detail::CopyProgram>()) {
  if (!from || !to) throw Error(ErrorKind::Usage, "cannot compile a copy of a null type");
  program_->from_root = from;
  program_->to_root = to;
  program_->from_width = from_width;
  program_->to_width = to_width;
  detail::CopyCompiler c(*program_);
  program_->root = c.compile(from, to);
}
ValueCopy::~ValueCopy() = default;
ValueCopy::ValueCopy(ValueCopy&&) noexcept = default;
ValueCopy& ValueCopy::operator=(ValueCopy&&) noexcept = default;

uint32_t ValueCopy::flat_count() const { return program_->ops[program_->root].flat_count; }

void ValueCopy::copy_flat(AbiContext& from, const uint64_t* in, AbiContext& to, uint64_t* out) const {
  detail::check_widths(from, to, *program_);
  detail::with_copier(from, to, *program_, [&](auto& c) { c.copy_flat(program_->root, in, out); });
}

void ValueCopy::copy(AbiContext& from, uint64_t from_ptr, AbiContext& to, uint64_t to_ptr) const {
  detail::check_widths(from, to, *program_);
  from.require_memory("loads");
  to.require_memory("stores");
  const detail::CopyOp& op = program_->ops[program_->root];
  detail::check_range(from, from_ptr, op.from.size, op.from.align, "value", *op.from_type);
  detail::check_range(to, to_ptr, op.to.size, op.to.align, "value", *op.to_type);
  detail::with_copier(from, to, *program_, [&](auto& c) { c.copy(program_->root, from_ptr, to_ptr); });
}

uint64_t ValueCopy::copy_to_new(AbiContext& from, uint64_t from_ptr, AbiContext& to) const {
  detail::check_widths(from, to, *program_);
  from.require_memory("loads");
  const detail::CopyOp& op = program_->ops[program_->root];
  detail::check_range(from, from_ptr, op.from.size, op.from.align, "value", *op.from_type);
  const uint64_t to_ptr = to.realloc(0, 0, op.to.align, op.to.size);
  detail::check_range(to, to_ptr, op.to.size, op.to.align, "value", *op.to_type);
  detail::with_copier(from, to, *program_, [&](auto& c) { c.copy(program_->root, from_ptr, to_ptr); });
  return to_ptr;
}

// ---- CallCopy -------------------------------------------------------------------

namespace {

std::unique_ptr<ValueCopy> tuple_copy(std::span<const TypeRef> from, AddrWidth from_width,
                                      std::span<const TypeRef> to, AddrWidth to_width) {
  if (from.size() != to.size())
    throw Error(ErrorKind::Usage, "cannot copy " + std::to_string(from.size()) + " values into " +
                                      std::to_string(to.size()));
  if (from.empty()) return nullptr;
  return std::make_unique<ValueCopy>(Type::tuple({from.begin(), from.end()}), from_width,
                                     Type::tuple({to.begin(), to.end()}), to_width);
}

}  // namespace

CallCopy::CallCopy(const FunctionAbi& caller, const FunctionAbi& callee)
    : params_(tuple_copy(caller.params(), caller.options().addr, callee.params(), callee.options().addr)),
      results_(tuple_copy(callee.results(), callee.options().addr, caller.results(), caller.options().addr)),
      params_spilled_(caller.params_spilled(AbiSide::Lower)),
      results_spilled_(caller.results_spilled()),
      caller_param_slots_(params_spilled_ ? 1 : (params_ ? params_->flat_count() : 0)) {
  if (params_spilled_ != callee.params_spilled(AbiSide::Lift) || results_spilled_ != callee.results_spilled())
    throw Error(ErrorKind::Usage, "caller and callee pass values differently (async is not fused)");
}
CallCopy::~CallCopy() = default;

void CallCopy::copy_args(AbiContext& caller, std::span<const uint64_t> caller_args, AbiContext& callee,
                         std::vector<uint64_t>& callee_args) const {
  callee_args.clear();
  if (!params_) return;
  if (caller_args.size() < caller_param_slots_)
    throw Error(ErrorKind::Usage, "expected " + std::to_string(caller_param_slots_) + " core arguments, got " +
                                      std::to_string(caller_args.size()));
  if (!params_spilled_) {
    callee_args.resize(params_->flat_count());
    params_->copy_flat(caller, caller_args.data(), callee, callee_args.data());
    return;
  }
  callee_args.push_back(params_->copy_to_new(caller, caller_args[0], callee));
}

void CallCopy::copy_results(AbiContext& callee, std::span<const uint64_t> callee_results, AbiContext& caller,
                            std::span<const uint64_t> caller_args, std::vector<uint64_t>& caller_results) const {
  caller_results.clear();
  if (!results_) return;
  if (!results_spilled_) {
    caller_results.resize(results_->flat_count());
    results_->copy_flat(callee, callee_results.data(), caller, caller_results.data());
    return;
  }
  if (caller_args.size() <= caller_param_slots_)
    throw Error(ErrorKind::Usage, "the core arguments lack the result pointer");
  results_->copy(callee, callee_results[0], caller, caller_args[caller_param_slots_]);
}

}  // namespace cmhost::abi
