// The component binary format (design/mvp/Binary.md) decoded into an AST.
//
// The decoder checks the grammar only: index bounds, type matching, name
// syntax and uniqueness are the validator's job. Definitions are kept in
// binary order (sections flattened, as the spec's `flatten` does) so the
// validator can build index spaces by replaying them. Core module bytes are
// never copied: a core module is a byte range of the decoded input (keep the
// input to read it). Every offset is relative to the start of the bytes given
// to decode_component, also inside nested components.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "cmhost/core_type.hpp"
#include "cmhost/names.hpp"
#include "cmhost/sort.hpp"

namespace cmhost::binary {

struct ByteRange {
  size_t offset = 0;
  size_t size = 0;
};

// Both index-space families in one enum: `sort` and `core:sort`.
using cmhost::Sort;
using cmhost::is_core;
using cmhost::to_string;

struct SortIndex {
  Sort sort = Sort::Func;
  uint32_t index = 0;
};

// ---- Core types (core:type) ----

// Number and vector types; the values are their opcodes.
enum class CoreNumType : uint8_t { I32 = 0x7f, I64 = 0x7e, F32 = 0x7d, F64 = 0x7c, V128 = 0x7b };

enum class AbstractHeapType : uint8_t {
  Func = 0x70, Extern = 0x6f, Any = 0x6e, Eq = 0x6d, I31 = 0x6c, Struct = 0x6b, Array = 0x6a,
  Exn = 0x69, None = 0x71, NoExtern = 0x72, NoFunc = 0x73, NoExn = 0x74,
};

struct CoreHeapType {
  AbstractHeapType abstract = AbstractHeapType::Func;  // when type_index is empty
  std::optional<uint32_t> type_index;                  // a concrete heap type
  bool shared = false;                                 // 🧵② `shared` abstract type (0x65)
};

struct CoreRefType {
  bool nullable = true;
  CoreHeapType heap;
};

using CoreValType = std::variant<CoreNumType, CoreRefType>;

// The engine-level type a decoded one stands for: numbers and v128 as
// themselves, nullable func and extern references as funcref and
// externref; nullopt for the other reference types.
std::optional<cmhost::CoreType> to_core_type(const CoreValType& type);
CoreValType to_core_val_type(cmhost::CoreType type);

enum class CorePackedType : uint8_t { I8 = 0x78, I16 = 0x77 };
using CoreStorageType = std::variant<CoreValType, CorePackedType>;

struct CoreFieldType {
  CoreStorageType type;
  bool is_mutable = false;
};

struct CoreFuncType {
  std::vector<CoreValType> params;
  std::vector<CoreValType> results;
};
struct CoreStructType {
  std::vector<CoreFieldType> fields;
};
struct CoreArrayType {
  CoreFieldType element;
};
using CoreCompositeType = std::variant<CoreFuncType, CoreStructType, CoreArrayType>;

struct CoreSubType {
  bool is_final = true;  // a plain composite type is final with no supertypes
  std::vector<uint32_t> supertypes;
  CoreCompositeType type;
};

// A recursion group; a lone subtype is a group of one.
struct CoreRecType {
  std::vector<CoreSubType> types;
};

struct CoreLimits {
  uint64_t min = 0;
  std::optional<uint64_t> max;
  bool is_64 = false;   // i64 address type (memory64 / table64)
  bool shared = false;  // threads
};
struct CoreTableType {
  CoreRefType element;
  CoreLimits limits;
};
struct CoreMemoryType {
  CoreLimits limits;
  std::optional<uint32_t> page_size_log2;  // custom-page-sizes
};
struct CoreGlobalType {
  CoreValType type;
  bool is_mutable = false;
  bool shared = false;
};
struct CoreFuncRef {  // a function import/export: its core type index
  uint32_t type_index = 0;
};
struct CoreTagType {
  uint32_t type_index = 0;
};
using CoreExternType =
    std::variant<CoreFuncRef, CoreTableType, CoreMemoryType, CoreGlobalType, CoreTagType>;

struct CoreImportDecl {
  std::string module;
  std::string name;
  CoreExternType type;
};
struct CoreExportDecl {
  std::string name;
  CoreExternType type;
};
struct CoreOuterTypeAlias {  // (alias outer count index (type))
  uint32_t count = 0;
  uint32_t index = 0;
};
// Nested module types are rejected while decoding, so a type declarator is a rectype.
using CoreModuleDecl =
    std::variant<CoreImportDecl, CoreRecType, CoreOuterTypeAlias, CoreExportDecl>;

struct CoreModuleType {
  std::vector<CoreModuleDecl> decls;
};

struct CoreType {
  std::variant<CoreRecType, CoreModuleType> def;
};

// ---- Names ----

enum class NameAttributeKind : uint8_t { Implements, VersionSuffix, ExternalId };
struct NameAttribute {
  NameAttributeKind kind = NameAttributeKind::Implements;
  std::string value;
};

// `nameattributes`: an externname and its attributes (0x02 form). Duplicate
// attributes are kept; rejecting them is validation.
struct ExternName {
  std::string name;
  std::vector<NameAttribute> attributes;
};

// ---- Component-level types ----

// Primitive value types; the values are their opcodes.
enum class PrimValType : uint8_t {
  Bool = 0x7f, S8 = 0x7e, U8 = 0x7d, S16 = 0x7c, U16 = 0x7b, S32 = 0x7a, U32 = 0x79,
  S64 = 0x78, U64 = 0x77, F32 = 0x76, F64 = 0x75, Char = 0x74, String = 0x73,
  ErrorContext = 0x64,
};
const char* to_string(PrimValType type) noexcept;

struct TypeIndex {
  uint32_t index = 0;
};
using ValType = std::variant<PrimValType, TypeIndex>;

struct LabeledValType {
  std::string label;
  ValType type;
};

struct RecordType { std::vector<LabeledValType> fields; };
struct VariantCase {
  std::string label;
  std::optional<ValType> type;
};
struct VariantType { std::vector<VariantCase> cases; };
struct ListType {
  ValType element;
  std::optional<uint32_t> length;  // 🔧 (list t len), opcode 0x67
};
struct TupleType { std::vector<ValType> types; };
struct FlagsType { std::vector<std::string> labels; };
struct EnumType { std::vector<std::string> labels; };
struct OptionType { ValType type; };
struct ResultType {
  std::optional<ValType> ok;
  std::optional<ValType> error;
};
struct OwnType { uint32_t resource = 0; };
struct BorrowType { uint32_t resource = 0; };
struct StreamType { std::optional<ValType> element; };
struct FutureType { std::optional<ValType> element; };
struct MapType {
  ValType key;
  ValType value;
};

struct FuncType {
  bool async = false;  // 0x43
  std::vector<LabeledValType> params;
  std::optional<ValType> result;
};

struct ResourceType {
  CoreValType rep;
  std::optional<uint32_t> dtor;  // core func index
};

// externtype: the sort of an import/export and its type or bound.
struct ExternType {
  Sort sort = Sort::Func;  // CoreModule, Func, Value, Type, Component or Instance
  // CoreModule: a core type index. Func, Component, Instance: a type index.
  // Type: the (eq i) type index unless sub_resource. Value: the (eq i) value
  // index unless value_type is set.
  uint32_t index = 0;
  bool sub_resource = false;          // Type: (sub resource)
  std::optional<ValType> value_type;  // 🪙 Value: bound by a value type
};

struct ImportDecl {
  ExternName name;
  ExternType type;
};
struct ExportDecl {
  ExternName name;
  ExternType type;
};

struct AliasExport {  // 0x00: an export of a component instance
  uint32_t instance = 0;
  std::string name;
};
struct AliasCoreExport {  // 0x01: an export of a core instance
  uint32_t instance = 0;
  std::string name;
};
struct AliasOuter {  // 0x02: a definition of an enclosing scope
  uint32_t count = 0;
  uint32_t index = 0;
};
struct Alias {
  Sort sort = Sort::Func;
  std::variant<AliasExport, AliasCoreExport, AliasOuter> target;
};

struct Type;
// A declarator of a component type (0x41) or instance type (0x42); instance
// types never hold imports.
struct Declarator {
  size_t offset = 0;
  std::variant<CoreType, std::shared_ptr<const Type>, Alias, ImportDecl, ExportDecl> item;
};
struct ComponentType { std::vector<Declarator> decls; };
struct InstanceType { std::vector<Declarator> decls; };

struct Type {
  // The first 14 alternatives are the defvaltypes.
  std::variant<PrimValType, RecordType, VariantType, ListType, TupleType, FlagsType, EnumType,
               OptionType, ResultType, OwnType, BorrowType, StreamType, FutureType, MapType,
               FuncType, ComponentType, InstanceType, ResourceType>
      def;
  bool is_defvaltype() const { return def.index() <= 13; }
};
static_assert(std::is_same_v<std::variant_alternative_t<13, decltype(Type::def)>, MapType>);

// ---- Instances ----

struct CoreInstantiateArg {  // (with name (instance i))
  std::string name;
  uint32_t instance = 0;
};
struct CoreInstantiate {
  uint32_t module = 0;
  std::vector<CoreInstantiateArg> args;
};
struct CoreInlineExport {
  std::string name;
  SortIndex target;  // a core sort
};
struct CoreInlineExports { std::vector<CoreInlineExport> exports; };
struct CoreInstance {
  std::variant<CoreInstantiate, CoreInlineExports> expr;
};

struct InstantiateArg {
  std::string name;
  SortIndex target;
};
struct Instantiate {
  uint32_t component = 0;
  std::vector<InstantiateArg> args;
};
struct InlineExport {
  ExternName name;
  SortIndex target;
};
struct InlineExports { std::vector<InlineExport> exports; };
struct Instance {
  std::variant<Instantiate, InlineExports> expr;
};

// ---- Canonical definitions ----

// The canonical definitions, one per row of binary/canon_table.def.
enum class CanonKind : uint8_t {
#define CMHOST_CANON(kind, ...) kind,
#include "binary/canon_table.def"
#undef CMHOST_CANON
};
// What follows a canonical definition's opcode (the table's immediates
// column), as flags; the decoder reads them in the order listed.
namespace canon_immediates {
inline constexpr uint16_t none = 0;
inline constexpr uint16_t lift = 1u << 0;           // 0x00 funcidx options typeidx
inline constexpr uint16_t lower = 1u << 1;          // 0x00 funcidx options
inline constexpr uint16_t shared = 1u << 2;         // a flag
inline constexpr uint16_t context = 1u << 3;        // core value type, slot
inline constexpr uint16_t result = 1u << 4;         // resultlist
inline constexpr uint16_t resource_type = 1u << 5;  // typeidx of a resource
inline constexpr uint16_t stream_type = 1u << 6;    // typeidx of a stream
inline constexpr uint16_t future_type = 1u << 7;    // typeidx of a future
inline constexpr uint16_t options = 1u << 8;        // canonical options
inline constexpr uint16_t async = 1u << 9;          // a flag
inline constexpr uint16_t cancellable = 1u << 10;   // a flag
inline constexpr uint16_t memory = 1u << 11;        // memidx
inline constexpr uint16_t core_type = 1u << 12;     // core typeidx
inline constexpr uint16_t table = 1u << 13;         // tableidx
}  // namespace canon_immediates
struct CanonInfo {
  CanonKind kind;
  uint8_t opcode;
  const char* name;     // the text-format name, e.g. "stream.read"
  uint16_t immediates;  // canon_immediates flags
};
const CanonInfo& canon_info(CanonKind kind) noexcept;
const char* to_string(CanonKind kind) noexcept;  // the text-format name, e.g. "stream.read"

enum class CanonOptionKind : uint8_t {
  StringUtf8, StringUtf16, StringLatin1Utf16, Memory, Realloc, PostReturn, Async, Callback,
};
struct CanonOption {
  CanonOptionKind kind = CanonOptionKind::StringUtf8;
  uint32_t index = 0;  // Memory: core memory; Realloc, PostReturn, Callback: core func
};

// One `canon` definition. Which fields are meaningful depends on the kind;
// the others keep their defaults. Options are kept in binary order, with
// duplicates, for the validator to judge.
struct Canon {
  CanonKind kind = CanonKind::Lift;
  // Lift: core func. Lower: func.
  uint32_t func_index = 0;
  // Lift: func type. resource.*: resource type. stream.*, future.*: stream/future type.
  uint32_t type_index = 0;
  // thread.new-indirect, thread.spawn-*: core func type.
  uint32_t core_type_index = 0;
  // thread.new-indirect, thread.spawn-indirect.
  uint32_t table_index = 0;
  // waitable-set.wait, waitable-set.poll.
  uint32_t memory_index = 0;
  // context.get, context.set.
  uint32_t context_slot = 0;
  CoreValType context_type = CoreNumType::I32;
  // task.return.
  std::optional<ValType> result;
  // lift, lower, task.return, {stream,future}.{read,write}, error-context.{new,debug-message}.
  std::vector<CanonOption> options;
  bool async = false;        // subtask.cancel, {stream,future}.cancel-*
  bool cancellable = false;  // waitable-set.{wait,poll}, thread.{suspend,yield}*
  bool shared = false;       // thread.spawn-*, thread.available-parallelism
};

// ---- Other definitions ----

struct CustomSection {
  std::string name;
  ByteRange data;  // the payload after the name
};

struct CoreModule {
  ByteRange bytes;  // the whole module, preamble included
};

struct Component;

struct Start {  // 🪙
  uint32_t func = 0;
  std::vector<uint32_t> args;  // value indices
  uint32_t result_count = 0;
};

struct Import {
  ExternName name;
  ExternType type;
};

struct Export {
  ExternName name;
  SortIndex target;
  std::optional<ExternType> type;  // an ascribed type
};

// 🪙 A value definition. Decoding the value needs the type index space, so
// the encoded value is kept as bytes for the validator.
struct Value {
  ValType type;
  ByteRange bytes;
};

// One definition (or custom section), in binary order. `offset` is where it
// starts, for diagnostics.
struct Definition {
  size_t offset = 0;
  std::variant<CustomSection, CoreModule, CoreInstance, CoreType, std::shared_ptr<const Component>,
               Instance, Alias, Type, Canon, Start, Import, Export, Value>
      item;
};

// The decoded `component-name` custom section.
struct NameSection {
  std::optional<std::string> component_name;
  std::map<Sort, std::map<uint32_t, std::string>> names;  // per sort: index -> name
};

struct Component {
  ByteRange bytes;  // the whole component, preamble included
  std::vector<Definition> definitions;
  // From the last well-formed `component-name` section; a malformed one is ignored.
  std::optional<NameSection> names;
};

// Decodes a component binary. Throws cmhost::Error (ErrorKind::Decode) whose
// message starts with "at byte 0x..:" and names the reason.
Component decode_component(std::span<const uint8_t> bytes);

// ---- Import/export name grammar (Explainer.md) ----

// An externname split into its parts (cmhost/names.hpp). Decoding does not
// require names to parse (that is validation, as in the reference tests).
using cmhost::ParsedExternName;
using cmhost::parse_extern_name;
using cmhost::is_label;

}  // namespace cmhost::binary
