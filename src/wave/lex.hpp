// WAVE's lexer, shared by the parser (parse.cpp): the source text with
// its line and column reporting, tokens, and the lexer that decodes chars
// and strings. Private to the wave stage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cmhost/error.hpp"

namespace cmhost::wave_text {

// The crate rejects values nested deeper than this, whatever their type.
constexpr int kMaxNesting = 100;

// The input text and where things are in it, for error messages.
class Source {
 public:
  explicit Source(std::string_view text) : text_(text) {}

  std::string_view text() const { return text_; }

  [[noreturn]] void fail(size_t offset, const std::string& message) const {
    size_t line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    // Columns count characters, not bytes: skip UTF-8 continuation bytes.
    size_t column = 1;
    for (size_t i = line_start; i < offset && i < text_.size(); ++i)
      if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) ++column;
    throw_invalid_value("invalid WAVE at line " + std::to_string(line) + ", column " +
                        std::to_string(column) + ": " + message);
  }

 private:
  std::string_view text_;
};


enum class TokenKind : uint8_t {
  End,
  BraceOpen,
  BraceClose,
  ParenOpen,
  ParenClose,
  BracketOpen,
  BracketClose,
  Colon,
  Comma,
  Number,  // also `-inf`; `inf` and `nan` are labels, as in the crate
  Label,   // labels and keywords, possibly `%`-prefixed
  Char,
  String,  // single- and multi-line
};


struct Token {
  TokenKind kind = TokenKind::End;
  size_t begin = 0;        // byte offset in the source
  std::string_view text;   // as written
  std::string string;      // String: the decoded contents
  char32_t character = 0;  // Char: the decoded character

  bool is(TokenKind k) const { return kind == k; }
  bool prefixed() const { return kind == TokenKind::Label && text.front() == '%'; }
  // Label: the name, without any `%`.
  std::string_view label() const { return prefixed() ? text.substr(1) : text; }
  // True for the bare (unprefixed) keyword `word`; `%word` is a plain label.
  bool is_keyword(std::string_view word) const { return kind == TokenKind::Label && text == word; }

  std::string describe() const {
    if (kind == TokenKind::End) return "end of input";
    constexpr size_t kMaxShown = 32;
    if (text.size() <= kMaxShown) return "`" + std::string(text) + "`";
    size_t cut = kMaxShown - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return "`" + std::string(text.substr(0, cut)) + "...`";
  }
};

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Splits the text into tokens on demand, skipping whitespace and `//`
// comments. Chars and strings are decoded here.

// Offset of the first byte that is not part of well-formed UTF-8, if any.
std::optional<size_t> find_invalid_utf8(std::string_view text);
const char* spelling(TokenKind kind);

// True when the decimal literal `text` (as lexed: no leading zeros) has a
// magnitude of at least one, so that from_chars's out-of-range result means
// overflow rather than underflow.
bool magnitude_at_least_one(std::string_view text);

class Lexer {
 public:
  explicit Lexer(const Source& source) : source_(source), text_(source.text()) {}

  const Token& peek() {
    if (!peeked_) peeked_ = lex();
    return *peeked_;
  }

  Token next() {
    Token token = peeked_ ? std::move(*peeked_) : lex();
    peeked_.reset();
    return token;
  }

  // Where the next token starts, without lexing it (it may be malformed).
  size_t next_offset() {
    if (peeked_) return peeked_->begin;
    skip_space_and_comments();
    return pos_;
  }

 private:
  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  Token make(TokenKind kind, size_t begin, size_t end);

  Token lex();

  void skip_space_and_comments();

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? or -inf
  Token number(size_t begin);

  // A word is lowercase or uppercase letters and digits, never both cases;
  // the first word of a label starts with a letter. Words are joined by `-`.
  size_t word(size_t i) const;

  Token label(size_t begin);

  // Decodes the escape sequence at `i` (a backslash) within `limit`, the end
  // of the literal's line, and moves `i` past it.
  char32_t escape(size_t& i, size_t limit) const;

  size_t line_end(size_t i) const {
    const size_t newline = text_.find('\n', i);
    return newline == std::string_view::npos ? text_.size() : newline;
  }

  // One character or escape between single quotes.
  Token char_literal(size_t begin);

  // Appends the line text_[begin, end) to `out`, decoding escapes.
  void decode_line(size_t begin, size_t end, std::string& out) const;

  // Characters and escapes between double quotes, on one line.
  Token string_literal(size_t begin);

  // `"""`, a line break, lines, then spaces and `"""`. The spaces before the
  // closing quotes are the indent removed from every line; the line breaks
  // after the opening and before the closing quotes are not part of the value.
  Token multiline_string(size_t begin);

  const Source& source_;
  std::string_view text_;
  size_t pos_ = 0;
  std::optional<Token> peeked_;
};

}  // namespace cmhost::wave_text
