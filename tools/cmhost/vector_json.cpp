#include "vector_json.hpp"

#include <bit>
#include <charconv>

#include "support/unicode.hpp"

namespace cmhost::tools {

using abi::Type;
using abi::TypeKind;
using abi::TypeRef;
using abi::Val;
using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& what, const json& j) {
  throw Error(ErrorKind::Usage, "vector JSON: " + what + ": " + j.dump().substr(0, 200));
}

TypeRef optional_type(const json& j) { return j.is_null() ? nullptr : type_from_json(j); }

std::vector<std::string> strings(const json& j) {
  std::vector<std::string> out;
  for (const auto& s : j) out.push_back(s.get<std::string>());
  return out;
}

template <typename T>
T parse_decimal(const std::string& s) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) throw Error(ErrorKind::Usage, "bad integer " + s);
  return v;
}

uint64_t parse_hex_bits(const json& j) {
  const auto s = j.at("bits").get<std::string>();
  if (s.size() < 3 || s[0] != '0' || s[1] != 'x') bad("float bits", j);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) bad("float bits", j);
  return v;
}

std::string hex_bits(uint64_t v, int digits) {
  static const char* d = "0123456789abcdef";
  std::string out = "0x";
  for (int i = digits - 1; i >= 0; --i) out += d[(v >> (4 * i)) & 0xF];
  return out;
}

uint32_t case_index(const Type& t, const std::string& name) {
  for (size_t i = 0; i < t.cases().size(); ++i)
    if (t.cases()[i].name == name) return static_cast<uint32_t>(i);
  throw Error(ErrorKind::Usage, "vector JSON: no case " + name + " in " + t.to_wit());
}

// The element is a number that a real host keeps packed.
bool packable(const Type& t) { return abi::scalar_size(t.kind()) != 0; }

}  // namespace

TypeRef type_from_json(const json& j) {
  if (j.is_string()) {
    static const std::pair<const char*, TypeKind> prims[] = {
        {"bool", TypeKind::Bool}, {"s8", TypeKind::S8},     {"u8", TypeKind::U8},
        {"s16", TypeKind::S16},   {"u16", TypeKind::U16},   {"s32", TypeKind::S32},
        {"u32", TypeKind::U32},   {"s64", TypeKind::S64},   {"u64", TypeKind::U64},
        {"f32", TypeKind::F32},   {"f64", TypeKind::F64},   {"char", TypeKind::Char},
        {"string", TypeKind::String}};
    for (auto& [name, kind] : prims)
      if (j == name) return Type::primitive(kind);
    bad("unknown type", j);
  }
  if (!j.is_object()) bad("type", j);
  if (j.contains("list")) {
    if (j.contains("len")) return Type::fixed_list(type_from_json(j["list"]), j["len"].get<uint32_t>());
    return Type::list(type_from_json(j["list"]));
  }
  if (j.contains("record")) {
    std::vector<abi::Field> fields;
    for (const auto& f : j["record"]) fields.push_back({f[0].get<std::string>(), type_from_json(f[1])});
    return Type::record(std::move(fields));
  }
  if (j.contains("tuple")) {
    std::vector<TypeRef> ts;
    for (const auto& t : j["tuple"]) ts.push_back(type_from_json(t));
    return Type::tuple(std::move(ts));
  }
  if (j.contains("variant")) {
    std::vector<abi::Case> cases;
    for (const auto& c : j["variant"]) cases.push_back({c[0].get<std::string>(), optional_type(c[1])});
    return Type::variant(std::move(cases));
  }
  if (j.contains("enum")) return Type::enum_(strings(j["enum"]));
  if (j.contains("option")) return Type::option(type_from_json(j["option"]));
  if (j.contains("result"))
    return Type::result(optional_type(j["result"].at("ok")), optional_type(j["result"].at("err")));
  if (j.contains("flags")) return Type::flags(strings(j["flags"]));
  if (j.contains("map")) return Type::map(type_from_json(j["map"][0]), type_from_json(j["map"][1]));
  bad("unknown type", j);
}

Val val_from_json(const Type& t, const json& j) {
  switch (t.kind()) {
    case TypeKind::Bool: return Val::bool_(j.get<bool>());
    case TypeKind::S8: return Val::s8(j.get<int8_t>());
    case TypeKind::U8: return Val::u8(j.get<uint8_t>());
    case TypeKind::S16: return Val::s16(j.get<int16_t>());
    case TypeKind::U16: return Val::u16(j.get<uint16_t>());
    case TypeKind::S32: return Val::s32(j.get<int32_t>());
    case TypeKind::U32: return Val::u32(j.get<uint32_t>());
    case TypeKind::S64: return Val::s64(parse_decimal<int64_t>(j.get<std::string>()));
    case TypeKind::U64: return Val::u64(parse_decimal<uint64_t>(j.get<std::string>()));
    case TypeKind::F32:
      return Val::f32(std::bit_cast<float>(static_cast<uint32_t>(parse_hex_bits(j))));
    case TypeKind::F64: return Val::f64(std::bit_cast<double>(parse_hex_bits(j)));
    case TypeKind::Char: {
      const auto s = j.get<std::string>();
      size_t at = 0;
      if (s.empty() || !support::is_valid_utf8(reinterpret_cast<const uint8_t*>(s.data()), s.size()))
        bad("char", j);
      const uint32_t c = support::next_code_point(reinterpret_cast<const unsigned char*>(s.data()), at);
      if (at != s.size()) bad("char of more than one code point", j);
      return Val::char_(c);
    }
    case TypeKind::String: return Val::string(j.get<std::string>());
    case TypeKind::List:
    case TypeKind::FixedList: {
      const Type& e = *t.element();
      if (packable(e)) {
        std::vector<uint8_t> bytes;
        const uint32_t es = abi::scalar_size(e.kind());
        for (const auto& x : j) {
          const uint64_t bits = val_from_json(e, x).scalar_bits();
          for (uint32_t b = 0; b < es; ++b) bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
        }
        return Val::packed_list(e.kind(), bytes.data(), j.size());
      }
      std::vector<Val> items;
      for (const auto& x : j) items.push_back(val_from_json(e, x));
      return Val::list(std::move(items));
    }
    case TypeKind::Map: {
      std::vector<Val> entries;
      for (const auto& kv : j) entries.push_back(val_from_json(*t.element(), kv));
      return Val::map(std::move(entries));
    }
    case TypeKind::Record: {
      std::vector<Val> fields;
      for (const auto& f : t.fields()) fields.push_back(val_from_json(*f.type, j.at(f.name)));
      return Val::record(std::move(fields));
    }
    case TypeKind::Tuple: {
      std::vector<Val> items;
      for (size_t i = 0; i < t.fields().size(); ++i) items.push_back(val_from_json(*t.fields()[i].type, j.at(i)));
      return Val::tuple(std::move(items));
    }
    case TypeKind::Variant:
    case TypeKind::Enum:
    case TypeKind::Option:
    case TypeKind::Result: {
      const uint32_t index = case_index(t, j.at("case").get<std::string>());
      std::vector<Val> payload;
      if (const auto& ct = t.cases()[index].type) payload.push_back(val_from_json(*ct, j.at("value")));
      return Val::compound(t.kind(), index, std::move(payload));
    }
    case TypeKind::Flags: {
      uint32_t mask = 0;
      for (const auto& l : j) {
        const auto name = l.get<std::string>();
        size_t i = 0;
        while (i < t.labels().size() && t.labels()[i] != name) ++i;
        if (i == t.labels().size()) bad("unknown flag", l);
        mask |= 1u << i;
      }
      return Val::flags(mask);
    }
    default: bad("values of this type do not occur in vectors", j);
  }
}

json val_to_json(const Type& t, const Val& v, bool canon) {
  switch (t.kind()) {
    case TypeKind::Bool: return v.as_bool();
    case TypeKind::S8: return v.as_s8();
    case TypeKind::U8: return v.as_u8();
    case TypeKind::S16: return v.as_s16();
    case TypeKind::U16: return v.as_u16();
    case TypeKind::S32: return v.as_s32();
    case TypeKind::U32: return v.as_u32();
    case TypeKind::S64: return std::to_string(v.as_s64());
    case TypeKind::U64: return std::to_string(v.as_u64());
    case TypeKind::F32: {
      auto bits = static_cast<uint32_t>(v.scalar_bits());
      if (canon && (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu)) bits = 0x7fc00000u;
      return json{{"bits", hex_bits(bits, 8)}};
    }
    case TypeKind::F64: {
      uint64_t bits = v.scalar_bits();
      if (canon && (bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
          (bits & 0xfffffffffffffull))
        bits = 0x7ff8000000000000ull;
      return json{{"bits", hex_bits(bits, 16)}};
    }
    case TypeKind::Char: {
      std::string s;
      support::append_utf8(s, v.as_char());
      return s;
    }
    case TypeKind::String: return std::string(v.as_string());
    case TypeKind::List:
    case TypeKind::FixedList:
    case TypeKind::Map: {
      json out = json::array();
      for (size_t i = 0; i < v.list_size(); ++i) out.push_back(val_to_json(*t.element(), v.list_element(i), canon));
      return out;
    }
    case TypeKind::Record: {
      json out = json::object();
      for (size_t i = 0; i < t.fields().size(); ++i)
        out[t.fields()[i].name] = val_to_json(*t.fields()[i].type, v.items()[i], canon);
      return out;
    }
    case TypeKind::Tuple: {
      json out = json::array();
      for (size_t i = 0; i < t.fields().size(); ++i) out.push_back(val_to_json(*t.fields()[i].type, v.items()[i], canon));
      return out;
    }
    case TypeKind::Variant:
    case TypeKind::Enum:
    case TypeKind::Option:
    case TypeKind::Result: {
      const auto& c = t.cases()[v.case_index()];
      json out{{"case", c.name}};
      if (c.type) out["value"] = val_to_json(*c.type, *v.payload(), canon);
      return out;
    }
    case TypeKind::Flags: {
      json out = json::array();
      for (size_t i = 0; i < t.labels().size(); ++i)
        if (v.as_flags() & (1u << i)) out.push_back(t.labels()[i]);
      return out;
    }
    default: return nullptr;
  }
}

abi::StringEncoding encoding_from_json(const json& j) {
  const auto s = j.get<std::string>();
  if (s == "utf8") return abi::StringEncoding::Utf8;
  if (s == "utf16") return abi::StringEncoding::Utf16;
  if (s == "latin1+utf16") return abi::StringEncoding::Latin1Utf16;
  bad("string encoding", j);
}

abi::AddrWidth width_from_json(const json& j) {
  if (j == "i32") return abi::AddrWidth::I32;
  if (j == "i64") return abi::AddrWidth::I64;
  bad("address type", j);
}

std::vector<uint8_t> bytes_from_hex(const std::string& hex) {
  if (hex.size() % 2) throw Error(ErrorKind::Usage, "odd-length hex memory");
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + 2 * i + 2) throw Error(ErrorKind::Usage, "bad hex memory");
    out[i] = static_cast<uint8_t>(v);
  }
  return out;
}

std::string hex_of(const uint8_t* data, size_t size) {
  static const char* d = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += d[data[i] >> 4];
    out += d[data[i] & 0xF];
  }
  return out;
}

std::string first_difference(const json& expected, const json& actual, const std::string& path) {
  if (expected == actual) return {};
  if (expected.type() == actual.type()) {
    if (expected.is_array()) {
      if (expected.size() != actual.size())
        return path + ": expected " + std::to_string(expected.size()) + " elements, got " +
               std::to_string(actual.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        auto d = first_difference(expected[i], actual[i], path + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
      }
    } else if (expected.is_object()) {
      for (auto it = expected.begin(); it != expected.end(); ++it) {
        if (!actual.contains(it.key())) return path + "." + it.key() + ": missing";
        auto d = first_difference(it.value(), actual[it.key()], path + "." + it.key());
        if (!d.empty()) return d;
      }
      for (auto it = actual.begin(); it != actual.end(); ++it)
        if (!expected.contains(it.key())) return path + "." + it.key() + ": unexpected";
    }
  }
  return path + ": expected " + expected.dump().substr(0, 160) + ", got " + actual.dump().substr(0, 160);
}

}  // namespace cmhost::tools
