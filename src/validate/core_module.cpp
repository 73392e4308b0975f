// Core modules seen from the component: their imports and exports with
// types, read straight from the module's sections (no compilation), and core
// subtyping between them.
#include <algorithm>
#include <string>

#include "binary/reader.hpp"
#include "cmhost/error.hpp"
#include "internal.hpp"

namespace cmhost::validate::detail {
namespace {

using binary::CoreFuncType;
using binary::CoreNumType;
using binary::CoreValType;

// A bounds-checked cursor over one core module; every failure is a Validate
// error at an absolute offset of the component bytes.
// Core modules are read with the decoder's reader; what is malformed in
// them is a validation error (the decoder keeps them as byte ranges).
using ModuleReader = binary::detail::Reader;

bool is_abstract_heap(uint8_t byte) { return byte >= 0x69 && byte <= 0x74; }

binary::CoreHeapType read_heap_type(ModuleReader& r) {
  binary::CoreHeapType heap;
  uint8_t byte = r.peek_u8();
  if (byte == 0x65) {  // shared abstract heap type
    r.read_u8();
    heap.shared = true;
    byte = r.peek_u8();
    if (!is_abstract_heap(byte)) r.fail("bad shared heap type");
  }
  if (is_abstract_heap(byte)) {
    heap.abstract = binary::AbstractHeapType(r.read_u8());
    return heap;
  }
  const int64_t index = r.read_s33();
  if (index < 0) r.fail("bad heap type");
  heap.type_index = static_cast<uint32_t>(index);
  return heap;
}

CoreValType read_val_type(ModuleReader& r) {
  const uint8_t byte = r.read_u8();
  if (byte >= 0x7b && byte <= 0x7f) return CoreNumType(byte);
  if (byte == 0x63 || byte == 0x64) return binary::CoreRefType{byte == 0x63, read_heap_type(r)};
  if (is_abstract_heap(byte))
    return binary::CoreRefType{true, binary::CoreHeapType{binary::AbstractHeapType(byte), {}, false}};
  r.fail("unknown value type " + hex(byte));
}

binary::CoreRefType read_ref_type(ModuleReader& r) {
  const CoreValType type = read_val_type(r);
  if (auto ref = std::get_if<binary::CoreRefType>(&type)) return *ref;
  r.fail("expected a reference type");
}

std::vector<CoreValType> read_val_types(ModuleReader& r) {
  std::vector<CoreValType> out;
  for (uint32_t n = r.read_count("items"); n > 0; --n) out.push_back(read_val_type(r));
  return out;
}

void skip_field_type(ModuleReader& r) {
  const uint8_t byte = r.peek_u8();
  if (byte == 0x78 || byte == 0x77)
    r.read_u8();
  else
    read_val_type(r);
  if (r.read_u8() > 1) r.fail("bad field mutability");
}

// One entry of the module's type index space: a function type, or another
// composite type (struct, array) that imports cannot use as a function type.
struct ModuleType {
  bool is_func = false;
  CoreFuncType func;
};

ModuleType read_composite_type(ModuleReader& r) {
  uint8_t byte = r.read_u8();
  if (byte == 0x65) byte = r.read_u8();  // shared composite type
  ModuleType type;
  switch (byte) {
    case 0x60:
      type.is_func = true;
      type.func.params = read_val_types(r);
      type.func.results = read_val_types(r);
      break;
    case 0x5f:
      for (uint32_t n = r.read_count("items"); n > 0; --n) skip_field_type(r);
      break;
    case 0x5e: skip_field_type(r); break;
    case 0x5d: r.read_u32(); break;  // stack switching: cont $ft
    default: r.fail("unknown composite type " + hex(byte));
  }
  return type;
}

ModuleType read_sub_type(ModuleReader& r) {
  const uint8_t byte = r.peek_u8();
  if (byte == 0x50 || byte == 0x4f) {
    r.read_u8();
    for (uint32_t n = r.read_count("items"); n > 0; --n) r.read_u32();
  }
  return read_composite_type(r);
}

binary::CoreLimits read_limits(ModuleReader& r, uint8_t flags) {
  binary::CoreLimits limits;
  limits.shared = flags & 0x02;
  limits.is_64 = flags & 0x04;
  limits.min = limits.is_64 ? r.read_u64() : r.read_u32();
  if (flags & 0x01) limits.max = limits.is_64 ? r.read_u64() : r.read_u32();
  return limits;
}

binary::CoreTableType read_table_type(ModuleReader& r) {
  binary::CoreTableType table;
  table.element = read_ref_type(r);
  const uint8_t flags = r.read_u8();
  if (flags & ~0x07) r.fail("bad table limits flags " + hex(flags));
  table.limits = read_limits(r, flags);
  return table;
}

binary::CoreMemoryType read_memory_type(ModuleReader& r) {
  const uint8_t flags = r.read_u8();
  if (flags & ~0x0f) r.fail("bad memory limits flags " + hex(flags));
  binary::CoreMemoryType memory;
  memory.limits = read_limits(r, flags);
  if (flags & 0x08) memory.page_size_log2 = r.read_u32();
  return memory;
}

binary::CoreGlobalType read_global_type(ModuleReader& r) {
  binary::CoreGlobalType global;
  global.type = read_val_type(r);
  const uint8_t flags = r.read_u8();
  if (flags & ~0x03) r.fail("bad global mutability " + hex(flags));
  global.is_mutable = flags & 0x01;
  global.shared = flags & 0x02;
  return global;
}

// Skips a constant expression up to and including its `end`: the
// instructions constant expressions may use (extended-const and GC included).
void skip_const_expr(ModuleReader& r) {
  for (unsigned n = 0; n < 100000; ++n) {
    const uint8_t op = r.read_u8();
    switch (op) {
      case 0x0b: return;
      case 0x41: r.read_s32(); break;
      case 0x42: r.read_s64(); break;
      case 0x43: r.read_bytes(4, "a constant"); break;
      case 0x44: r.read_bytes(8, "a constant"); break;
      case 0x23: r.read_u32(); break;  // global.get
      case 0xd2: r.read_u32(); break;  // ref.func
      case 0xd0: read_heap_type(r); break;  // ref.null
      case 0x6a: case 0x6b: case 0x6c:  // i32.add/sub/mul
      case 0x7c: case 0x7d: case 0x7e:  // i64.add/sub/mul
        break;
      case 0xfd:
        if (r.read_u32() != 12) r.fail("unsupported vector instruction in a constant expression");
        r.read_bytes(16, "a constant");  // v128.const
        break;
      case 0xfb: {
        const uint32_t sub = r.read_u32();
        switch (sub) {
          case 0: case 1: case 6: case 7: r.read_u32(); break;  // struct.new(_default), array.new(_default)
          case 8: r.read_u32(); r.read_u32(); break;                   // array.new_fixed
          case 26: case 27: case 28: break;  // any.convert_extern, extern.convert_any, ref.i31
          default: r.fail("unsupported GC instruction in a constant expression");
        }
        break;
      }
      default: r.fail("unsupported instruction " + hex(op) + " in a constant expression");
    }
  }
  r.fail("constant expression too long");
}

std::string pair_name(const std::string& module, const std::string& name) {
  return module + ":" + name;
}

struct Scan {
  std::vector<ModuleType> types;
  std::vector<CoreFuncType> funcs;
  std::vector<binary::CoreTableType> tables;
  std::vector<binary::CoreMemoryType> memories;
  std::vector<binary::CoreGlobalType> globals;
  std::vector<CoreFuncType> tags;
  CoreModuleType result;

  const CoreFuncType& func_type(ModuleReader& r, uint32_t index) const {
    if (index >= types.size()) r.fail("unknown type " + std::to_string(index));
    if (!types[index].is_func) r.fail("type " + std::to_string(index) + " is not a function type");
    return types[index].func;
  }

  void read_types(ModuleReader& r) {
    for (uint32_t n = r.read_count("items"); n > 0; --n) {
      if (r.peek_u8() == 0x4e) {
        r.read_u8();
        for (uint32_t m = r.read_count("items"); m > 0; --m) types.push_back(read_sub_type(r));
      } else {
        types.push_back(read_sub_type(r));
      }
    }
  }

  void read_imports(ModuleReader& r) {
    for (uint32_t n = r.read_count("items"); n > 0; --n) {
      CoreModuleType::Import import;
      import.module = r.read_name("a name");
      import.name = r.read_name("a name");
      for (const auto& other : result.imports)
        if (other.module == import.module && other.name == import.name)
          r.fail("duplicate import name `" + pair_name(import.module, import.name) + "`");
      CoreExtern& type = import.type;
      const uint8_t kind = r.read_u8();
      switch (kind) {
        case 0x00:
          type.sort = binary::Sort::CoreFunc;
          type.func = func_type(r, r.read_u32());
          funcs.push_back(type.func);
          break;
        case 0x01:
          type.sort = binary::Sort::CoreTable;
          type.table = read_table_type(r);
          tables.push_back(type.table);
          break;
        case 0x02:
          type.sort = binary::Sort::CoreMemory;
          type.memory = read_memory_type(r);
          memories.push_back(type.memory);
          break;
        case 0x03:
          type.sort = binary::Sort::CoreGlobal;
          type.global = read_global_type(r);
          globals.push_back(type.global);
          break;
        case 0x04:
          if (r.read_u8() != 0) r.fail("bad tag attribute");
          type.sort = binary::Sort::CoreTag;
          type.func = func_type(r, r.read_u32());
          tags.push_back(type.func);
          break;
        default: r.fail("unknown import kind " + hex(kind));
      }
      if (auto why = core_limits_error(type)) r.fail(*why);
      result.imports.push_back(std::move(import));
    }
  }

  void read_exports(ModuleReader& r) {
    for (uint32_t n = r.read_count("items"); n > 0; --n) {
      CoreModuleType::Export exported;
      exported.name = r.read_name("a name");
      const uint8_t kind = r.read_u8();
      const uint32_t index = r.read_u32();
      auto check = [&](size_t size, const char* what) {
        if (index >= size) r.fail("export of unknown " + std::string(what) + " " + std::to_string(index));
      };
      CoreExtern& type = exported.type;
      switch (kind) {
        case 0x00:
          check(funcs.size(), "function");
          type.sort = binary::Sort::CoreFunc;
          type.func = funcs[index];
          break;
        case 0x01:
          check(tables.size(), "table");
          type.sort = binary::Sort::CoreTable;
          type.table = tables[index];
          break;
        case 0x02:
          check(memories.size(), "memory");
          type.sort = binary::Sort::CoreMemory;
          type.memory = memories[index];
          break;
        case 0x03:
          check(globals.size(), "global");
          type.sort = binary::Sort::CoreGlobal;
          type.global = globals[index];
          break;
        case 0x04:
          check(tags.size(), "tag");
          type.sort = binary::Sort::CoreTag;
          type.func = tags[index];
          break;
        default: r.fail("unknown export kind " + hex(kind));
      }
      for (const auto& other : result.exports)
        if (other.name == exported.name) r.fail("duplicate export `" + exported.name + "`");
      result.exports.push_back(std::move(exported));
    }
  }
};

}  // namespace

CoreModuleType scan_core_module(std::span<const uint8_t> bytes, binary::ByteRange range) {
  if (range.offset > bytes.size() || range.size > bytes.size() - range.offset || range.size < 8)
    fail(range.offset, "core module outside the component bytes");
  ModuleReader module(bytes, range.offset + 8, range.offset + range.size, "a core module",
                      ErrorKind::Validate);  // after the preamble
  Scan scan;
  while (!module.at_end()) {
    const uint8_t id = module.read_u8();
    const uint32_t size = module.read_u32();
    ModuleReader section = module.sub_reader(size, "a core module");
    switch (id) {
      case 1: scan.read_types(section); break;
      case 2: scan.read_imports(section); break;
      case 3:
        for (uint32_t n = section.read_count("items"); n > 0; --n)
          scan.funcs.push_back(scan.func_type(section, section.read_u32()));
        break;
      case 4:
        for (uint32_t n = section.read_count("items"); n > 0; --n) {
          const bool with_init = section.peek_u8() == 0x40;
          if (with_init) {
            section.read_u8();
            if (section.read_u8() != 0) section.fail("bad table encoding");
          }
          scan.tables.push_back(read_table_type(section));
          CoreExtern table;
          table.sort = binary::Sort::CoreTable;
          table.table = scan.tables.back();
          if (auto why = core_limits_error(table)) section.fail(*why);
          if (with_init) skip_const_expr(section);
        }
        break;
      case 5:
        for (uint32_t n = section.read_count("items"); n > 0; --n) {
          CoreExtern memory;
          memory.sort = binary::Sort::CoreMemory;
          memory.memory = read_memory_type(section);
          if (auto why = core_limits_error(memory)) section.fail(*why);
          scan.memories.push_back(memory.memory);
        }
        break;
      case 13:
        for (uint32_t n = section.read_count("items"); n > 0; --n) {
          if (section.read_u8() != 0) section.fail("bad tag attribute");
          scan.tags.push_back(scan.func_type(section, section.read_u32()));
        }
        break;
      case 6:
        for (uint32_t n = section.read_count("items"); n > 0; --n) {
          scan.globals.push_back(read_global_type(section));
          skip_const_expr(section);
        }
        break;
      case 7:
        scan.read_exports(section);
        if (!section.at_end()) section.fail("section has trailing bytes");
        // Nothing after the export section changes the module's interface.
        return std::move(scan.result);
      case 0: case 8: case 9: case 10: case 11: case 12:
        continue;  // custom, start, element, code, data, data count
      default: section.fail("unknown section id " + hex(id));
    }
    if (!section.at_end()) section.fail("section has trailing bytes");
  }
  return std::move(scan.result);
}

// ---- Core types ----

std::optional<std::string> core_limits_error(const CoreExtern& type) {
  const binary::CoreLimits* limits = nullptr;
  uint64_t most = 0;
  const char* what = "";
  if (type.sort == binary::Sort::CoreMemory) {
    limits = &type.memory.limits;
    const uint32_t page_log2 = type.memory.page_size_log2.value_or(16);
    if (page_log2 != 0 && page_log2 != 16) return "invalid custom page size";
    // At most the address space: 2^32 bytes, or 2^64 bytes for memory64 (as
    // core wasm: 2^48 pages of 64KiB, 2^64-1 pages of one byte).
    if (limits->is_64)
      most = page_log2 == 16 ? uint64_t{1} << 48 : ~uint64_t{0};
    else
      most = uint64_t{1} << (32 - page_log2);
    what = limits->is_64 ? "memory size must be at most 2^48 pages"
                         : "memory size must be at most 65536 pages (4GiB)";
  } else if (type.sort == binary::Sort::CoreTable) {
    limits = &type.table.limits;
    most = limits->is_64 ? ~uint64_t{0} : uint64_t{0xffffffff};
    what = "table size must be at most 2^32-1";
  } else {
    return std::nullopt;
  }
  if (limits->min > most || (limits->max && *limits->max > most)) return std::string(what);
  if (limits->max && *limits->max < limits->min)
    return std::string("size minimum must not be greater than maximum");
  return std::nullopt;
}

bool same_core_val_type(const CoreValType& a, const CoreValType& b) {
  if (a.index() != b.index()) return false;
  if (auto na = std::get_if<CoreNumType>(&a)) return *na == std::get<CoreNumType>(b);
  const auto& ra = std::get<binary::CoreRefType>(a);
  const auto& rb = std::get<binary::CoreRefType>(b);
  if (ra.nullable != rb.nullable || ra.heap.shared != rb.heap.shared) return false;
  // Concrete heap types index different type spaces (the module's, the
  // component's); without canonicalizing rec groups only their presence is
  // compared.
  if (ra.heap.type_index.has_value() != rb.heap.type_index.has_value()) return false;
  return ra.heap.type_index || ra.heap.abstract == rb.heap.abstract;
}

bool same_core_func_type(const CoreFuncType& a, const CoreFuncType& b) {
  auto same = [](const std::vector<CoreValType>& x, const std::vector<CoreValType>& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), same_core_val_type);
  };
  return same(a.params, b.params) && same(a.results, b.results);
}

std::string to_string(const CoreValType& type) {
  if (auto num = std::get_if<CoreNumType>(&type)) {
    switch (*num) {
      case CoreNumType::I32: return "i32";
      case CoreNumType::I64: return "i64";
      case CoreNumType::F32: return "f32";
      case CoreNumType::F64: return "f64";
      case CoreNumType::V128: return "v128";
    }
  }
  const auto& ref = std::get<binary::CoreRefType>(type);
  std::string heap;
  if (ref.heap.type_index) {
    heap = std::to_string(*ref.heap.type_index);
  } else {
    switch (ref.heap.abstract) {
      case binary::AbstractHeapType::Func: heap = "func"; break;
      case binary::AbstractHeapType::Extern: heap = "extern"; break;
      case binary::AbstractHeapType::Any: heap = "any"; break;
      case binary::AbstractHeapType::Eq: heap = "eq"; break;
      case binary::AbstractHeapType::I31: heap = "i31"; break;
      case binary::AbstractHeapType::Struct: heap = "struct"; break;
      case binary::AbstractHeapType::Array: heap = "array"; break;
      case binary::AbstractHeapType::Exn: heap = "exn"; break;
      case binary::AbstractHeapType::None: heap = "none"; break;
      case binary::AbstractHeapType::NoExtern: heap = "noextern"; break;
      case binary::AbstractHeapType::NoFunc: heap = "nofunc"; break;
      case binary::AbstractHeapType::NoExn: heap = "noexn"; break;
    }
    if (ref.nullable && !ref.heap.shared) return heap + "ref";
  }
  if (ref.heap.shared) heap = "(shared " + heap + ")";
  return std::string("(ref ") + (ref.nullable ? "null " : "") + heap + ")";
}

std::string to_string(const CoreFuncType& type) {
  std::string out = "(func";
  if (!type.params.empty()) {
    out += " (param";
    for (const auto& p : type.params) out += " " + to_string(p);
    out += ")";
  }
  if (!type.results.empty()) {
    out += " (result";
    for (const auto& p : type.results) out += " " + to_string(p);
    out += ")";
  }
  return out + ")";
}

namespace {

// Core limits subtyping: the actual range must lie within the expected one.
std::optional<std::string> limits_mismatch(const binary::CoreLimits& actual,
                                           const binary::CoreLimits& expected, const char* what) {
  if (actual.is_64 != expected.is_64)
    return std::string("mismatch in the address type of ") + what;
  if (actual.shared != expected.shared)
    return std::string("mismatch in the shared flag for ") + what;
  bool ok = actual.min >= expected.min;
  if (expected.max) ok = ok && actual.max && *actual.max <= *expected.max;
  if (!ok) return std::string("mismatch in ") + what + " limits";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> core_extern_mismatch(const CoreExtern& actual, const CoreExtern& expected) {
  if (actual.sort != expected.sort)
    return std::string("expected ") + sort_name(expected.sort) + ", found " + sort_name(actual.sort);
  switch (expected.sort) {
    case binary::Sort::CoreFunc:
    case binary::Sort::CoreTag:
      if (!same_core_func_type(actual.func, expected.func))
        return "expected " + to_string(expected.func) + ", found " + to_string(actual.func);
      return std::nullopt;
    case binary::Sort::CoreTable:
      if (!same_core_val_type(actual.table.element, expected.table.element))
        return "expected table element type " + to_string(expected.table.element) + ", found " +
               to_string(actual.table.element);
      return limits_mismatch(actual.table.limits, expected.table.limits, "tables");
    case binary::Sort::CoreMemory:
      if (actual.memory.page_size_log2.value_or(16) != expected.memory.page_size_log2.value_or(16))
        return "mismatch in the page size of memories";
      if (actual.memory.limits.shared != expected.memory.limits.shared)
        return "mismatch in the shared flag for memories";
      if (auto why = limits_mismatch(actual.memory.limits, expected.memory.limits, "memory"))
        return why;
      return std::nullopt;
    case binary::Sort::CoreGlobal:
      if (actual.global.is_mutable != expected.global.is_mutable ||
          actual.global.shared != expected.global.shared)
        return "global mutability or sharing mismatch";
      if (!same_core_val_type(actual.global.type, expected.global.type))
        return "expected global type " + to_string(expected.global.type) + ", found " +
               to_string(actual.global.type);
      return std::nullopt;
    default:
      return std::string("unexpected core sort ") + sort_name(expected.sort);
  }
}

std::optional<std::string> core_module_mismatch(const CoreModuleType& actual,
                                                const CoreModuleType& expected) {
  // Imports are contravariant: what the actual module imports, the expected
  // one must import too, with a type that satisfies it.
  for (const auto& want : actual.imports) {
    auto have = std::find_if(expected.imports.begin(), expected.imports.end(), [&](const auto& i) {
      return i.module == want.module && i.name == want.name;
    });
    if (have == expected.imports.end())
      return "missing expected import `" + want.module + "::" + want.name + "`";
    if (auto why = core_extern_mismatch(have->type, want.type))
      return "type mismatch in import `" + want.module + "::" + want.name + "`: " + *why;
  }
  for (const auto& want : expected.exports) {
    auto have = std::find_if(actual.exports.begin(), actual.exports.end(),
                             [&](const auto& e) { return e.name == want.name; });
    if (have == actual.exports.end()) return "missing expected export `" + want.name + "`";
    if (auto why = core_extern_mismatch(have->type, want.type))
      return "type mismatch in export `" + want.name + "`: " + *why;
  }
  return std::nullopt;
}

}  // namespace cmhost::validate::detail
