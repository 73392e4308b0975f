// Component Model value type descriptors.
//
// A Type is immutable once built. Its despecialized view (tuple -> record,
// enum/option/result -> variant, map -> list of tuples) and its canonical ABI
// layout for 32- and 64-bit memories are computed once, at construction.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cmhost/core_type.hpp"
namespace cmhost::abi {

enum class TypeKind : uint8_t {
  Bool, S8, U8, S16, U16, S32, U32, S64, U64, F32, F64, Char, String,
  List, FixedList, Record, Tuple, Variant, Enum, Option, Result, Flags, Map,
  Own, Borrow, Stream, Future, ErrorContext,
};

const char* to_string(TypeKind kind) noexcept;

// Flattened values are i32, i64, f32 or f64 (cmhost/core_type.hpp).
using cmhost::CoreType;
using cmhost::to_string;

// The address type of a linear memory: i32 (memory32) or i64 (memory64).
enum class AddrWidth : uint8_t { I32 = 0, I64 = 1 };
inline constexpr uint32_t ptr_size(AddrWidth w) { return w == AddrWidth::I32 ? 4 : 8; }

inline constexpr uint32_t kMaxFlatParams = 16;
inline constexpr uint32_t kMaxFlatAsyncParams = 4;
inline constexpr uint32_t kMaxFlatResults = 1;
inline constexpr uint64_t kMaxListByteLength = (uint64_t{1} << 28) - 1;
inline constexpr uint64_t kMaxStringByteLength = (uint64_t{1} << 28) - 1;
// The spec bounds every value type's static size (elem_size) by this.
inline constexpr uint64_t kMaxStaticSize = (uint64_t{1} << 28) - 1;
// Flattenings longer than this are counted, not listed: such a type is always
// passed through memory, so nothing needs its individual flat slots.
inline constexpr uint32_t kMaxListedFlat = 256;

class Type;
using TypeRef = std::shared_ptr<const Type>;

struct Field {
  std::string name;
  TypeRef type;
};

struct Case {
  std::string name;
  TypeRef type;  // null when the case has no payload
};

// Identity of a resource type; own/borrow handles refer to one.
struct ResourceType {
  std::string name;
};
using ResourceTypeRef = std::shared_ptr<const ResourceType>;

// Canonical ABI layout for one address width.
struct Layout {
  uint32_t size = 0;
  uint32_t align = 1;
  uint32_t flat_count = 0;          // exact length of the flattening
  std::vector<CoreType> flat;       // listed when flat_count <= kMaxListedFlat
  std::vector<uint32_t> offsets;    // record/tuple: field offsets
  uint32_t payload_offset = 0;      // variant: offset of the case payload
  uint8_t discriminant_size = 0;    // variant: 1, 2 or 4 bytes
  bool flat_listed() const { return flat.size() == flat_count; }
};

class Type {
 public:
  // Primitive types are shared singletons.
  static TypeRef bool_();
  static TypeRef s8();
  static TypeRef u8();
  static TypeRef s16();
  static TypeRef u16();
  static TypeRef s32();
  static TypeRef u32();
  static TypeRef s64();
  static TypeRef u64();
  static TypeRef f32();
  static TypeRef f64();
  static TypeRef char_();
  static TypeRef string();
  static TypeRef error_context();
  static TypeRef primitive(TypeKind kind);

  static TypeRef list(TypeRef element);
  static TypeRef fixed_list(TypeRef element, uint32_t length);
  static TypeRef record(std::vector<Field> fields);
  static TypeRef tuple(std::vector<TypeRef> types);
  static TypeRef variant(std::vector<Case> cases);
  static TypeRef enum_(std::vector<std::string> labels);
  static TypeRef option(TypeRef payload);
  static TypeRef result(TypeRef ok, TypeRef error);  // either may be null
  static TypeRef flags(std::vector<std::string> labels);
  static TypeRef map(TypeRef key, TypeRef value);
  static TypeRef own(ResourceTypeRef resource);
  static TypeRef borrow(ResourceTypeRef resource);
  // element may be null; Error (Validate) when invalid_stream_element
  // refuses it.
  static TypeRef stream(TypeRef element);
  static TypeRef future(TypeRef element);  // element may be null

  TypeKind kind() const { return kind_; }

  // Despecialized views. fields(): record and tuple (tuple fields are named
  // "0", "1", ...). cases(): variant, enum, option, result. labels(): flags,
  // enum. element(): list, fixed list, map (the key/value tuple), stream and
  // future (may be null).
  std::span<const Field> fields() const { return fields_; }
  std::span<const Case> cases() const { return cases_; }
  std::span<const std::string> labels() const { return labels_; }
  const TypeRef& element() const { return element_; }
  uint32_t fixed_length() const { return fixed_length_; }
  const ResourceTypeRef& resource() const { return resource_; }

  // The variant-shaped kinds and the record-shaped kinds after despecialization.
  bool is_variant_like() const;
  bool is_record_like() const;
  bool is_list_like() const;  // list, fixed list, map
  bool is_handle() const;     // own, borrow, stream, future, error-context

  const Layout& layout(AddrWidth width) const { return layouts_[static_cast<int>(width)]; }

  // WIT spelling with anonymous compound types inline, e.g.
  // `record { a: u8, b: list<string> }`. Used in messages.
  std::string to_wit() const;

  Type(TypeKind kind);  // use the factories; public for make_shared

 private:
  void compute_layouts();
  Layout compute_layout(AddrWidth width) const;

  TypeKind kind_;
  uint32_t fixed_length_ = 0;
  TypeRef element_;
  ResourceTypeRef resource_;
  std::vector<Field> fields_;
  std::vector<Case> cases_;
  std::vector<std::string> labels_;
  Layout layouts_[2];
};

// Why `element` cannot be a stream's element type, or null when it can (a
// null element included). The Component Model rejects `stream<char>` at
// validation for now (component-model#607): a char is 4 bytes, so such a
// stream would carry UTF-32. `future<char>` is valid.
const char* invalid_stream_element(const Type* element) noexcept;

// Structural equality. Resource types are equal when they are the same
// object, or when `same_resource` (if given) says they are.
using SameResource = std::function<bool(const ResourceType&, const ResourceType&)>;
bool equal(const Type& a, const Type& b, const SameResource& same_resource = {});

}  // namespace cmhost::abi
