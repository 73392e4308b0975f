// The component: preamble, sections and the definitions that are not types
// or canons (those live in types.cpp, core_types.cpp and canon.cpp).
#include <memory>
#include <string>

#include "cmhost/error.hpp"
#include "decode.hpp"

namespace cmhost::binary {
namespace detail {
namespace {

constexpr uint8_t kMagic[4] = {0x00, 0x61, 0x73, 0x6d};
constexpr size_t kPreambleSize = 8;

// Reads the 8-byte preamble and says what the input is when it is not a
// component of the supported version.
void read_preamble(Reader& r) {
  const size_t start = r.position();
  const auto input = r.input();
  for (size_t i = 0; i < 4 && i < r.remaining(); ++i) {
    if (input[start + i] != kMagic[i])
      r.fail_at(start, "bad magic number: not a WebAssembly binary");
  }
  if (r.remaining() < kPreambleSize) {
    r.fail_at(start, "unexpected end of data in the preamble (" + std::to_string(r.remaining()) +
                         " of 8 bytes)");
  }
  const uint16_t version = uint16_t(input[start + 4] | (input[start + 5] << 8));
  const uint16_t layer = uint16_t(input[start + 6] | (input[start + 7] << 8));
  if (layer == 0) {
    r.fail_at(start + 6, "this is a core WebAssembly module (layer 0), not a component");
  }
  if (layer != 1) {
    r.fail_at(start + 6, "unknown layer " + hex(layer) + " (a component has layer 0x01 0x00)");
  }
  if (version != 0x0d) {
    r.fail_at(start + 4, "unsupported component binary version " + hex(version) +
                             " (this decoder reads version 0x0d)");
  }
  r.read_bytes(kPreambleSize, "the preamble");
}

Sort read_core_sort(Reader& r) {
  const uint8_t byte = r.read_u8();
  switch (byte) {
    case 0x00: return Sort::CoreFunc;
    case 0x01: return Sort::CoreTable;
    case 0x02: return Sort::CoreMemory;
    case 0x03: return Sort::CoreGlobal;
    case 0x04: return Sort::CoreTag;
    case 0x10: return Sort::CoreType;
    case 0x11: return Sort::CoreModule;
    case 0x12: return Sort::CoreInstance;
    default: r.fail_unknown("core sort", byte);
  }
}

SortIndex read_core_sort_index(Reader& r) {
  SortIndex target;
  target.sort = read_core_sort(r);
  target.index = r.read_u32();
  return target;
}

CoreInstantiateArg read_core_instantiate_arg(Reader& r) {
  CoreInstantiateArg arg;
  arg.name = r.read_name("argument name");
  r.expect_byte(0x12, "core instantiation argument sort (only instance)");
  arg.instance = r.read_u32();
  return arg;
}

CoreInlineExport read_core_inline_export(Reader& r) {
  CoreInlineExport exported;
  exported.name = r.read_name("export name");
  exported.target = read_core_sort_index(r);
  return exported;
}

CoreInstance read_core_instance(Reader& r) {
  const uint8_t kind = r.read_u8();
  if (kind == 0x00) {
    CoreInstantiate instantiate;
    instantiate.module = r.read_u32();
    instantiate.args = read_vec(r, "instantiation arguments", read_core_instantiate_arg);
    return CoreInstance{std::move(instantiate)};
  }
  if (kind == 0x01)
    return CoreInstance{CoreInlineExports{read_vec(r, "inline exports", read_core_inline_export)}};
  r.fail_unknown("core instance expression", kind);
}

InstantiateArg read_instantiate_arg(Reader& r) {
  InstantiateArg arg;
  arg.name = r.read_name("argument name");
  arg.target = read_sort_index(r);
  return arg;
}

InlineExport read_inline_export(Reader& r) {
  InlineExport exported;
  exported.name = read_name_attributes(r);
  exported.target = read_sort_index(r);
  return exported;
}

Instance read_instance(Reader& r) {
  const uint8_t kind = r.read_u8();
  if (kind == 0x00) {
    Instantiate instantiate;
    instantiate.component = r.read_u32();
    instantiate.args = read_vec(r, "instantiation arguments", read_instantiate_arg);
    return Instance{std::move(instantiate)};
  }
  if (kind == 0x01)
    return Instance{InlineExports{read_vec(r, "inline exports", read_inline_export)}};
  r.fail_unknown("instance expression", kind);
}

CoreModule read_core_module(Reader& section) {
  const size_t start = section.position();
  const auto input = section.input();
  if (section.remaining() < kPreambleSize) {
    section.fail_at(start, "a core module needs at least its 8-byte preamble, the section has " +
                               std::to_string(section.remaining()) + " bytes");
  }
  for (size_t i = 0; i < 4; ++i) {
    if (input[start + i] != kMagic[i]) section.fail_at(start, "bad magic number for a core module");
  }
  const uint8_t* version = input.data() + start + 4;
  if (version[2] == 0x01 && version[3] == 0x00) {
    section.fail_at(start + 4, "expected a core module but found a component (layer 1)");
  }
  if (version[0] != 0x01 || version[1] != 0x00 || version[2] != 0x00 || version[3] != 0x00) {
    section.fail_at(start + 4, "unsupported core module version (expected 0x01 0x00 0x00 0x00)");
  }
  // The body is the core engine's to decode.
  return CoreModule{section.read_bytes(section.remaining(), "the core module")};
}

Start read_start(Reader& r) {
  Start start;
  start.func = r.read_u32();
  start.args = read_vec(r, "start arguments", [](Reader& rr) { return rr.read_u32(); });
  start.result_count = r.read_u32();
  return start;
}

Import read_import(Reader& r) {
  Import import;
  import.name = read_name_attributes(r);
  import.type = read_extern_type(r);
  return import;
}

Export read_export(Reader& r) {
  Export exported;
  exported.name = read_name_attributes(r);
  exported.target = read_sort_index(r);
  if (r.read_flag("ascribed export type presence")) exported.type = read_extern_type(r);
  return exported;
}

Value read_value(Reader& r) {
  Value value;
  value.type = read_val_type(r);
  const uint32_t length = r.read_u32();
  value.bytes = r.read_bytes(length, "a value");
  return value;
}

const char* section_name(uint8_t id) {
  static const char* const names[] = {
      "custom section", "core module section", "core instance section", "core type section",
      "component section", "instance section", "alias section", "type section",
      "canon section", "start section", "import section", "export section", "value section",
  };
  return id < std::size(names) ? names[id] : "unknown section";
}

// Sections holding vec(item): every item becomes one definition.
template <typename Read>
void read_items(Reader& section, Component& component, const char* what, Read read) {
  const uint32_t count = section.read_count(what);
  for (uint32_t i = 0; i < count; ++i) {
    Definition definition;
    definition.offset = section.position();
    definition.item = read(section);
    component.definitions.push_back(std::move(definition));
  }
}

void read_custom_section(Reader& section, Component& component) {
  Definition definition;
  definition.offset = section.position();
  CustomSection custom;
  custom.name = section.read_name("custom section name");
  custom.data = section.read_bytes(section.remaining(), "custom section data");
  if (custom.name == "component-name") {
    Reader payload(section.input(), custom.data.offset, custom.data.offset + custom.data.size,
                   "component-name section");
    if (auto names = read_name_section(payload)) component.names = std::move(*names);
  }
  definition.item = std::move(custom);
  component.definitions.push_back(std::move(definition));
}

void read_section(Reader& r, Component& component) {
  const size_t start = r.position();
  const uint8_t id = r.read_u8();
  if (id > 12) r.fail_at(start, "unknown section id " + hex(id));
  const size_t size_offset = r.position();
  const uint32_t size = r.read_u32();
  if (size > r.remaining()) {
    r.fail_at(size_offset, std::string(section_name(id)) + " size " + std::to_string(size) +
                               " exceeds the " + std::to_string(r.remaining()) +
                               " remaining bytes");
  }
  Reader section = r.sub_reader(size, section_name(id));
  switch (id) {
    case 0:
      read_custom_section(section, component);
      break;
    case 1: {
      Definition definition{section.position(), read_core_module(section)};
      component.definitions.push_back(std::move(definition));
      break;
    }
    case 2: read_items(section, component, "core instances", read_core_instance); break;
    case 3: read_items(section, component, "core types", read_core_type); break;
    case 4: {
      Reader::NestingGuard guard(section);
      Definition definition;
      definition.offset = section.position();
      definition.item = std::make_shared<const Component>(read_component(section));
      component.definitions.push_back(std::move(definition));
      break;
    }
    case 5: read_items(section, component, "instances", read_instance); break;
    case 6: read_items(section, component, "aliases", read_alias); break;
    case 7: read_items(section, component, "types", read_type); break;
    case 8: read_items(section, component, "canonical definitions", read_canon); break;
    case 9: {
      Definition definition{section.position(), read_start(section)};
      component.definitions.push_back(std::move(definition));
      break;
    }
    case 10: read_items(section, component, "imports", read_import); break;
    case 11: read_items(section, component, "exports", read_export); break;
    case 12: read_items(section, component, "values", read_value); break;
  }
  section.expect_end();
}

NameAttribute read_name_attribute(Reader& r) {
  NameAttribute attribute;
  const uint8_t kind = r.read_u8();
  switch (kind) {
    case 0x00: attribute.kind = NameAttributeKind::Implements; break;
    case 0x01: attribute.kind = NameAttributeKind::VersionSuffix; break;
    case 0x02: attribute.kind = NameAttributeKind::ExternalId; break;
    default: r.fail_unknown("name attribute", kind);
  }
  attribute.value = r.read_name("name attribute value");
  return attribute;
}

}  // namespace

Component read_component(Reader& r) {
  Component component;
  component.bytes = ByteRange{r.position(), r.remaining()};
  read_preamble(r);
  while (!r.at_end()) read_section(r, component);
  return component;
}

Sort read_sort(Reader& r) {
  const uint8_t byte = r.read_u8();
  switch (byte) {
    case 0x00: return read_core_sort(r);
    case 0x01: return Sort::Func;
    case 0x02: return Sort::Value;
    case 0x03: return Sort::Type;
    case 0x04: return Sort::Component;
    case 0x05: return Sort::Instance;
    default: r.fail_unknown("sort", byte);
  }
}

SortIndex read_sort_index(Reader& r) {
  SortIndex target;
  target.sort = read_sort(r);
  target.index = r.read_u32();
  return target;
}

// nameattributes: 0x00 and 0x01 are the same plain form, 0x02 adds attributes.
ExternName read_name_attributes(Reader& r) {
  ExternName name;
  const uint8_t form = r.read_u8();
  if (form > 0x02) r.fail_unknown("name form", form);
  name.name = r.read_name("import/export name");
  if (form == 0x02) name.attributes = read_vec(r, "name attributes", read_name_attribute);
  return name;
}

Alias read_alias(Reader& r) {
  Alias alias;
  const size_t start = r.position();
  alias.sort = read_sort(r);
  const uint8_t target = r.read_u8();
  switch (target) {
    case 0x00: {
      AliasExport exported;
      exported.instance = r.read_u32();
      exported.name = r.read_name("export name");
      alias.target = std::move(exported);
      break;
    }
    case 0x01: {
      if (!is_core(alias.sort)) {
        r.fail_at(start,
                  std::string("core export alias of non-core sort ") + to_string(alias.sort));
      }
      AliasCoreExport exported;
      exported.instance = r.read_u32();
      exported.name = r.read_name("export name");
      alias.target = std::move(exported);
      break;
    }
    case 0x02: {
      const Sort s = alias.sort;
      if (s != Sort::CoreModule && s != Sort::CoreType && s != Sort::Type && s != Sort::Component) {
        r.fail_at(start, std::string("outer alias of sort ") + to_string(s) +
                             " (only core module, core type, type and component)");
      }
      AliasOuter outer;
      outer.count = r.read_u32();
      outer.index = r.read_u32();
      alias.target = outer;
      break;
    }
    default:
      r.fail_unknown("alias target", target);
  }
  return alias;
}

}  // namespace detail

Component decode_component(std::span<const uint8_t> bytes) {
  detail::Reader reader(bytes, 0, bytes.size(), "component");
  return detail::read_component(reader);
}

}  // namespace cmhost::binary
