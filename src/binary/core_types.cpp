// core:type inside components: core wasm (3.0) rectypes and core:moduletype.
#include <string>

#include "decode.hpp"

namespace cmhost::binary::detail {
namespace {

bool is_abstract_heap_type(uint8_t byte) {
  return (byte >= 0x69 && byte <= 0x74);
}

CoreHeapType read_heap_type(Reader& r) {
  CoreHeapType heap;
  const uint8_t first = r.peek_u8();
  if (first == 0x65) {  // 🧵② shared abstract heap type
    r.read_u8();
    const uint8_t byte = r.read_u8();
    if (!is_abstract_heap_type(byte)) r.fail_unknown("shared abstract heap type", byte);
    heap.abstract = AbstractHeapType(byte);
    heap.shared = true;
    return heap;
  }
  if (is_abstract_heap_type(first)) {
    heap.abstract = AbstractHeapType(r.read_u8());
    return heap;
  }
  const size_t start = r.position();
  const int64_t index = r.read_s33();
  if (index < 0) r.fail_at(start, "unknown heap type " + hex(first));
  heap.type_index = static_cast<uint32_t>(index);
  return heap;
}

CoreRefType read_ref_type_after(Reader& r, uint8_t opcode) {
  if (opcode == 0x63 || opcode == 0x64) return CoreRefType{opcode == 0x63, read_heap_type(r)};
  // The one-byte abbreviations (funcref, externref, ...) are nullable.
  return CoreRefType{true, CoreHeapType{AbstractHeapType(opcode), std::nullopt, false}};
}

bool is_ref_type_opcode(uint8_t byte) {
  return byte == 0x63 || byte == 0x64 || is_abstract_heap_type(byte);
}

CoreRefType read_ref_type(Reader& r) {
  const uint8_t opcode = r.read_u8();
  if (!is_ref_type_opcode(opcode)) r.fail_unknown("reference type", opcode);
  return read_ref_type_after(r, opcode);
}

CoreStorageType read_storage_type(Reader& r) {
  const uint8_t byte = r.peek_u8();
  if (byte == 0x78 || byte == 0x77) {
    r.read_u8();
    return CorePackedType(byte);
  }
  return read_core_val_type(r);
}

CoreFieldType read_field_type(Reader& r) {
  CoreFieldType field;
  field.type = read_storage_type(r);
  field.is_mutable = r.read_flag("field mutability");
  return field;
}

std::vector<CoreValType> read_result_types(Reader& r) {
  return read_vec(r, "value types", read_core_val_type);
}

CoreCompositeType read_composite_type(Reader& r) {
  const uint8_t opcode = r.read_u8();
  switch (opcode) {
    case 0x60: {
      CoreFuncType func;
      func.params = read_result_types(r);
      func.results = read_result_types(r);
      return func;
    }
    case 0x5f: {
      return CoreStructType{read_vec(r, "struct fields", read_field_type)};
    }
    case 0x5e:
      return CoreArrayType{read_field_type(r)};
    default:
      r.fail_unknown("core composite type opcode", opcode);
  }
}

std::vector<uint32_t> read_supertypes(Reader& r) {
  return read_vec(r, "supertypes", [](Reader& rr) { return rr.read_u32(); });
}

// Inside a rec group 0x50 is a non-final subtype (core wasm's meaning).
CoreSubType read_sub_type(Reader& r) {
  CoreSubType sub;
  const uint8_t byte = r.peek_u8();
  if (byte == 0x50 || byte == 0x4f) {
    r.read_u8();
    sub.is_final = byte == 0x4f;
    sub.supertypes = read_supertypes(r);
  }
  sub.type = read_composite_type(r);
  return sub;
}

CoreRecType read_rec_type(Reader& r) {
  CoreRecType rec;
  if (r.peek_u8() == 0x4e) {
    r.read_u8();
    rec.types = read_vec(r, "types in a rec group", read_sub_type);
  } else {
    rec.types.push_back(read_sub_type(r));
  }
  return rec;
}

// core:deftype without core:moduletype: 0x50 is taken by module types, so a
// top-level non-final subtype is written 0x00 0x50 (Binary.md's pre-1.0 wart).
CoreRecType read_core_def_type(Reader& r) {
  if (r.peek_u8() == 0x00) {
    r.read_u8();
    r.expect_byte(0x50, "core type opcode after a 0x00 prefix");
    CoreSubType sub;
    sub.is_final = false;
    sub.supertypes = read_supertypes(r);
    sub.type = read_composite_type(r);
    CoreRecType rec;
    rec.types.push_back(std::move(sub));
    return rec;
  }
  const uint8_t byte = r.peek_u8();
  if (byte != 0x4e && byte != 0x4f && byte != 0x60 && byte != 0x5f && byte != 0x5e) {
    r.read_u8();
    r.fail_unknown("core type opcode", byte);
  }
  return read_rec_type(r);
}

CoreLimits read_limits(Reader& r, uint8_t flags) {
  CoreLimits limits;
  limits.shared = flags & 0x02;
  limits.is_64 = flags & 0x04;
  limits.min = limits.is_64 ? r.read_u64() : r.read_u32();
  if (flags & 0x01) limits.max = limits.is_64 ? r.read_u64() : r.read_u32();
  return limits;
}

CoreExternType read_core_extern_type(Reader& r) {
  const uint8_t kind = r.read_u8();
  switch (kind) {
    case 0x00:
      return CoreFuncRef{r.read_u32()};
    case 0x01: {
      CoreTableType table;
      table.element = read_ref_type(r);
      const uint8_t flags = r.read_u8();
      if (flags & ~0x07) r.fail_unknown("table limits flags", flags);
      table.limits = read_limits(r, flags);
      return table;
    }
    case 0x02: {
      // Flags: 1 max, 2 shared, 4 i64 addresses, 8 custom page size.
      const uint8_t flags = r.read_u8();
      if (flags & ~0x0f) r.fail_unknown("memory limits flags", flags);
      CoreMemoryType memory;
      memory.limits = read_limits(r, flags);
      if (flags & 0x08) memory.page_size_log2 = r.read_u32();
      return memory;
    }
    case 0x03: {
      CoreGlobalType global;
      global.type = read_core_val_type(r);
      const uint8_t flags = r.read_u8();
      if (flags & ~0x03) r.fail_unknown("global mutability", flags);
      global.is_mutable = flags & 0x01;
      global.shared = flags & 0x02;
      return global;
    }
    case 0x04: {
      const uint8_t attribute = r.read_u8();
      if (attribute != 0x00) r.fail_unknown("tag attribute", attribute);
      return CoreTagType{r.read_u32()};
    }
    default:
      r.fail_unknown("core extern kind", kind);
  }
}

CoreModuleDecl read_module_decl(Reader& r) {
  const uint8_t kind = r.read_u8();
  switch (kind) {
    case 0x00: {
      CoreImportDecl import;
      import.module = r.read_name("import module name");
      import.name = r.read_name("import name");
      import.type = read_core_extern_type(r);
      return import;
    }
    case 0x01:
      if (r.peek_u8() == 0x50) r.fail("a module type cannot declare a module type");
      return read_core_def_type(r);
    case 0x02: {
      r.expect_byte(0x10, "module type alias sort (only core types are aliased)");
      r.expect_byte(0x01, "module type alias target (only outer aliases exist)");
      CoreOuterTypeAlias alias;
      alias.count = r.read_u32();
      alias.index = r.read_u32();
      return alias;
    }
    case 0x03: {
      CoreExportDecl exported;
      exported.name = r.read_name("export name");
      exported.type = read_core_extern_type(r);
      return exported;
    }
    default:
      r.fail_unknown("module type declaration", kind);
  }
}

}  // namespace

CoreValType read_core_val_type(Reader& r) {
  const uint8_t opcode = r.read_u8();
  if (opcode >= 0x7b && opcode <= 0x7f) return CoreNumType(opcode);
  if (is_ref_type_opcode(opcode)) return read_ref_type_after(r, opcode);
  r.fail_unknown("core value type", opcode);
}

CoreType read_core_type(Reader& r) {
  if (r.peek_u8() == 0x50) {
    r.read_u8();
    return CoreType{CoreModuleType{read_vec(r, "module type declarations", read_module_decl)}};
  }
  return CoreType{read_core_def_type(r)};
}

}  // namespace cmhost::binary::detail

namespace cmhost::binary {

using Core = cmhost::CoreType;

std::optional<Core> to_core_type(const CoreValType& type) {
  if (const auto* num = std::get_if<CoreNumType>(&type)) {
    switch (*num) {
      case CoreNumType::I32: return Core::I32;
      case CoreNumType::I64: return Core::I64;
      case CoreNumType::F32: return Core::F32;
      case CoreNumType::F64: return Core::F64;
      case CoreNumType::V128: return Core::V128;
    }
    return std::nullopt;
  }
  const auto& ref = std::get<CoreRefType>(type);
  if (!ref.nullable || ref.heap.type_index || ref.heap.shared) return std::nullopt;
  if (ref.heap.abstract == AbstractHeapType::Func) return Core::FuncRef;
  if (ref.heap.abstract == AbstractHeapType::Extern) return Core::ExternRef;
  return std::nullopt;
}

CoreValType to_core_val_type(Core type) {
  switch (type) {
    case Core::I32: return CoreNumType::I32;
    case Core::I64: return CoreNumType::I64;
    case Core::F32: return CoreNumType::F32;
    case Core::F64: return CoreNumType::F64;
    case Core::V128: return CoreNumType::V128;
    case Core::FuncRef: return CoreRefType{true, CoreHeapType{AbstractHeapType::Func, std::nullopt, false}};
    case Core::ExternRef: return CoreRefType{true, CoreHeapType{AbstractHeapType::Extern, std::nullopt, false}};
  }
  return CoreNumType::I32;
}

}  // namespace cmhost::binary
