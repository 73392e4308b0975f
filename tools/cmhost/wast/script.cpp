#include "script.hpp"

#include <fmt/core.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "cmhost/error.hpp"
#include "lexer.hpp"

namespace cmhost::tools::wast {

using abi::TypeKind;

namespace {

[[noreturn]] void fail(const SExpr& at, const std::string& message) {
  throw Error(ErrorKind::Usage, fmt::format("line {}: {}", at.line, message));
}

const std::string& string_of(const SExpr& e, const char* what) {
  if (!e.is_string()) fail(e, fmt::format("expected {} as a string", what));
  if (!e.malformed.empty()) fail(e, e.malformed);
  return e.text;
}

std::string without_underscores(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '_') out += c;
  return out;
}

// An integer literal (decimal or 0x hex, `_` separators, optional sign) of
// `bits` width: unsigned types take 0..2^bits-1; signed ones also take
// negative numbers down to -2^(bits-1). Returns the two's complement bits.
uint64_t parse_integer(const SExpr& at, unsigned bits, bool is_signed, bool* negative) {
  if (!at.is_atom()) fail(at, "expected an integer");
  std::string text = without_underscores(at.text);
  bool minus = false;
  size_t i = 0;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    minus = text[0] == '-';
    i = 1;
  }
  unsigned base = 10;
  if (text.compare(i, 2, "0x") == 0 || text.compare(i, 2, "0X") == 0) {
    base = 16;
    i += 2;
  }
  if (i >= text.size()) fail(at, "`" + at.text + "` is not an integer");
  unsigned __int128 magnitude = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    unsigned digit;
    if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') digit = static_cast<unsigned>(c - 'A' + 10);
    else fail(at, "`" + at.text + "` is not an integer");
    magnitude = magnitude * base + digit;
    if (magnitude > (static_cast<unsigned __int128>(1) << 64)) fail(at, "`" + at.text + "` is out of range");
  }
  const unsigned __int128 limit = static_cast<unsigned __int128>(1) << bits;
  if (minus) {
    if (!is_signed && magnitude != 0) fail(at, "`" + at.text + "` is out of range for an unsigned type");
    if (magnitude > limit / 2) fail(at, "`" + at.text + "` is out of range");
  } else if (magnitude >= limit) {
    fail(at, "`" + at.text + "` is out of range");
  }
  *negative = minus;
  uint64_t value = static_cast<uint64_t>(magnitude);
  if (minus) value = ~value + 1;
  return bits == 64 ? value : value & ((uint64_t{1} << bits) - 1);
}

// A float literal: decimal or hex, `inf`, `nan`, `nan:0x<payload>`, and the
// patterns `nan:canonical` / `nan:arithmetic` (any NaN matches).
void parse_float(const SExpr& at, bool is64, Value& v) {
  if (!at.is_atom()) fail(at, "expected a float");
  std::string text = without_underscores(at.text);
  bool minus = false;
  std::string_view body = text;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    minus = body[0] == '-';
    body.remove_prefix(1);
  }
  const uint64_t sign = minus ? (is64 ? uint64_t{1} << 63 : uint64_t{1} << 31) : 0;
  const uint64_t exponent_mask = is64 ? 0x7FF0000000000000 : 0x7F800000;
  const uint64_t payload_mask = is64 ? 0x000FFFFFFFFFFFFF : 0x007FFFFF;
  if (body == "inf") {
    v.bits = sign | exponent_mask;
    return;
  }
  if (body == "nan" || body == "nan:canonical" || body == "nan:arithmetic") {
    v.bits = sign | exponent_mask | (is64 ? uint64_t{1} << 51 : uint64_t{1} << 22);
    v.any_nan = true;
    return;
  }
  if (body.starts_with("nan:0x")) {
    char* end = nullptr;
    const std::string digits(body.substr(6));
    const uint64_t payload = std::strtoull(digits.c_str(), &end, 16);
    if (digits.empty() || *end != '\0' || payload == 0 || payload > payload_mask)
      fail(at, "`" + at.text + "` is not a valid NaN payload");
    v.bits = sign | exponent_mask | payload;
    return;
  }
  if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body[0]))))
    fail(at, "`" + at.text + "` is not a float");
  errno = 0;
  char* end = nullptr;
  if (is64) {
    const double d = std::strtod(text.c_str(), &end);
    if (*end != '\0') fail(at, "`" + at.text + "` is not a float");
    if (std::isinf(d)) fail(at, "`" + at.text + "` is out of range");
    v.bits = std::bit_cast<uint64_t>(d);
  } else {
    const float f = std::strtof(text.c_str(), &end);
    if (*end != '\0') fail(at, "`" + at.text + "` is not a float");
    if (std::isinf(f)) fail(at, "`" + at.text + "` is out of range");
    v.bits = std::bit_cast<uint32_t>(f);
  }
}

uint32_t decode_single_char(const SExpr& at) {
  const std::string& s = string_of(at, "a character");
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t length = 0;
  uint32_t cp = 0;
  if (s.empty()) fail(at, "`char.const` needs one character");
  if (p[0] < 0x80) {
    cp = p[0];
    length = 1;
  } else if ((p[0] & 0xE0) == 0xC0) {
    cp = p[0] & 0x1F;
    length = 2;
  } else if ((p[0] & 0xF0) == 0xE0) {
    cp = p[0] & 0x0F;
    length = 3;
  } else {
    cp = p[0] & 0x07;
    length = 4;
  }
  if (s.size() != length) fail(at, "`char.const` needs exactly one character");
  for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (p[i] & 0x3F);
  return cp;
}

struct ScalarKeyword {
  const char* keyword;
  TypeKind kind;
};
constexpr ScalarKeyword kIntegerKeywords[] = {
    {"u8.const", TypeKind::U8},   {"s8.const", TypeKind::S8},   {"u16.const", TypeKind::U16},
    {"s16.const", TypeKind::S16}, {"u32.const", TypeKind::U32}, {"s32.const", TypeKind::S32},
    {"u64.const", TypeKind::U64}, {"s64.const", TypeKind::S64},
};

unsigned integer_bits(TypeKind kind) {
  switch (kind) {
    case TypeKind::U8:
    case TypeKind::S8: return 8;
    case TypeKind::U16:
    case TypeKind::S16: return 16;
    case TypeKind::U32:
    case TypeKind::S32: return 32;
    default: return 64;
  }
}

// `assert_return`, `component`, `component definition`, `component instance`.
std::string keyword_of(const SExpr& form) {
  if (!form.is_list() || form.items.empty() || !form.items[0].is_atom()) return "?";
  std::string keyword = form.items[0].text;
  if (keyword == "component" && form.items.size() > 1 &&
      (form.items[1].is_atom("definition") || form.items[1].is_atom("instance")))
    keyword += " " + form.items[1].text;
  return keyword;
}

class Parser {
 public:
  explicit Parser(std::string_view source) : src_(source) {}

  std::string text_of(const SExpr& e) const { return std::string(src_.substr(e.begin, e.end - e.begin)); }
  std::string text_of(const std::vector<SExpr>& items, size_t from) const {
    if (from >= items.size()) return "";
    return std::string(src_.substr(items[from].begin, items.back().end - items[from].begin));
  }

  Command command(const SExpr& form) {
    Command c;
    c.line = form.line;
    c.keyword = keyword_of(form);
    try {
      parse_command(form, c);
    } catch (const Error& e) {
      Command bad;
      bad.line = form.line;
      bad.keyword = c.keyword;
      bad.kind = CommandKind::Unsupported;
      bad.message = std::string("cannot parse the command: ") + e.what();
      return bad;
    }
    return c;
  }

  Value value(const SExpr& e) {
    if (!e.is_list() || e.items.empty()) fail(e, "expected a value such as `(u32.const 1)`");
    Value v = value_body(e.items, 0, e);
    v.source = text_of(e);
    return v;
  }

 private:
  void parse_command(const SExpr& form, Command& c) {
    if (!form.is_list() || form.items.empty() || !form.items[0].is_atom())
      fail(form, "expected a command such as `(component ...)` or `(assert_return ...)`");
    const std::string& head = form.items[0].text;
    const auto& items = form.items;
    if (head == "component") {
      component_form(form, c);
    } else if (head == "register") {
      c.kind = CommandKind::Register;
      if (items.size() < 2) fail(form, "`register` needs a name");
      c.name = string_of(items[1], "the registered name");
      if (items.size() > 2) {
        if (!items[2].is_id()) fail(items[2], "expected an instance `$id`");
        c.definition = items[2].text;
      }
    } else if (head == "invoke") {
      c.kind = CommandKind::Invoke;
      c.invoke = invoke(form);
    } else if (head == "assert_return") {
      c.kind = CommandKind::AssertReturn;
      if (items.size() < 2 || !items[1].is_form("invoke")) fail(form, "`assert_return` needs an `(invoke ...)`");
      c.invoke = invoke(items[1]);
      for (size_t i = 2; i < items.size(); ++i) c.expected.push_back(value(items[i]));
    } else if (head == "assert_trap" || head == "assert_exhaustion") {
      c.kind = head == "assert_trap" ? CommandKind::AssertTrap : CommandKind::AssertExhaustion;
      if (items.size() != 3) fail(form, "`" + head + "` needs a subject and a message");
      if (items[1].is_form("invoke")) {
        c.invoke = invoke(items[1]);
      } else if (items[1].is_form("component") && c.kind == CommandKind::AssertTrap) {
        auto subject = std::make_shared<Command>();
        subject->line = items[1].line;
        component_form(items[1], *subject);
        if (subject->kind == CommandKind::ComponentDefinition)
          fail(items[1], "`assert_trap` of a definition: nothing is instantiated");
        c.subject = std::move(subject);
      } else {
        fail(items[1], "expected `(invoke ...)` or a component");
      }
      c.message = string_of(items[2], "the expected message");
    } else if (head == "assert_invalid" || head == "assert_malformed" || head == "assert_unlinkable") {
      c.kind = head == "assert_invalid"     ? CommandKind::AssertInvalid
               : head == "assert_malformed" ? CommandKind::AssertMalformed
                                            : CommandKind::AssertUnlinkable;
      if (items.size() != 3 || !items[1].is_form("component"))
        fail(form, "`" + head + "` needs a component and a message");
      Command subject;
      component_form(items[1], subject);
      if (subject.kind == CommandKind::ComponentInstance) fail(items[1], "expected a component, not an instance");
      c.component = std::move(subject.component);
      c.message = string_of(items[2], "the expected message");
    } else if (head == "module") {
      c.kind = CommandKind::Unsupported;
      c.message = "core modules at the script's top level are not supported";
    } else {
      c.kind = CommandKind::Unsupported;
      c.message = "unknown command `" + head + "`";
    }
  }

  // (component [definition|instance] [$id] ...): text, `binary` or `quote`.
  void component_form(const SExpr& form, Command& c) {
    const auto& items = form.items;
    size_t i = 1;
    const SExpr* definition_keyword = nullptr;
    c.kind = CommandKind::Component;
    if (i < items.size() && items[i].is_atom("definition")) {
      definition_keyword = &items[i];
      c.kind = CommandKind::ComponentDefinition;
      ++i;
    } else if (i < items.size() && items[i].is_atom("instance")) {
      c.kind = CommandKind::ComponentInstance;
      ++i;
      if (i < items.size() && items[i].is_id()) c.name = items[i++].text;
      if (i < items.size() && items[i].is_id()) c.definition = items[i++].text;
      if (i != items.size()) fail(form, "expected `(component instance $instance $definition)`");
      return;
    }
    if (i < items.size() && items[i].is_id()) c.name = items[i++].text;
    ComponentSource source;
    if (i < items.size() && (items[i].is_atom("binary") || items[i].is_atom("quote"))) {
      const bool binary = items[i].is_atom("binary");
      source.form = binary ? ComponentSource::Form::Binary : ComponentSource::Form::Quote;
      std::string joined;
      for (size_t j = i + 1; j < items.size(); ++j) {
        const std::string& s = string_of(items[j], binary ? "binary bytes" : "quoted text");
        if (binary) {
          source.bytes.insert(source.bytes.end(), s.begin(), s.end());
        } else {
          joined += ' ';
          joined += s;
        }
      }
      if (!binary) source.text = "(component" + joined + ")";
    } else {
      // The text as written; only the script's `definition` keyword goes.
      source.form = ComponentSource::Form::Text;
      if (definition_keyword) {
        source.text = std::string(src_.substr(form.begin, definition_keyword->begin - form.begin)) +
                      std::string(src_.substr(definition_keyword->end, form.end - definition_keyword->end));
      } else {
        source.text = text_of(form);
      }
    }
    c.component = std::move(source);
  }

  Invoke invoke(const SExpr& form) {
    Invoke inv;
    const auto& items = form.items;
    size_t i = 1;
    if (i < items.size() && items[i].is_id()) inv.instance = items[i++].text;
    if (i >= items.size()) fail(form, "`invoke` needs a function name");
    inv.name = string_of(items[i++], "the function name");
    for (; i < items.size(); ++i) inv.args.push_back(value(items[i]));
    return inv;
  }

  // A value whose keyword is items[at]; its operands follow it in `items`.
  Value value_body(const std::vector<SExpr>& items, size_t at, const SExpr& whole) {
    if (at >= items.size() || !items[at].is_atom()) fail(whole, "expected a value keyword such as `u32.const`");
    const std::string& kw = items[at].text;
    const size_t first = at + 1;
    const size_t operands = items.size() - first;
    Value v;
    v.source = text_of(items, at);
    auto expect_operands = [&](size_t n) {
      if (operands != n) fail(whole, fmt::format("`{}` takes {} operand{}", kw, n, n == 1 ? "" : "s"));
    };
    for (const auto& k : kIntegerKeywords) {
      if (kw == k.keyword) {
        expect_operands(1);
        v.kind = k.kind;
        const bool is_signed = kw[0] == 's';
        v.bits = parse_integer(items[first], integer_bits(k.kind), is_signed, &v.negative);
        return v;
      }
    }
    if (kw == "bool.const") {
      expect_operands(1);
      v.kind = TypeKind::Bool;
      if (items[first].is_atom("true")) v.bits = 1;
      else if (items[first].is_atom("false")) v.bits = 0;
      else fail(items[first], "expected `true` or `false`");
    } else if (kw == "f32.const" || kw == "float32.const" || kw == "f64.const" || kw == "float64.const") {
      expect_operands(1);
      const bool is64 = kw[1] == '6' || kw.starts_with("float64");
      v.kind = is64 ? TypeKind::F64 : TypeKind::F32;
      parse_float(items[first], is64, v);
    } else if (kw == "char.const") {
      expect_operands(1);
      v.kind = TypeKind::Char;
      v.bits = decode_single_char(items[first]);
    } else if (kw == "str.const") {
      expect_operands(1);
      v.kind = TypeKind::String;
      v.text = string_of(items[first], "the string");
    } else if (kw == "list.const" || kw == "tuple.const") {
      v.kind = kw == "list.const" ? TypeKind::List : TypeKind::Tuple;
      for (size_t i = first; i < items.size(); ++i) v.items.push_back(value(items[i]));
    } else if (kw == "record.const") {
      v.kind = TypeKind::Record;
      for (size_t i = first; i < items.size(); ++i) {
        const SExpr& field = items[i];
        if (!field.is_form("field") || field.items.size() < 3)
          fail(field, "expected `(field \"name\" <value>)`");
        v.labels.push_back(string_of(field.items[1], "the field name"));
        v.items.push_back(payload(field.items, 2, field));
      }
    } else if (kw == "variant.const") {
      if (operands < 1 || operands > 2) fail(whole, "`variant.const` takes a case name and an optional payload");
      v.kind = TypeKind::Variant;
      v.text = string_of(items[first], "the case name");
      if (operands == 2) v.items.push_back(payload(items, first + 1, whole));
    } else if (kw == "enum.const") {
      expect_operands(1);
      v.kind = TypeKind::Enum;
      v.text = string_of(items[first], "the case name");
    } else if (kw == "flags.const") {
      v.kind = TypeKind::Flags;
      for (size_t i = first; i < items.size(); ++i) v.labels.push_back(string_of(items[i], "a flag name"));
    } else if (kw == "option.none") {
      expect_operands(0);
      v.kind = TypeKind::Option;
    } else if (kw == "option.some") {
      if (operands == 0) fail(whole, "`option.some` needs a payload");
      v.kind = TypeKind::Option;
      v.case_index = 1;
      v.items.push_back(payload(items, first, whole));
    } else if (kw == "result.ok" || kw == "result.err") {
      v.kind = TypeKind::Result;
      v.case_index = kw == "result.ok" ? 0 : 1;
      if (operands > 0) v.items.push_back(payload(items, first, whole));
    } else {
      fail(items[at], "unknown value `" + kw + "`");
    }
    return v;
  }

  // A payload: `(u32.const 1)`, or written inline as `u32.const 1`.
  Value payload(const std::vector<SExpr>& items, size_t at, const SExpr& whole) {
    if (items[at].is_list()) {
      if (at + 1 != items.size()) fail(whole, "expected one value");
      return value(items[at]);
    }
    return value_body(items, at, whole);
  }

  std::string_view src_;
};

}  // namespace

std::vector<Command> parse_script(std::string_view source) {
  const auto forms = read_sexprs(source);
  Parser parser(source);
  std::vector<Command> commands;
  commands.reserve(forms.size());
  for (const auto& form : forms) commands.push_back(parser.command(form));
  return commands;
}

Value parse_value_text(std::string_view text) {
  const auto forms = read_sexprs(text);
  if (forms.size() != 1) throw Error(ErrorKind::Usage, "expected one value");
  return Parser(text).value(forms[0]);
}

}  // namespace cmhost::tools::wast
