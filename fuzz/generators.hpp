// Random component value types and values drawn from a fuzzer's input,
// shared by the targets that need them.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::fuzzing {

using namespace cmhost::abi;

constexpr int kMaxDepth = 4;

inline TypeRef gen_type(FuzzedDataProvider& in, int depth);

inline std::vector<TypeRef> gen_types(FuzzedDataProvider& in, int depth, size_t min) {
  std::vector<TypeRef> out(in.ConsumeIntegralInRange<size_t>(min, 4));
  for (auto& t : out) t = gen_type(in, depth + 1);
  return out;
}

inline std::vector<std::string> labels(FuzzedDataProvider& in, size_t max) {
  std::vector<std::string> out(in.ConsumeIntegralInRange<size_t>(1, max));
  for (size_t i = 0; i < out.size(); ++i) out[i] = "l" + std::to_string(i);
  return out;
}

inline TypeRef gen_type(FuzzedDataProvider& in, int depth) {
  const int leaves = 13;
  const int kind = in.ConsumeIntegralInRange<int>(0, depth >= kMaxDepth ? leaves - 1 : leaves + 10);
  switch (kind) {
    case 0: return Type::bool_();
    case 1: return Type::s8();
    case 2: return Type::u8();
    case 3: return Type::s16();
    case 4: return Type::u16();
    case 5: return Type::s32();
    case 6: return Type::u32();
    case 7: return Type::s64();
    case 8: return Type::u64();
    case 9: return Type::f32();
    case 10: return Type::f64();
    case 11: return Type::char_();
    case 12: return Type::string();
    case 13: return Type::list(gen_type(in, depth + 1));
    case 14: {
      std::vector<Field> fields;
      for (auto& t : gen_types(in, depth, 1)) fields.push_back({"f" + std::to_string(fields.size()), t});
      return Type::record(std::move(fields));
    }
    case 15: return Type::tuple(gen_types(in, depth, 1));
    case 16: {
      std::vector<Case> cases;
      for (auto& t : gen_types(in, depth, 1))
        cases.push_back({"c" + std::to_string(cases.size()), in.ConsumeBool() ? t : nullptr});
      return Type::variant(std::move(cases));
    }
    case 17: return Type::option(gen_type(in, depth + 1));
    case 18:
      return Type::result(in.ConsumeBool() ? gen_type(in, depth + 1) : nullptr,
                          in.ConsumeBool() ? gen_type(in, depth + 1) : nullptr);
    case 19: return Type::flags(labels(in, 32));
    case 20: return Type::enum_(labels(in, 300));
    case 21: return Type::fixed_list(gen_type(in, depth + 1), in.ConsumeIntegralInRange<uint32_t>(1, 4));
    case 22: return Type::map(in.ConsumeBool() ? Type::string() : Type::u32(), gen_type(in, depth + 1));
    default: return Type::list(Type::u8());
  }
}

// Appends code point c (not a surrogate) as UTF-8.
inline void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// Text of code points drawn from ASCII, Latin-1, the BMP and beyond (so
// every encoding and latin1+utf16's both forms are exercised).
inline std::string gen_text(FuzzedDataProvider& in) {
  std::string out;
  const size_t n = in.ConsumeIntegralInRange<size_t>(0, 12);
  for (size_t i = 0; i < n; ++i) {
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: append_utf8(out, in.ConsumeIntegralInRange<uint32_t>(0, 0x7f)); break;
      case 1: append_utf8(out, in.ConsumeIntegralInRange<uint32_t>(0x80, 0xff)); break;
      case 2: append_utf8(out, in.ConsumeIntegralInRange<uint32_t>(0x100, 0xd7ff)); break;
      default: append_utf8(out, in.ConsumeIntegralInRange<uint32_t>(0x10000, 0x10ffff)); break;
    }
  }
  return out;
}

inline Val gen_val(FuzzedDataProvider& in, const Type& t) {
  switch (t.kind()) {
    case TypeKind::Bool: return Val::bool_(in.ConsumeBool());
    case TypeKind::S8: return Val::s8(in.ConsumeIntegral<int8_t>());
    case TypeKind::U8: return Val::u8(in.ConsumeIntegral<uint8_t>());
    case TypeKind::S16: return Val::s16(in.ConsumeIntegral<int16_t>());
    case TypeKind::U16: return Val::u16(in.ConsumeIntegral<uint16_t>());
    case TypeKind::S32: return Val::s32(in.ConsumeIntegral<int32_t>());
    case TypeKind::U32: return Val::u32(in.ConsumeIntegral<uint32_t>());
    case TypeKind::S64: return Val::s64(in.ConsumeIntegral<int64_t>());
    case TypeKind::U64: return Val::u64(in.ConsumeIntegral<uint64_t>());
    case TypeKind::F32: return Val::from_bits(ValKind::F32, in.ConsumeIntegral<uint32_t>());
    case TypeKind::F64: return Val::from_bits(ValKind::F64, in.ConsumeIntegral<uint64_t>());
    case TypeKind::Char: {
      uint32_t c = in.ConsumeIntegralInRange<uint32_t>(0, 0x10ffff - 0x800);
      if (c >= 0xd800) c += 0x800;  // no surrogates
      return Val::char_(c);
    }
    case TypeKind::String: return Val::string(gen_text(in));
    case TypeKind::List: {
      std::vector<Val> items(in.ConsumeIntegralInRange<size_t>(0, 5));
      for (auto& v : items) v = gen_val(in, *t.element());
      return Val::list(std::move(items));
    }
    case TypeKind::FixedList: {
      std::vector<Val> items(t.fixed_length());
      for (auto& v : items) v = gen_val(in, *t.element());
      return Val::list(std::move(items));
    }
    case TypeKind::Record:
    case TypeKind::Tuple: {
      std::vector<Val> items;
      for (const auto& f : t.fields()) items.push_back(gen_val(in, *f.type));
      return t.kind() == TypeKind::Record ? Val::record(std::move(items)) : Val::tuple(std::move(items));
    }
    case TypeKind::Variant: {
      const auto i = in.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(t.cases().size() - 1));
      const TypeRef& payload = t.cases()[i].type;
      return payload ? Val::variant(i, gen_val(in, *payload)) : Val::variant(i);
    }
    case TypeKind::Enum:
      return Val::enum_(in.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(t.labels().size() - 1)));
    case TypeKind::Option: return in.ConsumeBool() ? Val::some(gen_val(in, *t.cases()[1].type)) : Val::none();
    case TypeKind::Result: {
      const bool ok = in.ConsumeBool();
      const TypeRef& payload = t.cases()[ok ? 0 : 1].type;
      std::optional<Val> p;
      if (payload) p = gen_val(in, *payload);
      return ok ? Val::ok(std::move(p)) : Val::err(std::move(p));
    }
    case TypeKind::Flags: {
      const size_t n = t.labels().size();
      const uint32_t mask = n >= 32 ? ~uint32_t{0} : (uint32_t{1} << n) - 1;
      return Val::flags(in.ConsumeIntegral<uint32_t>() & mask);
    }
    case TypeKind::Map: {
      std::vector<Val> entries(in.ConsumeIntegralInRange<size_t>(0, 3));
      const auto entry = t.element()->fields();  // (key, value)
      for (auto& e : entries) e = Val::tuple({gen_val(in, *entry[0].type), gen_val(in, *entry[1].type)});
      return Val::map(std::move(entries));
    }
    default: std::abort();  // gen_type makes no other kind
  }
}

}  // namespace cmhost::fuzzing
