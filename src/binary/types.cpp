// Component-level types: valtype, deftype (defvaltype, functype, component
// and instance types, resource types) and externtype.
#include <memory>
#include <string>

#include "decode.hpp"

namespace cmhost::binary::detail {
namespace {

bool is_prim_val_type(uint8_t byte) { return (byte >= 0x73 && byte <= 0x7f) || byte == 0x64; }

// <T>? ::= 0x00 | 0x01 T
template <typename Read>
auto read_optional(Reader& r, const char* what, Read read) -> std::optional<decltype(read(r))> {
  if (!r.read_flag(what)) return std::nullopt;
  return read(r);
}

std::optional<ValType> read_optional_val_type(Reader& r, const char* what) {
  return read_optional(r, what, read_val_type);
}

std::string read_label(Reader& r) { return r.read_name("label"); }

LabeledValType read_labeled_val_type(Reader& r) {
  LabeledValType field;
  field.label = read_label(r);
  field.type = read_val_type(r);
  return field;
}

std::vector<LabeledValType> read_labeled_val_types(Reader& r, const char* what) {
  return read_vec(r, what, read_labeled_val_type);
}

std::vector<std::string> read_labels(Reader& r, const char* what) {
  return read_vec(r, what, read_label);
}

VariantCase read_case(Reader& r) {
  VariantCase c;
  c.label = read_label(r);
  c.type = read_optional_val_type(r, "case payload presence");
  r.expect_byte(0x00, "variant case trailer");
  return c;
}

FuncType read_func_type(Reader& r, bool async) {
  FuncType func;
  func.async = async;
  func.params = read_labeled_val_types(r, "parameters");
  func.result = read_result_list(r);
  return func;
}

// componentdecl / instancedecl; imports only in component types.
Declarator read_declarator(Reader& r, bool component_type) {
  Declarator decl;
  decl.offset = r.position();
  const uint8_t kind = r.read_u8();
  switch (kind) {
    case 0x00:
      decl.item = read_core_type(r);
      break;
    case 0x01:
      decl.item = std::make_shared<const Type>(read_type(r));
      break;
    case 0x02:
      decl.item = read_alias(r);
      break;
    case 0x03: {
      if (!component_type)
        r.fail_at(decl.offset, "an instance type cannot declare an import (0x03)");
      ImportDecl import;
      import.name = read_name_attributes(r);
      import.type = read_extern_type(r);
      decl.item = std::move(import);
      break;
    }
    case 0x04: {
      ExportDecl exported;
      exported.name = read_name_attributes(r);
      exported.type = read_extern_type(r);
      decl.item = std::move(exported);
      break;
    }
    default:
      r.fail_unknown(component_type ? "component type declarator" : "instance type declarator",
                     kind);
  }
  return decl;
}

std::vector<Declarator> read_declarators(Reader& r, bool component_type) {
  return read_vec(r, "declarators",
                  [component_type](Reader& rr) { return read_declarator(rr, component_type); });
}

}  // namespace

std::optional<ValType> read_result_list(Reader& r) {
  const uint8_t kind = r.read_u8();
  if (kind == 0x00) return read_val_type(r);
  if (kind != 0x01) r.fail_unknown("result list form", kind);
  r.expect_byte(0x00, "byte after an empty result list (0x01)");
  return std::nullopt;
}

ValType read_val_type(Reader& r) {
  const uint8_t first = r.peek_u8();
  if (is_prim_val_type(first)) {
    r.read_u8();
    return PrimValType(first);
  }
  // Type indices are the nonnegative s33 values; negative ones are opcodes.
  const size_t start = r.position();
  const int64_t index = r.read_s33();
  if (index < 0) r.fail_at(start, "unknown value type opcode " + hex(first));
  return TypeIndex{static_cast<uint32_t>(index)};
}

Type read_type(Reader& r) {
  const uint8_t opcode = r.read_u8();
  if (is_prim_val_type(opcode)) return Type{PrimValType(opcode)};
  switch (opcode) {
    case 0x72: return Type{RecordType{read_labeled_val_types(r, "record fields")}};
    case 0x71: return Type{VariantType{read_vec(r, "variant cases", read_case)}};
    case 0x70: return Type{ListType{read_val_type(r), std::nullopt}};
    case 0x67: {
      ListType list{read_val_type(r), std::nullopt};
      list.length = r.read_u32();
      return Type{std::move(list)};
    }
    case 0x6f: return Type{TupleType{read_vec(r, "tuple types", read_val_type)}};
    case 0x6e: return Type{FlagsType{read_labels(r, "flags")}};
    case 0x6d: return Type{EnumType{read_labels(r, "enum cases")}};
    case 0x6b: return Type{OptionType{read_val_type(r)}};
    case 0x6a: {
      ResultType result;
      result.ok = read_optional_val_type(r, "result ok type presence");
      result.error = read_optional_val_type(r, "result error type presence");
      return Type{std::move(result)};
    }
    case 0x69: return Type{OwnType{r.read_u32()}};
    case 0x68: return Type{BorrowType{r.read_u32()}};
    case 0x66: return Type{StreamType{read_optional_val_type(r, "stream element presence")}};
    case 0x65: return Type{FutureType{read_optional_val_type(r, "future element presence")}};
    case 0x63: {
      MapType map{read_val_type(r), PrimValType::Bool};
      map.value = read_val_type(r);
      return Type{std::move(map)};
    }
    case 0x40:
    case 0x43:
      return Type{read_func_type(r, opcode == 0x43)};
    case 0x41: {
      Reader::NestingGuard guard(r);
      return Type{ComponentType{read_declarators(r, true)}};
    }
    case 0x42: {
      Reader::NestingGuard guard(r);
      return Type{InstanceType{read_declarators(r, false)}};
    }
    case 0x3f: {
      ResourceType resource;
      resource.rep = read_core_val_type(r);
      resource.dtor =
          read_optional(r, "destructor presence", [](Reader& rr) { return rr.read_u32(); });
      return Type{std::move(resource)};
    }
    default:
      r.fail_unknown("type opcode", opcode);
  }
}

ExternType read_extern_type(Reader& r) {
  ExternType type;
  const uint8_t kind = r.read_u8();
  switch (kind) {
    case 0x00: {
      r.expect_byte(0x11, "core sort of an extern type (only core module)");
      type.sort = Sort::CoreModule;
      type.index = r.read_u32();
      return type;
    }
    case 0x01:
      type.sort = Sort::Func;
      type.index = r.read_u32();
      return type;
    case 0x02: {
      type.sort = Sort::Value;
      const uint8_t bound = r.read_u8();
      if (bound == 0x00) {
        type.index = r.read_u32();
      } else if (bound == 0x01) {
        type.value_type = read_val_type(r);
      } else {
        r.fail_unknown("value bound", bound);
      }
      return type;
    }
    case 0x03: {
      type.sort = Sort::Type;
      const uint8_t bound = r.read_u8();
      if (bound == 0x00) {
        type.index = r.read_u32();
      } else if (bound == 0x01) {
        type.sub_resource = true;
      } else {
        r.fail_unknown("type bound", bound);
      }
      return type;
    }
    case 0x04:
      type.sort = Sort::Component;
      type.index = r.read_u32();
      return type;
    case 0x05:
      type.sort = Sort::Instance;
      type.index = r.read_u32();
      return type;
    default:
      r.fail_unknown("extern type kind", kind);
  }
}

}  // namespace cmhost::binary::detail
