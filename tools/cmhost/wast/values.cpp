#include "values.hpp"

#include <fmt/core.h>

#include <bit>
#include <cmath>

#include "cmhost/error.hpp"

namespace cmhost::tools::wast {

using abi::Type;
using abi::TypeKind;
using abi::Val;

namespace {

[[noreturn]] void misfit(const Value& v, const Type& type, const std::string& why = "") {
  throw Error(ErrorKind::Usage, fmt::format("`{}` is not a value of type `{}`{}{}", v.source, type.to_wit(),
                                            why.empty() ? "" : ": ", why));
}

// Lists in the script also denote fixed-length lists and maps.
void check_kind(const Value& v, const Type& type) {
  const TypeKind t = type.kind();
  if (v.kind == t) return;
  if (v.kind == TypeKind::List && (t == TypeKind::FixedList || t == TypeKind::Map)) return;
  misfit(v, type);
}

uint32_t case_named(const Value& v, const Type& type) {
  const auto cases = type.cases();
  for (uint32_t i = 0; i < cases.size(); ++i)
    if (cases[i].name == v.text) return i;
  misfit(v, type, "no case `" + v.text + "`");
}

uint32_t flags_mask(const Value& v, const Type& type) {
  uint32_t mask = 0;
  const auto labels = type.labels();
  for (const auto& label : v.labels) {
    uint32_t i = 0;
    while (i < labels.size() && labels[i] != label) ++i;
    if (i == labels.size()) misfit(v, type, "no flag `" + label + "`");
    if (i >= 32) misfit(v, type, "more than 32 flags");
    mask |= uint32_t{1} << i;
  }
  return mask;
}

// The script's record fields in the type's order: each expected field once.
std::vector<const Value*> record_fields(const Value& v, const Type& type) {
  const auto fields = type.fields();
  std::vector<const Value*> out(fields.size(), nullptr);
  if (v.kind == TypeKind::Tuple) {
    if (v.items.size() != fields.size())
      misfit(v, type, fmt::format("{} elements for {}", v.items.size(), fields.size()));
    for (size_t i = 0; i < fields.size(); ++i) out[i] = &v.items[i];
    return out;
  }
  for (size_t j = 0; j < v.labels.size(); ++j) {
    size_t i = 0;
    while (i < fields.size() && fields[i].name != v.labels[j]) ++i;
    if (i == fields.size()) misfit(v, type, "no field `" + v.labels[j] + "`");
    if (out[i]) misfit(v, type, "field `" + v.labels[j] + "` given twice");
    out[i] = &v.items[j];
  }
  for (size_t i = 0; i < fields.size(); ++i)
    if (!out[i]) misfit(v, type, "field `" + fields[i].name + "` missing");
  return out;
}

// The payload of a variant-like value against its case's payload type.
const Value* case_payload(const Value& v, const Type& type, uint32_t case_index) {
  const auto& payload_type = type.cases()[case_index].type;
  const Value* payload = v.items.empty() ? nullptr : &v.items[0];
  if (payload_type && !payload) misfit(v, type, "the case needs a payload");
  if (!payload_type && payload) misfit(v, type, "the case has no payload");
  return payload;
}

uint32_t variant_case(const Value& v, const Type& type) {
  if (v.kind == TypeKind::Variant) return case_named(v, type);
  return v.case_index;  // option: none 0, some 1; result: ok 0, err 1
}

uint64_t width_mask(TypeKind kind) {
  switch (kind) {
    case TypeKind::S8:
    case TypeKind::U8: return 0xFF;
    case TypeKind::S16:
    case TypeKind::U16: return 0xFFFF;
    case TypeKind::S32:
    case TypeKind::U32:
    case TypeKind::F32:
    case TypeKind::Char: return 0xFFFFFFFF;
    case TypeKind::Bool: return 1;
    default: return ~uint64_t{0};
  }
}

bool is_nan_bits(TypeKind kind, uint64_t bits) {
  if (kind == TypeKind::F32) return std::isnan(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  return std::isnan(std::bit_cast<double>(bits));
}

}  // namespace

Val to_val(const Value& v, const Type& type) {
  check_kind(v, type);
  switch (type.kind()) {
    case TypeKind::Bool: return Val::bool_(v.bits != 0);
    case TypeKind::S8: return Val::s8(static_cast<int8_t>(v.bits));
    case TypeKind::U8: return Val::u8(static_cast<uint8_t>(v.bits));
    case TypeKind::S16: return Val::s16(static_cast<int16_t>(v.bits));
    case TypeKind::U16: return Val::u16(static_cast<uint16_t>(v.bits));
    case TypeKind::S32: return Val::s32(static_cast<int32_t>(v.bits));
    case TypeKind::U32: return Val::u32(static_cast<uint32_t>(v.bits));
    case TypeKind::S64: return Val::s64(static_cast<int64_t>(v.bits));
    case TypeKind::U64: return Val::u64(v.bits);
    case TypeKind::F32: return Val::f32(std::bit_cast<float>(static_cast<uint32_t>(v.bits)));
    case TypeKind::F64: return Val::f64(std::bit_cast<double>(v.bits));
    case TypeKind::Char: return Val::char_(static_cast<char32_t>(v.bits));
    case TypeKind::String: return Val::string(v.text);
    case TypeKind::List:
    case TypeKind::FixedList:
    case TypeKind::Map: {
      if (type.kind() == TypeKind::FixedList && v.items.size() != type.fixed_length())
        misfit(v, type, fmt::format("{} elements for {}", v.items.size(), type.fixed_length()));
      std::vector<Val> elements;
      elements.reserve(v.items.size());
      for (const auto& item : v.items) elements.push_back(to_val(item, *type.element()));
      return type.kind() == TypeKind::Map ? Val::map(std::move(elements)) : Val::list(std::move(elements));
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      std::vector<Val> fields;
      const auto ordered = record_fields(v, type);
      for (size_t i = 0; i < ordered.size(); ++i) fields.push_back(to_val(*ordered[i], *type.fields()[i].type));
      return type.kind() == TypeKind::Record ? Val::record(std::move(fields)) : Val::tuple(std::move(fields));
    }
    case TypeKind::Variant:
    case TypeKind::Option:
    case TypeKind::Result: {
      const uint32_t index = variant_case(v, type);
      const Value* payload = case_payload(v, type, index);
      std::optional<Val> lowered;
      if (payload) lowered = to_val(*payload, *type.cases()[index].type);
      if (type.kind() == TypeKind::Variant) return Val::variant(index, std::move(lowered));
      if (type.kind() == TypeKind::Option) return index == 0 ? Val::none() : Val::some(std::move(*lowered));
      return index == 0 ? Val::ok(std::move(lowered)) : Val::err(std::move(lowered));
    }
    case TypeKind::Enum: {
      const auto labels = type.labels();
      for (uint32_t i = 0; i < labels.size(); ++i)
        if (labels[i] == v.text) return Val::enum_(i);
      misfit(v, type, "no case `" + v.text + "`");
    }
    case TypeKind::Flags: return Val::flags(flags_mask(v, type));
    default: misfit(v, type, "the script has no syntax for such values");
  }
}

bool matches(const Value& expected, const Type& type, const Val& actual) {
  check_kind(expected, type);
  const TypeKind kind = type.kind();
  switch (kind) {
    case TypeKind::Bool:
    case TypeKind::S8:
    case TypeKind::U8:
    case TypeKind::S16:
    case TypeKind::U16:
    case TypeKind::S32:
    case TypeKind::U32:
    case TypeKind::S64:
    case TypeKind::U64:
    case TypeKind::Char: {
      const uint64_t mask = width_mask(kind);
      return (actual.scalar_bits() & mask) == (expected.bits & mask);
    }
    case TypeKind::F32:
    case TypeKind::F64: {
      const uint64_t bits = actual.scalar_bits() & width_mask(kind);
      if (expected.any_nan) return is_nan_bits(kind, bits);
      return bits == expected.bits;
    }
    case TypeKind::String: return actual.as_string() == expected.text;
    case TypeKind::List:
    case TypeKind::FixedList:
    case TypeKind::Map: {
      if (actual.list_size() != expected.items.size()) return false;
      for (size_t i = 0; i < expected.items.size(); ++i)
        if (!matches(expected.items[i], *type.element(), actual.list_element(i))) return false;
      return true;
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      const auto ordered = record_fields(expected, type);
      const auto items = actual.items();
      if (items.size() != ordered.size()) return false;
      for (size_t i = 0; i < ordered.size(); ++i)
        if (!matches(*ordered[i], *type.fields()[i].type, items[i])) return false;
      return true;
    }
    case TypeKind::Variant:
    case TypeKind::Option:
    case TypeKind::Result: {
      const uint32_t index = variant_case(expected, type);
      const Value* payload = case_payload(expected, type, index);
      if (actual.case_index() != index) return false;
      if (!payload) return true;
      const Val* actual_payload = actual.payload();
      return actual_payload && matches(*payload, *type.cases()[index].type, *actual_payload);
    }
    case TypeKind::Enum: {
      const auto labels = type.labels();
      for (uint32_t i = 0; i < labels.size(); ++i)
        if (labels[i] == expected.text) return actual.case_index() == i;
      misfit(expected, type, "no case `" + expected.text + "`");
    }
    case TypeKind::Flags: return actual.as_flags() == flags_mask(expected, type);
    default: misfit(expected, type, "the script has no syntax for such values");
  }
}

}  // namespace cmhost::tools::wast
