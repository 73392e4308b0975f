#include "lexer.hpp"

#include <fmt/core.h>

#include "cmhost/error.hpp"
#include "support/unicode.hpp"

namespace cmhost::tools::wast {

namespace {

[[noreturn]] void fail(int line, const std::string& message) {
  throw Error(ErrorKind::Usage, fmt::format("line {}: {}", line, message));
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_atom_char(char c) {
  return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == '"' || c == ';');
}

class Reader {
 public:
  explicit Reader(std::string_view source) : src_(source) {}

  std::vector<SExpr> all() {
    std::vector<SExpr> forms;
    for (;;) {
      skip_space();
      if (pos_ >= src_.size()) return forms;
      if (src_[pos_] == ')') fail(line_, "unexpected `)`");
      forms.push_back(read());
    }
  }

 private:
  void skip_space() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\n') {
        ++line_;
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (src_.substr(pos_, 2) == ";;") {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else if (src_.substr(pos_, 2) == "(;") {
        skip_block_comment();
      } else {
        return;
      }
    }
  }

  void skip_block_comment() {
    const int start_line = line_;
    int depth = 0;
    while (pos_ < src_.size()) {
      if (src_.substr(pos_, 2) == "(;") {
        ++depth;
        pos_ += 2;
      } else if (src_.substr(pos_, 2) == ";)") {
        pos_ += 2;
        if (--depth == 0) return;
      } else {
        if (src_[pos_] == '\n') ++line_;
        ++pos_;
      }
    }
    fail(start_line, "unterminated block comment");
  }

  SExpr read() {
    SExpr e;
    e.begin = pos_;
    e.line = line_;
    const char c = src_[pos_];
    if (c == '(') {
      e.kind = SExpr::Kind::List;
      ++pos_;
      for (;;) {
        skip_space();
        if (pos_ >= src_.size()) fail(e.line, "unclosed `(`");
        if (src_[pos_] == ')') {
          ++pos_;
          break;
        }
        e.items.push_back(read());
      }
    } else if (c == '"') {
      e.kind = SExpr::Kind::String;
      ++pos_;
      const size_t body = pos_;
      while (pos_ < src_.size() && src_[pos_] != '"') {
        if (src_[pos_] == '\\') ++pos_;
        else if (src_[pos_] == '\n') fail(e.line, "unterminated string");
        ++pos_;
      }
      if (pos_ >= src_.size()) fail(e.line, "unterminated string");
      // A bad escape spoils only this string: inside a component it is the
      // assembler's to report (assert_malformed tests rely on that).
      try {
        e.text = decode_string_literal(src_.substr(body, pos_ - body));
      } catch (const Error& err) {
        e.malformed = err.what();
      }
      ++pos_;
    } else {
      e.kind = SExpr::Kind::Atom;
      while (pos_ < src_.size() && is_atom_char(src_[pos_])) ++pos_;
      // Only a `;` that starts no comment stops an atom before its first
      // character: nothing else can follow, so it is an error, not an
      // empty atom read forever.
      if (pos_ == e.begin) fail(line_, "unexpected `;` (comments start with `;;` or `(;`)");
      e.text = std::string(src_.substr(e.begin, pos_ - e.begin));
    }
    e.end = pos_;
    return e;
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace

std::string decode_string_literal(std::string_view body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') {
      out += body[i];
      continue;
    }
    if (++i >= body.size()) throw Error(ErrorKind::Usage, "string ends in `\\`");
    const char c = body[i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'u': {
        if (i + 1 >= body.size() || body[i + 1] != '{') throw Error(ErrorKind::Usage, "bad `\\u` escape");
        i += 2;
        uint32_t cp = 0;
        size_t digits = 0;
        for (; i < body.size() && body[i] != '}'; ++i) {
          if (body[i] == '_') continue;
          const int d = hex_digit(body[i]);
          if (d < 0 || cp > 0x10FFFF) throw Error(ErrorKind::Usage, "bad `\\u` escape");
          cp = cp * 16 + static_cast<uint32_t>(d);
          ++digits;
        }
        if (i >= body.size() || digits == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000))
          throw Error(ErrorKind::Usage, "bad `\\u` escape");
        support::append_utf8(out, cp);
        break;
      }
      default: {
        const int hi = hex_digit(c);
        const int lo = i + 1 < body.size() ? hex_digit(body[i + 1]) : -1;
        if (hi < 0 || lo < 0) throw Error(ErrorKind::Usage, fmt::format("invalid string escape `\\{}`", c));
        out += static_cast<char>(hi * 16 + lo);
        ++i;
      }
    }
  }
  return out;
}

std::vector<SExpr> read_sexprs(std::string_view source) { return Reader(source).all(); }

}  // namespace cmhost::tools::wast
