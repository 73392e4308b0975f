// WAVE parsing: the syntax of the wasm-wave crate's lexer and parser (lex.rs,
// parser.rs, ast.rs, strings.rs in bytecodealliance/wasm-tools). Where the
// crate is looser than its own grammar (wave_ebnf.md), this parser follows
// the grammar; see the notes in Parser.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "cmhost/error.hpp"
#include "cmhost/wave.hpp"
#include "support/unicode.hpp"
#include "lex.hpp"
#include "syntax.hpp"

namespace cmhost {
namespace {

using namespace wave_text;

// Type-directed recursive descent over the token stream.
//
// Where the crate accepts more than its grammar (wave_ebnf.md) says, this
// parser keeps to the grammar: record fields and flags must be separated by
// commas (the crate lets `{a: 1 b: 2}` through), and a field name the record
// type does not have is an error (the crate ignores it). Beyond the crate,
// `%`-prefixed flags are accepted as its README promises, fixed-length lists
// are read in list syntax (the crate cannot read them), and maps are read as
// lists of key-value tuples, the form they are printed in.
class Parser {
 public:
  explicit Parser(std::string_view text) : source_(text), lexer_(source_) {
    if (const auto bad = find_invalid_utf8(text)) source_.fail(*bad, "the text is not valid UTF-8");
  }

  Val parse_value(const Type& type) {
    Val result = value(type);
    const Token& rest = lexer_.peek();
    if (!rest.is(TokenKind::End)) fail(rest, "unexpected " + rest.describe() + " after the value");
    return result;
  }

  std::vector<Val> parse_args(std::span<const TypeRef> types) {
    for (size_t i = 0; i < types.size(); ++i)
      if (!types[i]) throw_invalid_value("parameter " + std::to_string(i + 1) + " has no type");
    std::vector<Val> args;
    args.reserve(types.size());
    if (!lexer_.peek().is(TokenKind::End)) {
      for (;;) {
        if (args.size() == types.size())
          fail(lexer_.peek(),
               "too many arguments; the function takes " + std::to_string(types.size()));
        args.push_back(value(*types[args.size()]));
        const Token separator = lexer_.next();
        if (separator.is(TokenKind::End)) break;
        if (!separator.is(TokenKind::Comma))
          expected("`,` or end of input after argument " + std::to_string(args.size()), separator);
        if (lexer_.peek().is(TokenKind::End)) break;  // trailing comma
      }
    }
    // As in the crate, trailing option arguments may be left out; unlike the
    // crate, also when no argument at all is given (its `f()` wants them all).
    for (size_t i = args.size(); i < types.size(); ++i) {
      if (types[i]->kind() != TypeKind::Option)
        source_.fail(source_.text().size(), "missing argument " + std::to_string(i + 1) +
                                                " of type " + types[i]->to_wit());
      args.push_back(Val::none());
    }
    return args;
  }

 private:
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    source_.fail(at.begin, message);
  }

  [[noreturn]] void expected(const std::string& what, const Token& found) const {
    fail(found, "expected " + what + ", found " + found.describe());
  }

  Token expect(TokenKind kind, const std::string& context) {
    Token token = lexer_.next();
    if (!token.is(kind)) expected(std::string(spelling(kind)) + " " + context, token);
    return token;
  }

  // After an element of a bracketed sequence: true when another element
  // follows, false when `close` (after an optional trailing comma) ended it.
  bool another_element(TokenKind close, const char* sequence) {
    const Token separator = lexer_.next();
    if (separator.is(close)) return false;
    if (!separator.is(TokenKind::Comma))
      expected(std::string("`,` or ") + spelling(close) + " in " + sequence, separator);
    if (lexer_.peek().is(close)) {
      lexer_.next();
      return false;
    }
    return true;
  }

  // One value: a node of the syntax tree, counted against the nesting limit.
  Val value(const Type& type) {
    if (depth_ >= kMaxNesting)
      source_.fail(lexer_.next_offset(),
                   "values are nested more than " + std::to_string(kMaxNesting) + " deep");
    ++depth_;
    Val result = node(type);
    --depth_;
    return result;
  }

  // A value of `type`. A bare option or result payload is the same node as
  // its option or result, so it is read with node() directly.
  Val node(const Type& type) {
    switch (type.kind()) {
      case TypeKind::Bool: return boolean();
      case TypeKind::S8: return Val::s8(integer<int8_t>(type));
      case TypeKind::U8: return Val::u8(integer<uint8_t>(type));
      case TypeKind::S16: return Val::s16(integer<int16_t>(type));
      case TypeKind::U16: return Val::u16(integer<uint16_t>(type));
      case TypeKind::S32: return Val::s32(integer<int32_t>(type));
      case TypeKind::U32: return Val::u32(integer<uint32_t>(type));
      case TypeKind::S64: return Val::s64(integer<int64_t>(type));
      case TypeKind::U64: return Val::u64(integer<uint64_t>(type));
      case TypeKind::F32: return Val::f32(floating<float>(type));
      case TypeKind::F64: return Val::f64(floating<double>(type));
      case TypeKind::Char: {
        const Token token = lexer_.next();
        if (!token.is(TokenKind::Char)) expected("a char such as 'x'", token);
        return Val::char_(token.character);
      }
      case TypeKind::String: {
        Token token = lexer_.next();
        if (!token.is(TokenKind::String)) expected("a string such as \"text\"", token);
        return Val::string(std::move(token.string));
      }
      case TypeKind::List:
      case TypeKind::FixedList:
      case TypeKind::Map: return list(type);
      case TypeKind::Record: return record(type);
      case TypeKind::Tuple: return tuple(type);
      case TypeKind::Variant: return variant(type);
      case TypeKind::Enum: return enumeration(type);
      case TypeKind::Option: return option(type);
      case TypeKind::Result: return result(type);
      case TypeKind::Flags: return flags(type);
      case TypeKind::Own:
      case TypeKind::Borrow:
      case TypeKind::Stream:
      case TypeKind::Future:
      case TypeKind::ErrorContext: break;
    }
    source_.fail(lexer_.next_offset(),
                 "a value of type " + type.to_wit() +
                     " cannot be written in WAVE (it has no syntax for handles, streams, futures "
                     "or error contexts)");
  }

  Val boolean() {
    const Token token = lexer_.next();
    if (token.is_keyword("true")) return Val::bool_(true);
    if (token.is_keyword("false")) return Val::bool_(false);
    expected("`true` or `false`", token);
  }

  // Decimal digits with an optional `-` (signed types only), as Rust's
  // integer parsing takes them; no fraction or exponent.
  template <typename Int>
  Int integer(const Type& type) {
    const Token token = lexer_.next();
    const std::string range = std::to_string(std::numeric_limits<Int>::min()) + " to " +
                              std::to_string(std::numeric_limits<Int>::max());
    const std::string what = "an integer from " + range;
    if (!token.is(TokenKind::Number)) expected(what, token);
    const std::string_view text = token.text;
    if (text.find_first_of(".eEi") != std::string_view::npos ||
        (std::is_unsigned_v<Int> && text.front() == '-'))
      expected(what, token);
    Int v{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error == std::errc::result_out_of_range)
      fail(token, token.describe() + " is out of range for " + type.to_wit() + " (" + range + ")");
    if (error != std::errc{} || end != text.data() + text.size()) expected(what, token);
    return v;
  }

  // A decimal number (rounded to the type; too large becomes infinity, too
  // small zero, as Rust's parsing does), `inf`, `-inf` or `nan`.
  template <typename Float>
  Float floating(const Type& type) {
    constexpr Float kInfinity = std::numeric_limits<Float>::infinity();
    const Token token = lexer_.next();
    // The canonical NaN the crate produces: positive, quiet, no payload.
    if (token.is_keyword("nan")) return std::numeric_limits<Float>::quiet_NaN();
    if (token.is_keyword("inf")) return kInfinity;
    if (!token.is(TokenKind::Number))
      expected("a number, `inf`, `-inf` or `nan` for " + type.to_wit(), token);
    const std::string_view text = token.text;
    if (text == "-inf") return -kInfinity;
    Float v{};
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error == std::errc::result_out_of_range) {
      const Float magnitude = magnitude_at_least_one(text) ? kInfinity : Float{0};
      return text.front() == '-' ? -magnitude : magnitude;
    }
    if (error != std::errc{} || end != text.data() + text.size())
      expected("a number for " + type.to_wit(), token);
    return v;
  }

  // `[a, b, ...]`. Lists of numbers are built packed.
  Val list(const Type& type) {
    const Type& element = *type.element();
    const Token open = expect(TokenKind::BracketOpen, "to start a " + type.to_wit());
    std::vector<Val> items;
    std::vector<uint8_t> packed;
    const uint32_t packed_size = abi::scalar_size(element.kind());
    size_t count = 0;
    if (lexer_.peek().is(TokenKind::BracketClose)) {
      lexer_.next();
    } else {
      do {
        Val item = value(element);
        ++count;
        if (packed_size) {
          const uint64_t bits = item.scalar_bits();
          for (uint32_t byte = 0; byte < packed_size; ++byte)
            packed.push_back(static_cast<uint8_t>(bits >> (8 * byte)));
        } else {
          items.push_back(std::move(item));
        }
      } while (another_element(TokenKind::BracketClose, "a list"));
    }
    if (type.kind() == TypeKind::FixedList && count != type.fixed_length())
      fail(open, "expected " + std::to_string(type.fixed_length()) + " elements for " +
                     type.to_wit() + ", found " + std::to_string(count));
    if (packed_size) return Val::packed_list(element.kind(), packed.data(), count);
    if (type.kind() == TypeKind::Map) return Val::map(std::move(items));
    return Val::list(std::move(items));
  }

  // `{name: value, ...}` with fields in any order; option fields may be left
  // out (they are `none`), and `{:}` leaves out every field.
  Val record(const Type& type) {
    const auto fields = type.fields();
    const Token open = expect(TokenKind::BraceOpen, "to start a record");
    std::vector<std::optional<Val>> values(fields.size());
    if (lexer_.peek().is(TokenKind::Colon)) {
      lexer_.next();
      expect(TokenKind::BraceClose, "after `{:`");
    } else if (lexer_.peek().is(TokenKind::BraceClose)) {
      fail(lexer_.peek(),
           "`{}` is an empty flags value; a record with every field left out is `{:}`");
    } else {
      do {
        const Token name = lexer_.next();
        if (!name.is(TokenKind::Label)) expected("a field name", name);
        const auto field = std::find_if(fields.begin(), fields.end(), [&](const abi::Field& f) {
          return f.name == name.label();
        });
        if (field == fields.end())
          fail(name, "the record has no field `" + std::string(name.label()) + "`");
        std::optional<Val>& slot = values[static_cast<size_t>(field - fields.begin())];
        if (slot) fail(name, "duplicate field `" + field->name + "`");
        expect(TokenKind::Colon, "after the field name");
        slot = value(*field->type);
      } while (another_element(TokenKind::BraceClose, "a record"));
    }
    std::vector<Val> items;
    items.reserve(fields.size());
    for (size_t i = 0; i < fields.size(); ++i) {
      if (values[i]) {
        items.push_back(std::move(*values[i]));
      } else if (fields[i].type->kind() == TypeKind::Option) {
        items.push_back(Val::none());
      } else {
        fail(open, "missing field `" + fields[i].name + "`");
      }
    }
    return Val::record(std::move(items));
  }

  // `(a, b, ...)` with exactly one value per element type.
  Val tuple(const Type& type) {
    const auto fields = type.fields();
    const std::string arity = std::to_string(fields.size());
    expect(TokenKind::ParenOpen, "to start a " + type.to_wit());
    std::vector<Val> items;
    items.reserve(fields.size());
    bool more = true;
    while (more) {
      if (lexer_.peek().is(TokenKind::ParenClose))
        expected(arity + " values for " + type.to_wit(), lexer_.peek());
      if (items.size() == fields.size())
        fail(lexer_.peek(), "too many values for " + type.to_wit() + "; it has " + arity);
      items.push_back(value(*fields[items.size()].type));
      if (items.size() < fields.size()) {
        expect(TokenKind::Comma, "between tuple values: " + type.to_wit() + " has " + arity);
      } else {
        more = another_element(TokenKind::ParenClose, "a tuple");
      }
    }
    return Val::tuple(std::move(items));
  }

  // A case label: keywords need their `%` (a bare `some` is the option case).
  const Token& case_label(const std::vector<std::string_view>& names, const char* what) {
    const Token& token = lexer_.peek();
    if (!token.is(TokenKind::Label)) expected(what, token);
    if (is_keyword(token.text)) {
      const bool is_case = std::find(names.begin(), names.end(), token.text) != names.end();
      expected(
          std::string(what) + (is_case ? " (a case named like a keyword is written with `%`)" : ""),
          token);
    }
    return token;
  }

  // The parenthesized payload of a case, when the case has one.
  std::optional<Val> payload(const Token& label, const TypeRef& payload_type) {
    const std::string name(label.label());
    if (lexer_.peek().is(TokenKind::ParenOpen)) {
      if (!payload_type) fail(lexer_.peek(), "case `" + name + "` has no payload");
      lexer_.next();
      Val result = value(*payload_type);
      expect(TokenKind::ParenClose, "after the payload of `" + name + "`");
      return result;
    }
    if (payload_type) fail(label, "case `" + name + "` needs a payload: `" + name + "(...)`");
    return std::nullopt;
  }

  static std::vector<std::string_view> case_names(const Type& type) {
    std::vector<std::string_view> names;
    for (const abi::Case& c : type.cases()) names.push_back(c.name);
    return names;
  }

  static uint32_t find_case(const std::vector<std::string_view>& names, std::string_view name) {
    return static_cast<uint32_t>(std::find(names.begin(), names.end(), name) - names.begin());
  }

  Val variant(const Type& type) {
    const auto names = case_names(type);
    const Token label = case_label(names, "a variant case");
    lexer_.next();
    const uint32_t index = find_case(names, label.label());
    if (index == names.size())
      fail(label, "unknown case `" + std::string(label.label()) + "` of " + type.to_wit());
    return Val::variant(index, payload(label, type.cases()[index].type));
  }

  Val enumeration(const Type& type) {
    const auto names = case_names(type);
    const Token label = case_label(names, "an enum case");
    lexer_.next();
    const uint32_t index = find_case(names, label.label());
    if (index == names.size())
      fail(label, "unknown case `" + std::string(label.label()) + "` of " + type.to_wit());
    if (lexer_.peek().is(TokenKind::ParenOpen)) fail(lexer_.peek(), "enum cases have no payload");
    return Val::enum_(index);
  }

  // `some(x)`, `none`, or x itself when x is not an option or result.
  Val option(const Type& type) {
    const Type& payload_type = *type.cases()[1].type;
    const Token& token = lexer_.peek();
    if (token.is_keyword("none")) {
      lexer_.next();
      return Val::none();
    }
    if (token.is_keyword("some")) {
      lexer_.next();
      expect(TokenKind::ParenOpen, "after `some`");
      Val result = value(payload_type);
      expect(TokenKind::ParenClose, "after the payload of `some`");
      return Val::some(std::move(result));
    }
    if (!is_flattenable(payload_type)) expected("`some(...)` or `none`", token);
    return Val::some(node(payload_type));
  }

  // `ok`, `ok(x)`, `err`, `err(x)` as the type's payloads require, or the ok
  // payload itself when it is not an option or result.
  Val result(const Type& type) {
    const TypeRef& ok_type = type.cases()[0].type;
    const Token& token = lexer_.peek();
    if (token.is_keyword("ok") || token.is_keyword("err")) {
      const Token label = lexer_.next();
      const bool is_ok = label.text == "ok";
      auto value = payload(label, type.cases()[is_ok ? 0 : 1].type);
      return is_ok ? Val::ok(std::move(value)) : Val::err(std::move(value));
    }
    if (!ok_type || !is_flattenable(*ok_type)) expected("`ok` or `err`", token);
    return Val::ok(node(*ok_type));
  }

  // `{a, b, ...}` in any order, or `{}`.
  Val flags(const Type& type) {
    const auto labels = type.labels();
    expect(TokenKind::BraceOpen, "to start a " + type.to_wit());
    uint32_t mask = 0;
    if (lexer_.peek().is(TokenKind::BraceClose)) {
      lexer_.next();
      return Val::flags(mask);
    }
    do {
      const Token name = lexer_.next();
      if (!name.is(TokenKind::Label)) expected("a flag name", name);
      const auto label = std::find(labels.begin(), labels.end(), name.label());
      if (label == labels.end())
        fail(name, "unknown flag `" + std::string(name.label()) + "` of " + type.to_wit());
      const uint32_t bit = uint32_t{1} << (label - labels.begin());
      if (mask & bit) fail(name, "duplicate flag `" + *label + "`");
      mask |= bit;
    } while (another_element(TokenKind::BraceClose, "flags"));
    return Val::flags(mask);
  }

  Source source_;
  Lexer lexer_;
  int depth_ = 0;
};

}  // namespace

abi::Val parse_wave(const abi::Type& type, std::string_view text) {
  return Parser(text).parse_value(type);
}

std::vector<abi::Val> parse_wave_args(std::span<const abi::TypeRef> types, std::string_view text) {
  return Parser(text).parse_args(types);
}

}  // namespace cmhost
