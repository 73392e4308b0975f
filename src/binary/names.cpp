// Names: the `component-name` custom section, the import/export name grammar
// of the Explainer, and the display names of the AST's enums.
#include <algorithm>

#include "cmhost/error.hpp"
#include "decode.hpp"

namespace cmhost::binary {

const char* to_string(PrimValType type) noexcept {
  switch (type) {
    case PrimValType::Bool: return "bool";
    case PrimValType::S8: return "s8";
    case PrimValType::U8: return "u8";
    case PrimValType::S16: return "s16";
    case PrimValType::U16: return "u16";
    case PrimValType::S32: return "s32";
    case PrimValType::U32: return "u32";
    case PrimValType::S64: return "s64";
    case PrimValType::U64: return "u64";
    case PrimValType::F32: return "f32";
    case PrimValType::F64: return "f64";
    case PrimValType::Char: return "char";
    case PrimValType::String: return "string";
    case PrimValType::ErrorContext: return "error-context";
  }
  return "?";
}

// ---- The component-name section ----

namespace detail {
namespace {

NameSection read_name_subsections(Reader& r) {
  NameSection section;
  bool any_subsection = false;
  while (!r.at_end()) {
    const uint8_t id = r.read_u8();
    const uint32_t size = r.read_u32();
    Reader sub = r.sub_reader(size, r.context());
    if (id == 0) {
      // The grammar allows the component's own name only first.
      if (any_subsection) sub.fail("component name subsection after other subsections");
      section.component_name = sub.read_name("component name");
    } else if (id == 1) {
      const Sort sort = read_sort(sub);
      auto& names = section.names[sort];
      const uint32_t count = sub.read_count("names");
      for (uint32_t i = 0; i < count; ++i) {
        const uint32_t index = sub.read_u32();
        names.emplace(index, sub.read_name("name"));
      }
    } else {
      sub.read_bytes(sub.remaining(), "an unknown subsection");  // reserved for future use
    }
    sub.expect_end();
    any_subsection = true;
  }
  return section;
}

}  // namespace

std::optional<NameSection> read_name_section(Reader reader) {
  try {
    return read_name_subsections(reader);
  } catch (const Error&) {
    return std::nullopt;  // names are optional: a malformed section is ignored
  }
}

}  // namespace detail

// ---- Import/export names ----

namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_upper_alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

template <typename Each>
bool all_of(std::string_view text, Each each) {
  return std::all_of(text.begin(), text.end(), each);
}

// Splits on '-' and checks every fragment; empty fragments fail.
template <typename First, typename Rest>
bool is_kebab(std::string_view text, First first_ok, Rest rest_ok) {
  bool first = true;
  while (true) {
    const size_t dash = text.find('-');
    const std::string_view fragment = text.substr(0, dash);
    if (fragment.empty()) return false;
    if (!(first ? first_ok(fragment) : rest_ok(fragment))) return false;
    first = false;
    if (dash == std::string_view::npos) return true;
    text.remove_prefix(dash + 1);
  }
}

// words ::= first-word ('-' word)*, lowercase only (namespaces, packages).
bool is_words(std::string_view text) {
  return is_kebab(
      text,
      [](std::string_view f) { return f[0] >= 'a' && f[0] <= 'z' && all_of(f, is_lower_alnum); },
      [](std::string_view f) { return all_of(f, is_lower_alnum); });
}

std::optional<ParsedExternName> fail(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return std::nullopt;
}

std::optional<ParsedExternName> parse_interface_name(std::string_view name, std::string* why) {
  ParsedExternName parsed;
  parsed.kind = ParsedExternName::Kind::Interface;
  const size_t colon = name.find(':');
  const std::string_view ns = name.substr(0, colon);
  if (!is_words(ns))
    return fail(why, "namespace `" + std::string(ns) + "` is not kebab-case words");
  std::string_view rest = name.substr(colon + 1);
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return fail(why, "expected `/` after the package name");
  const std::string_view package = rest.substr(0, slash);
  if (package.find(':') != std::string_view::npos)
    return fail(why, "nested namespaces are not supported");
  if (!is_words(package))
    return fail(why, "package `" + std::string(package) + "` is not kebab-case words");
  rest.remove_prefix(slash + 1);
  const size_t at = rest.find('@');
  const std::string_view interface = rest.substr(0, at);
  if (interface.find('/') != std::string_view::npos)
    return fail(why, "nested interfaces are not supported");
  if (!is_label(interface))
    return fail(why, "interface `" + std::string(interface) + "` is not a label");
  if (at != std::string_view::npos) {
    const std::string_view version = rest.substr(at + 1);
    if (!support::is_semver(version) && !support::is_canon_version(version)) {
      return fail(why, "`" + std::string(version) + "` is not a valid version");
    }
    parsed.version = std::string(version);
  }
  parsed.namespace_name = std::string(ns);
  parsed.package = std::string(package);
  parsed.interface = std::string(interface);
  return parsed;
}

}  // namespace

}  // namespace cmhost::binary

// The public name grammar (cmhost/names.hpp).
namespace cmhost {
using namespace binary;

bool is_label(std::string_view text) {
  return is_kebab(
      text,
      [](std::string_view f) {
        if (f[0] >= 'a' && f[0] <= 'z') return all_of(f, is_lower_alnum);
        if (f[0] >= 'A' && f[0] <= 'Z') return all_of(f, is_upper_alnum);
        return false;
      },
      [](std::string_view f) { return all_of(f, is_lower_alnum) || all_of(f, is_upper_alnum); });
}

std::optional<ParsedExternName> parse_extern_name(std::string_view name, std::string* why) {
  if (name.find(':') != std::string_view::npos) return parse_interface_name(name, why);
  using Kind = ParsedExternName::Kind;
  struct Prefix {
    std::string_view text;
    Kind kind;
    bool legacy_async;
  };
  static constexpr Prefix prefixes[] = {
      {"[constructor]", Kind::Constructor, false}, {"[method]", Kind::Method, false},
      {"[static]", Kind::Static, false},           {"[async]", Kind::Label, true},
      {"[async method]", Kind::Method, true},      {"[async static]", Kind::Static, true},
  };
  ParsedExternName parsed;
  std::string_view rest = name;
  if (!rest.empty() && rest[0] == '[') {
    const Prefix* match = nullptr;
    for (const Prefix& p : prefixes) {
      if (rest.substr(0, p.text.size()) == p.text) {
        match = &p;
        break;
      }
    }
    if (!match) return fail(why, "unknown annotation in `" + std::string(name) + "`");
    parsed.kind = match->kind;
    parsed.legacy_async = match->legacy_async;
    rest.remove_prefix(match->text.size());
  }
  if (parsed.kind == Kind::Method || parsed.kind == Kind::Static) {
    const size_t dot = rest.find('.');
    if (dot == std::string_view::npos)
      return fail(why, "expected `resource.function` in `" + std::string(name) + "`");
    parsed.resource = std::string(rest.substr(0, dot));
    parsed.label = std::string(rest.substr(dot + 1));
    if (!is_label(parsed.resource) || !is_label(parsed.label)) {
      return fail(why, "`" + std::string(name) + "` is not made of kebab-case labels");
    }
    return parsed;
  }
  if (!is_label(rest)) return fail(why, "`" + std::string(rest) + "` is not a kebab-case label");
  (parsed.kind == Kind::Constructor ? parsed.resource : parsed.label) = std::string(rest);
  return parsed;
}

std::optional<ParsedExternName> parse_extern_path(std::string_view name, std::string* why) {
  const size_t hash = name.find('#');
  auto parsed = parse_extern_name(name.substr(0, hash), why);
  if (!parsed || hash == std::string_view::npos) return parsed;
  const std::string_view member = name.substr(hash + 1);
  std::string member_why;
  if (!parse_extern_name(member, &member_why)) return fail(why, "item `" + std::string(member) + "`: " + member_why);
  parsed->member = std::string(member);
  return parsed;
}

}  // namespace cmhost
