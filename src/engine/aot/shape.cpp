#include "shape.hpp"

#include <sstream>

#include "cmhost/error.hpp"

namespace cmhost::engine::aot {

namespace {

// Names are arbitrary bytes: written as hex behind an 'h', so none is empty.
std::string encode_name(const std::string& name) {
  static const char digits[] = "0123456789abcdef";
  std::string out = "h";
  for (unsigned char c : name) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

[[noreturn]] void malformed(const std::string& what) {
  throw Error(ErrorKind::Usage, "artifact module description is malformed: " + what);
}

std::string decode_name(const std::string& token) {
  if (token.empty() || token[0] != 'h' || token.size() % 2 == 0) malformed("name `" + token + "`");
  const auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    malformed("name `" + token + "`");
  };
  std::string out;
  for (size_t i = 1; i + 1 < token.size(); i += 2) out += static_cast<char>(nibble(token[i]) * 16 + nibble(token[i + 1]));
  return out;
}

std::string letters_or_dash(const std::string& letters) { return letters.empty() ? "-" : letters; }

void write_extern(std::ostream& out, const ShapeExtern& e) {
  out << e.kind;
  switch (e.kind) {
    case 'f':
    case 'x': out << ' ' << e.type_index; break;
    case 'm':
      out << ' ' << e.min << ' ' << (e.max ? std::to_string(*e.max) : "-") << ' ' << (e.shared ? 1 : 0);
      break;
    case 't': out << ' ' << e.value << ' ' << e.min << ' ' << (e.max ? std::to_string(*e.max) : "-"); break;
    case 'g': out << ' ' << e.value << ' ' << (e.mutable_global ? 1 : 0); break;
    default: malformed(std::string("extern kind ") + e.kind);
  }
}

std::string next(std::istringstream& in) {
  std::string token;
  if (!(in >> token)) malformed("a line ends early");
  return token;
}

uint64_t number(std::istringstream& in) {
  const std::string token = next(in);
  try {
    size_t used = 0;
    const uint64_t value = std::stoull(token, &used);
    if (used != token.size()) malformed("number `" + token + "`");
    return value;
  } catch (const std::logic_error&) {
    malformed("number `" + token + "`");
  }
}

ShapeExtern read_extern(std::istringstream& in) {
  ShapeExtern e;
  const std::string kind = next(in);
  if (kind.size() != 1) malformed("extern kind `" + kind + "`");
  e.kind = kind[0];
  const auto max = [&]() -> std::optional<uint64_t> {
    const std::string token = next(in);
    if (token == "-") return std::nullopt;
    std::istringstream one(token);
    return number(one);
  };
  switch (e.kind) {
    case 'f':
    case 'x': e.type_index = static_cast<uint32_t>(number(in)); break;
    case 'm':
      e.min = number(in);
      e.max = max();
      e.shared = number(in) != 0;
      break;
    case 't':
      e.value = next(in)[0];
      e.min = number(in);
      e.max = max();
      break;
    case 'g':
      e.value = next(in)[0];
      e.mutable_global = number(in) != 0;
      break;
    default: malformed("extern kind `" + kind + "`");
  }
  return e;
}

}  // namespace

std::string ModuleShape::serialize() const {
  std::ostringstream out;
  for (const ShapeFuncType& t : types) out << "t " << letters_or_dash(t.params) << ' ' << letters_or_dash(t.results) << '\n';
  for (const ShapeImport& i : imports) {
    out << "i " << encode_name(i.module) << ' ' << encode_name(i.name) << ' ';
    write_extern(out, i.type);
    out << '\n';
  }
  for (const ShapeExport& e : exports) {
    out << "e " << encode_name(e.name) << ' ';
    write_extern(out, e.type);
    out << '\n';
  }
  for (const ShapeExtern& d : definitions) {
    out << "d ";
    write_extern(out, d);
    out << '\n';
  }
  return out.str();
}

ModuleShape ModuleShape::parse(std::string_view text) {
  ModuleShape shape;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::istringstream in(line);
    const std::string tag = next(in);
    if (tag == "t") {
      ShapeFuncType t;
      t.params = next(in);
      t.results = next(in);
      if (t.params == "-") t.params.clear();
      if (t.results == "-") t.results.clear();
      shape.types.push_back(std::move(t));
    } else if (tag == "i") {
      ShapeImport i;
      i.module = decode_name(next(in));
      i.name = decode_name(next(in));
      i.type = read_extern(in);
      shape.imports.push_back(std::move(i));
    } else if (tag == "e") {
      ShapeExport e;
      e.name = decode_name(next(in));
      e.type = read_extern(in);
      shape.exports.push_back(std::move(e));
    } else if (tag == "d") {
      shape.definitions.push_back(read_extern(in));
    } else {
      malformed("line `" + line + "`");
    }
  }
  for (const ShapeImport& i : shape.imports)
    if ((i.type.kind == 'f' || i.type.kind == 'x') && i.type.type_index >= shape.types.size())
      malformed("type index out of range");
  for (const ShapeExport& e : shape.exports)
    if ((e.type.kind == 'f' || e.type.kind == 'x') && e.type.type_index >= shape.types.size())
      malformed("type index out of range");
  return shape;
}

}  // namespace cmhost::engine::aot
