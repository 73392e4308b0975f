// The compiled form of a value type: a flat array of ops whose operands are
// the layout constants (sizes, offsets, discriminant widths, case tables).
// Lift and lower interpret it with a switch per value, never touching Type.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "cmhost/abi/canon.hpp"

namespace cmhost::abi::detail {

enum class OpCode : uint8_t {
  Bool, S8, U8, S16, U16, S32, U32, S64, U64, F32, F64, Char,
  String, List, FixedList, Record, Variant, Flags, Handle,
};

inline constexpr uint32_t kNoOp = UINT32_MAX;

inline constexpr uint32_t kCanonicalNan32 = 0x7fc00000u;
inline constexpr uint64_t kCanonicalNan64 = 0x7ff8000000000000ull;

inline bool is_nan32(uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu); }
inline bool is_nan64(uint64_t b) {
  return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0x000fffffffffffffull);
}

template <typename T>
inline T read(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
inline void write(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Replaces every NaN in a block of f32 or f64 values with the canonical NaN.
void canonicalize_floats(ValKind kind, uint8_t* p, uint64_t count);

struct Op {
  OpCode code;
  ValKind val_kind;          // the Val kind built: Record/Tuple, Variant/Enum/Option/Result...
  uint8_t discriminant_size; // Variant
  bool bulk;                 // List/FixedList of numbers: copied as one block
  ValKind bulk_kind;         // element kind of a bulk list
  uint32_t size;
  uint32_t align;
  uint32_t flat_count;
  uint32_t elem;             // List/FixedList: element op
  uint32_t count;            // FixedList length, Record fields, Variant cases, Flags labels
  uint32_t children;         // Record/Variant: first entry in Program::children
  uint32_t payload_offset;   // Variant
  uint32_t flags_mask;       // Flags: the bits that carry labels
  const Type* type;          // for messages only
};

struct Child {
  uint32_t op;      // kNoOp for a case without payload
  uint32_t offset;  // Record: field offset
  OpCode code;      // of `op`: a field of numbers is built without looking it up
  ValKind val_kind;
};

struct Program {
  TypeRef root_type;  // keeps every Type* in ops alive
  AddrWidth width;
  std::vector<Op> ops;
  std::vector<Child> children;
  uint32_t root = 0;
};

OpCode opcode_of(TypeKind kind);
Program compile(const TypeRef& type, AddrWidth width);

Val load(AbiContext& cx, const Program& p, uint32_t op, uint64_t ptr);
void store(AbiContext& cx, const Program& p, uint32_t op, const Val& v, uint64_t ptr);
Val lift_flat(AbiContext& cx, const Program& p, uint32_t op, const uint64_t* in);
void lower_flat(AbiContext& cx, const Program& p, uint32_t op, const Val& v, uint64_t* out);

[[noreturn]] void range_trap(const AbiContext& cx, uint64_t ptr, uint64_t size, uint32_t align,
                             const char* what, const Type& type);
// Traps unless [ptr, ptr+size) is in memory and ptr is a multiple of align
// (a power of two).
inline void check_range(const AbiContext& cx, uint64_t ptr, uint64_t size, uint32_t align,
                        const char* what, const Type& type) {
  if ((ptr & (align - 1)) != 0 || ptr > cx.size() || size > cx.size() - ptr) range_trap(cx, ptr, size, align, what, type);
}

[[noreturn]] void trap_in(const Type& type, const std::string& reason);

}  // namespace cmhost::abi::detail
