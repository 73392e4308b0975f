// S-expressions of the WebAssembly text and script formats, as `cmhost wast`
// reads them: lists, atoms (keywords, `$ids`, numbers) and strings, each with
// its byte range in the source so a component's text can be handed to the
// assembler exactly as written.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cmhost::tools::wast {

struct SExpr {
  enum class Kind { List, Atom, String };
  Kind kind = Kind::List;
  std::string text;           // Atom: the token; String: the decoded bytes
  std::vector<SExpr> items;   // List
  size_t begin = 0, end = 0;  // byte range in the source, parentheses or quotes included
  int line = 0;               // 1-based line of `begin`
  std::string malformed;      // String: why its escapes are invalid, if they are

  bool is_list() const { return kind == Kind::List; }
  bool is_atom() const { return kind == Kind::Atom; }
  bool is_string() const { return kind == Kind::String; }
  bool is_atom(std::string_view token) const { return kind == Kind::Atom && text == token; }
  bool is_id() const { return kind == Kind::Atom && !text.empty() && text[0] == '$'; }
  // A list whose first item is the atom `head`.
  bool is_form(std::string_view head) const {
    return kind == Kind::List && !items.empty() && items[0].is_atom(head);
  }
};

// Reads every top-level form of a script. Comments (`;; ...` and nested
// `(; ... ;)`) are skipped. Throws cmhost::Error (Usage) naming the line on
// unbalanced parentheses or unterminated strings and comments; a string with
// a bad escape is kept, with `malformed` set.
std::vector<SExpr> read_sexprs(std::string_view source);

// The bytes a string literal's body denotes (escapes `\n`, `\t`, `\\`,
// `\'`, `\"`, `\hh`, `\u{h...}`). Throws cmhost::Error (Usage) on a bad escape.
std::string decode_string_literal(std::string_view body);

}  // namespace cmhost::tools::wast
