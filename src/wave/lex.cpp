#include "lex.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "support/unicode.hpp"

namespace cmhost::wave_text {

// Offset of the first byte that is not part of well-formed UTF-8, if any.
std::optional<size_t> find_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  if (support::is_valid_utf8(bytes, text.size())) return std::nullopt;
  size_t i = 0;
  while (i < text.size()) {
    const uint8_t lead = bytes[i];
    const size_t length = lead < 0x80             ? 1
                          : (lead & 0xE0) == 0xC0 ? 2
                          : (lead & 0xF0) == 0xE0 ? 3
                          : (lead & 0xF8) == 0xF0 ? 4
                                                  : 0;
    if (length == 0 || length > text.size() - i || !support::is_valid_utf8(bytes + i, length)) break;
    i += length;
  }
  return i;
}

const char* spelling(TokenKind kind) {
  switch (kind) {
    case TokenKind::BraceOpen: return "`{`";
    case TokenKind::BraceClose: return "`}`";
    case TokenKind::ParenOpen: return "`(`";
    case TokenKind::ParenClose: return "`)`";
    case TokenKind::BracketOpen: return "`[`";
    case TokenKind::BracketClose: return "`]`";
    case TokenKind::Colon: return "`:`";
    case TokenKind::Comma: return "`,`";
    default: return "end of input";
  }
}

bool magnitude_at_least_one(std::string_view text) {
  if (text.front() == '-') text.remove_prefix(1);
  const size_t exponent_at = text.find_first_of("eE");
  int64_t exponent = 0;
  if (exponent_at != std::string_view::npos) {
    std::string_view digits = text.substr(exponent_at + 1);
    const bool negative = digits.front() == '-';
    if (digits.front() == '-' || digits.front() == '+') digits.remove_prefix(1);
    for (char d : digits) exponent = std::min<int64_t>(exponent * 10 + (d - '0'), 1'000'000'000);
    if (negative) exponent = -exponent;
  }
  const std::string_view mantissa = text.substr(0, exponent_at);
  const size_t point = mantissa.find('.');
  const std::string_view integer = mantissa.substr(0, point);
  if (integer != "0") return static_cast<int64_t>(integer.size()) - 1 + exponent >= 0;
  const std::string_view fraction =
      point == std::string_view::npos ? "" : mantissa.substr(point + 1);
  const size_t first_nonzero = fraction.find_first_not_of('0');
  if (first_nonzero == std::string_view::npos) return false;
  return -static_cast<int64_t>(first_nonzero) - 1 + exponent >= 0;
}

Token Lexer::make(TokenKind kind, size_t begin, size_t end) {
  pos_ = end;
  Token token;
  token.kind = kind;
  token.begin = begin;
  token.text = text_.substr(begin, end - begin);
  return token;
}

Token Lexer::lex() {
  skip_space_and_comments();
  const size_t begin = pos_;
  if (begin >= text_.size()) return make(TokenKind::End, begin, begin);
  const char c = text_[begin];
  switch (c) {
    case '{': return make(TokenKind::BraceOpen, begin, begin + 1);
    case '}': return make(TokenKind::BraceClose, begin, begin + 1);
    case '(': return make(TokenKind::ParenOpen, begin, begin + 1);
    case ')': return make(TokenKind::ParenClose, begin, begin + 1);
    case '[': return make(TokenKind::BracketOpen, begin, begin + 1);
    case ']': return make(TokenKind::BracketClose, begin, begin + 1);
    case ':': return make(TokenKind::Colon, begin, begin + 1);
    case ',': return make(TokenKind::Comma, begin, begin + 1);
    case '\'': return char_literal(begin);
    case '"':
      return text_.substr(begin, 3) == "\"\"\"" ? multiline_string(begin) : string_literal(begin);
    default: break;
  }
  if (c == '-' || is_digit(c)) return number(begin);
  if (c == '%' || is_lower(c) || is_upper(c)) return label(begin);
  size_t end = begin;
  support::next_code_point(reinterpret_cast<const unsigned char*>(text_.data()), end);
  source_.fail(begin,
               "unexpected character `" + std::string(text_.substr(begin, end - begin)) + "`");
}

void Lexer::skip_space_and_comments() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && at(pos_ + 1) == '/') {
      const size_t newline = text_.find('\n', pos_);
      pos_ = newline == std::string_view::npos ? text_.size() : newline;
    } else {
      break;
    }
  }
}

Token Lexer::number(size_t begin) {
  size_t i = begin;
  if (text_[i] == '-') {
    if (text_.substr(i, 4) == "-inf") return make(TokenKind::Number, begin, i + 4);
    ++i;
    if (!is_digit(at(i))) source_.fail(begin, "expected a digit or `inf` after `-`");
  }
  if (text_[i] == '0') {
    ++i;
  } else {
    while (is_digit(at(i))) ++i;
  }
  if (at(i) == '.' && is_digit(at(i + 1))) {
    i += 2;
    while (is_digit(at(i))) ++i;
  }
  if (at(i) == 'e' || at(i) == 'E') {
    size_t digits = i + 1;
    if (at(digits) == '+' || at(digits) == '-') ++digits;
    if (is_digit(at(digits))) {
      i = digits;
      while (is_digit(at(i))) ++i;
    }
  }
  return make(TokenKind::Number, begin, i);
}

size_t Lexer::word(size_t i) const {
  while (is_digit(at(i))) ++i;
  if (is_lower(at(i))) {
    while (is_lower(at(i)) || is_digit(at(i))) ++i;
  } else if (is_upper(at(i))) {
    while (is_upper(at(i)) || is_digit(at(i))) ++i;
  }
  return i;
}

Token Lexer::label(size_t begin) {
  size_t i = begin;
  if (text_[i] == '%') {
    ++i;
    if (!is_lower(at(i)) && !is_upper(at(i))) source_.fail(begin, "expected a label after `%`");
  }
  i = word(i);
  while (at(i) == '-' && (is_digit(at(i + 1)) || is_lower(at(i + 1)) || is_upper(at(i + 1))))
    i = word(i + 1);
  return make(TokenKind::Label, begin, i);
}

char32_t Lexer::escape(size_t& i, size_t limit) const {
  const size_t begin = i;
  const char kind = i + 1 < limit ? text_[i + 1] : '\0';
  i += 2;
  switch (kind) {
    case '\\': return '\\';
    case '\'': return '\'';
    case '"': return '"';
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'u': break;
    default:
      source_.fail(begin, "invalid escape; expected one of \\\\ \\' \\\" \\t \\n \\r \\u{...}");
  }
  if (i >= limit || text_[i] != '{')
    source_.fail(begin, "invalid escape; expected `{` after \\u, as in \\u{1F30A}");
  ++i;
  uint32_t value = 0;
  size_t digits = 0;
  while (i < limit && is_hex_digit(text_[i]) && digits < 6) {
    const char h = text_[i];
    value = value * 16 + static_cast<uint32_t>(is_digit(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    ++digits;
    ++i;
  }
  if (digits == 0 || i >= limit || text_[i] != '}')
    source_.fail(begin, "invalid escape; expected 1 to 6 hex digits and `}` after \\u{");
  ++i;
  if (!support::is_unicode_scalar(value))
    source_.fail(begin, "invalid escape; " + std::string(text_.substr(begin, i - begin)) +
                            " is not a Unicode scalar value");
  return value;
}

Token Lexer::char_literal(size_t begin) {
  const size_t limit = line_end(begin);
  size_t i = begin + 1;
  if (i >= limit || text_[i] == '\'')
    source_.fail(begin, "expected one character between single quotes");
  char32_t value;
  if (text_[i] == '\\') {
    value = escape(i, limit);
  } else {
    value = support::next_code_point(reinterpret_cast<const unsigned char*>(text_.data()), i);
  }
  if (i >= limit || text_[i] != '\'')
    source_.fail(begin, "expected `'` after one character; a char literal holds exactly one");
  Token token = make(TokenKind::Char, begin, i + 1);
  token.character = value;
  return token;
}

void Lexer::decode_line(size_t begin, size_t end, std::string& out) const {
  size_t i = begin;
  while (i < end) {
    const size_t backslash = text_.find('\\', i);
    const size_t run_end = std::min(backslash, end);
    out.append(text_.substr(i, run_end - i));
    i = run_end;
    if (i < end) support::append_utf8(out, escape(i, end));
  }
}

Token Lexer::string_literal(size_t begin) {
  const size_t limit = line_end(begin);
  size_t i = begin + 1;
  // The closing quote is the first one not escaped.
  while (i < limit && text_[i] != '"') i += text_[i] == '\\' ? 2 : 1;
  if (i >= limit)
    source_.fail(begin, "unterminated string; a line break in a string is written \\n");
  Token token = make(TokenKind::String, begin, i + 1);
  decode_line(begin + 1, i, token.string);
  return token;
}

Token Lexer::multiline_string(size_t begin) {
  const size_t content_begin = begin + 3;
  const size_t close = text_.find("\"\"\"", content_begin);
  if (close == std::string_view::npos) source_.fail(begin, "unterminated multi-line string");
  Token token = make(TokenKind::String, begin, close + 3);

  size_t first = content_begin;
  if (at(first) == '\r') ++first;  // part of a `\r\n` line break
  const size_t last_newline = text_.rfind('\n', close - 1);
  const size_t indent_begin =
      last_newline == std::string_view::npos || last_newline < first ? first : last_newline + 1;
  const std::string_view indent = text_.substr(indent_begin, close - indent_begin);
  if (indent.find_first_not_of(' ') != std::string_view::npos)
    source_.fail(close, "the closing \"\"\" must be on its own line, after nothing but spaces");
  if (first >= close || text_[first] != '\n')
    source_.fail(content_begin, "the opening \"\"\" must be followed by a line break");

  // Lines between the opening line break and the closing line.
  for (size_t line = first + 1; line < indent_begin;) {
    const size_t newline = text_.find('\n', line);
    if (text_.substr(line, indent.size()) != indent)
      source_.fail(line, "this line is indented less than the closing \"\"\"");
    size_t end = newline;
    if (end > line + indent.size() && text_[end - 1] == '\r') --end;
    if (line != first + 1) token.string += '\n';
    decode_line(line + indent.size(), end, token.string);
    line = newline + 1;
  }
  return token;
}

}  // namespace cmhost::wave_text
