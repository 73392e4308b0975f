// The commands of a component-model `.wast` script, as the official suite
// writes them: component forms (text, `binary`, `quote`), `component
// definition` / `component instance`, `register`, `invoke`, and the
// `assert_*` commands with the suite's value syntax (`u32.const 1`,
// `str.const "x"`, `record.const (field "a" u8.const 1)`, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmhost/abi/type.hpp"

namespace cmhost::tools::wast {

// A component as the script gives it.
struct ComponentSource {
  enum class Form { Text, Binary, Quote };
  Form form = Form::Text;
  std::string text;            // Text, Quote: component text for the assembler
  std::vector<uint8_t> bytes;  // Binary: used as given
};

// A value written in the script. Its kind is the kind of the component type
// it denotes; which type exactly is only known from the function it meets.
struct Value {
  abi::TypeKind kind = abi::TypeKind::Bool;
  uint64_t bits = 0;     // bool 0/1, integers as two's complement, floats as IEEE bits, char code point
  bool any_nan = false;  // floats written `nan`, `nan:canonical`, `nan:arithmetic`: match any NaN
  bool negative = false;            // integers written with a minus sign
  std::string text;                 // string bytes; variant, enum case label
  std::vector<std::string> labels;  // record field names (parallel to items); flags labels
  std::vector<Value> items;         // list elements, record fields, tuple elements, a payload (0 or 1)
  uint32_t case_index = 0;          // option: 0 none, 1 some; result: 0 ok, 1 err
  std::string source;               // as written, for messages
};

struct Invoke {
  std::string instance;  // `$id`, or empty for the current instance
  std::string name;
  std::vector<Value> args;
};

enum class CommandKind {
  Component,            // (component ...): define and instantiate
  ComponentDefinition,  // (component definition ...): define only
  ComponentInstance,    // (component instance $i $Def)
  Register,             // (register "name" $i?)
  Invoke,
  AssertReturn,
  AssertTrap,
  AssertExhaustion,
  AssertInvalid,
  AssertMalformed,
  AssertUnlinkable,
  Unsupported,  // a command cmhost wast cannot run; `message` says why
};

struct Command {
  CommandKind kind = CommandKind::Unsupported;
  int line = 0;
  std::string keyword;     // as written: `assert_return`, `component definition`, ...
  std::string name;        // $id of a component or instance; Register: the name registered
  std::string definition;  // ComponentInstance: the definition's $id; Register: the instance's $id
  std::optional<ComponentSource> component;
  std::optional<Invoke> invoke;
  // assert_trap / assert_unlinkable wrapping a component form or instance:
  // the wrapped command.
  std::shared_ptr<const Command> subject;
  std::vector<Value> expected;  // assert_return
  std::string message;          // assert_*: the expected message; Unsupported: why
};

// Parses a script. Commands that cannot be parsed become Unsupported ones
// saying why, so the rest of the file still runs. Throws cmhost::Error
// (Usage) only when the file is not a sequence of s-expressions.
std::vector<Command> parse_script(std::string_view source);

// Parses one value form such as `(u32.const 1)`, for tests and messages.
Value parse_value_text(std::string_view text);

}  // namespace cmhost::tools::wast
