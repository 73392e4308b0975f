#include "bindgen.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "cmhost/error.hpp"
#include "world.hpp"

namespace cmhost::tools {

namespace {

using namespace wit;

[[noreturn]] void unsupported(const std::string& why) { throw Error(ErrorKind::Usage, why); }

// ---- Names: WIT kebab-case to C++ ----

bool is_cpp_keyword(std::string_view name) {
  static const std::unordered_set<std::string_view> keywords = {
      "alignas",   "alignof",      "and",          "and_eq",    "asm",        "auto",          "bitand",
      "bitor",     "bool",         "break",        "case",      "catch",      "char",          "char8_t",
      "char16_t",  "char32_t",     "class",        "compl",     "concept",    "const",         "consteval",
      "constexpr", "constinit",    "const_cast",   "continue",  "co_await",   "co_return",     "co_yield",
      "decltype",  "default",      "delete",       "do",        "double",     "dynamic_cast",  "else",
      "enum",      "explicit",     "export",       "extern",    "false",      "float",         "for",
      "friend",    "goto",         "if",           "inline",    "int",        "long",          "mutable",
      "namespace", "new",          "noexcept",     "not",       "not_eq",     "nullptr",       "operator",
      "or",        "or_eq",        "private",      "protected", "public",     "register",      "reinterpret_cast",
      "requires",  "return",       "short",        "signed",    "sizeof",     "static",        "static_assert",
      "static_cast", "struct",     "switch",       "template",  "this",       "thread_local",  "throw",
      "true",      "try",          "typedef",      "typeid",    "typename",   "union",         "unsigned",
      "using",     "virtual",      "void",         "volatile",  "wchar_t",    "while",         "xor",
      "xor_eq",    "final",        "override",     "import",    "module",     "std",           "cmhost",
      // Names the generated code uses in the scopes it declares.
      "host",      "store",        "instance",     "linker",    "caller",
  };
  return keywords.count(name) > 0;
}

// `my-func` -> `my_func`; C++ keywords get a trailing underscore.
std::string snake(std::string_view kebab) {
  std::string out;
  for (char c : kebab) out += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (is_cpp_keyword(out)) out += '_';
  return out;
}

// `http-request` -> `HttpRequest`, `URL-path` -> `URLPath`.
std::string pascal(std::string_view kebab) {
  std::string out;
  bool start = true;
  for (char c : kebab) {
    if (c == '-') {
      start = true;
      continue;
    }
    out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    start = false;
  }
  return out;
}

std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// ---- The header being written ----

// Lines longer than this are broken (the project's clang-format limit), so
// the headers read well in an editor and a diff.
constexpr size_t kColumnLimit = 120;

// Where a code line too long for `room` columns is best broken: after the
// last comma that fits at the shallowest bracket depth, else at a space,
// else after a template's `<`; never inside a string literal or a trailing
// comment. npos: it cannot be broken.
size_t code_break(std::string_view text, size_t room) {
  constexpr size_t kNone = std::numeric_limits<size_t>::max(), kSpacePenalty = 1000, kTemplatePenalty = 2000;
  size_t best = std::string_view::npos, best_cost = kNone, first_after = std::string_view::npos, first_after_cost = kNone;
  int depth = 0;
  bool in_string = false;
  auto consider = [&](size_t at, size_t cost) {
    if (at == 0 || at + 1 >= text.size()) return;
    if (at <= room) {
      if (cost <= best_cost) best = at, best_cost = cost;
    } else if (cost < first_after_cost) {
      first_after = at, first_after_cost = cost;
    }
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') break;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == '<' && i + 1 < text.size() && text[i + 1] != '<' && text[i + 1] != '=') {
      ++depth;  // after a template's `<`: only where nothing else fits
      consider(i + 1, static_cast<size_t>(depth) + kTemplatePenalty);
    }
    else if ((c == ')' || c == ']' || c == '}' || (c == '>' && (i == 0 || text[i - 1] != '-'))) && depth > 0) --depth;
    else if (c == ',' && i + 1 < text.size() && text[i + 1] == ' ') consider(i + 1, static_cast<size_t>(depth));
    else if (c == ' ' && i > 0 && text[i - 1] != ',') consider(i, static_cast<size_t>(depth) + kSpacePenalty);
  }
  return best != std::string_view::npos ? best : first_after;
}

// Where a comment too long for `room` columns is broken: its last space
// that fits, else its first space. npos: one word.
size_t comment_break(std::string_view text, size_t room) {
  size_t at = text.rfind(' ', room);
  if (at == std::string_view::npos || at <= 2) at = text.find(' ', room);
  return at;
}

class Header {
 public:
  void line(std::string_view text = {}) {
    if (text.empty()) {
      out_ += '\n';
      return;
    }
    write_wrapped(std::string(2 * indent_, ' '), text);
  }
  void open(std::string_view text) {
    line(text);
    ++indent_;
  }
  // `public:` and `private:`, half an indent out as clang-format puts them.
  void access(std::string_view text) {
    out_.append(2 * indent_ - 1, ' ');
    out_ += text;
    out_ += '\n';
  }
  void close(std::string_view text = "};") {
    --indent_;
    line(text);
  }
  // Namespaces do not indent what they hold.
  void open_namespace(std::string_view name) { line("namespace " + std::string(name) + " {"); }
  void close_namespace(std::string_view name) { line("}  // namespace " + std::string(name)); }
  std::string take() { return std::move(out_); }

 private:
  // A comment continues as a comment at the same indent; code continues
  // four columns further in, every continuation line alike.
  void write_wrapped(std::string indent, std::string_view text) {
    while (text.starts_with(' ')) {  // a line's own indent (the typed traits')
      indent += ' ';
      text.remove_prefix(1);
    }
    const bool comment = text.starts_with("// ");
    const std::string continuation = comment ? indent : indent + "    ";
    std::string continued;
    bool broken = false;
    for (;;) {
      const std::string& at_indent = broken ? continuation : indent;
      if (at_indent.size() + text.size() <= kColumnLimit) break;
      const size_t at = comment ? comment_break(text, kColumnLimit - at_indent.size())
                                : code_break(text, kColumnLimit - at_indent.size());
      if (at == std::string_view::npos) break;
      write_line(at_indent, text.substr(0, at));
      std::string_view rest = text.substr(at);
      while (rest.starts_with(' ')) rest.remove_prefix(1);
      continued = (comment ? "// " : "") + std::string(rest);
      text = continued;
      broken = true;
    }
    write_line(broken ? continuation : indent, text);
  }

  void write_line(const std::string& indent, std::string_view text) {
    while (text.ends_with(' ')) text.remove_suffix(1);
    out_ += indent;
    out_ += text;
    out_ += '\n';
  }

  std::string out_;
  size_t indent_ = 0;
};

// Which side implements an interface's functions in this world.
enum class Side { Import, Export };

class Generator {
 public:
  using Containers = BindgenOptions::Containers;

  Generator(const WorldDecoder& world, const ComponentInfo& info, std::string root_namespace,
            std::string interface_namespace, std::string world_title, std::string world_class, Containers containers)
      : containers_(containers),
        world_(world),
        info_(info),
        root_(std::move(root_namespace)),
        interface_prefix_(std::move(interface_namespace)),
        world_title_(std::move(world_title)),
        world_class_(std::move(world_class)) {}

  // One header, or (split) one per interface and `world.hpp` including
  // them all, each including the headers of the interfaces it uses.
  std::vector<BindingFile> generate(const std::string& source_name, bool split) {
    collect();
    channels_ = uses_channels();
    if (!split) {
      Header h;
      preamble(h, source_name, "");
      for (const Scope& scope : scopes_) emit_scope(h, scope);
      emit_world(h);
      return {{"", h.take()}};
    }
    std::vector<BindingFile> files;
    std::string world_includes;
    for (const Scope& scope : scopes_) {
      if (!scope.iface) continue;
      Header body;
      emit_scope(body, scope);
      Header h;
      preamble(h, source_name, scope.wit_name);
      for (const Scope* used : uses_[&scope]) h.line("#include \"" + file_name(*used) + "\"");
      files.push_back({file_name(scope), h.take() + body.take()});
      world_includes += "#include \"" + file_name(scope) + "\"\n";
    }
    Header body;
    emit_world(body);
    Header h;
    preamble(h, source_name, "");
    files.push_back({"world.hpp", h.take() + world_includes + body.take()});
    return files;
  }

 private:
  void preamble(Header& h, const std::string& source_name, const std::string& interface) const {
    h.line("// Generated by `cmhost bindgen` from " + source_name + ": do not edit.");
    if (!interface.empty()) {
      h.line("// Typed host bindings for the interface " + interface + " of the world " + world_title_ +
             " (world.hpp has the whole world).");
    } else {
      h.line("// Typed host bindings for the world " + world_title_ + ": its types as C++ types, an");
      h.line("// abstract class per imported interface for the host to implement (add_to_linker");
      h.line("// adds an implementation to a cmhost::Linker), and a class per exported interface");
      h.line("// calling the instance's functions with C++ values.");
    }
    h.line("#pragma once");
    h.line();
    for (const char* header : {"array", "cstdint", "map", "memory", "memory_resource", "optional", "string", "tuple",
                               "utility", "variant", "vector"})
      h.line(std::string("#include <") + header + ">");
    h.line();
    h.line("#include \"cmhost/cmhost.hpp\"");
    if (channels_) h.line("#include \"cmhost/streams.hpp\"");
  }

  // A set of named types and functions printed in one namespace: an
  // interface, or the world itself.
  struct Scope {
    const Interface* iface = nullptr;  // null: the world
    std::string ns;                    // its C++ namespace
    std::string wit_name;              // for messages and export names: `ns:pkg/iface@v`, a label, or ""
    std::vector<const NamedType*> types;
    std::vector<const Function*> imported, exported;
    bool has_import = false, has_export = false;  // the world imports, exports it
  };

  // `wasi-io-streams.hpp`: the parts of the interface's namespace below
  // the interface namespace option, in kebab case.
  std::string file_name(const Scope& scope) const {
    std::string_view ns = scope.ns;
    if (!interface_prefix_.empty() && ns.starts_with(interface_prefix_ + "::")) ns.remove_prefix(interface_prefix_.size() + 2);
    std::string name;
    for (size_t start = 0; start <= ns.size();) {
      const size_t end = std::min(ns.find("::", start), ns.size());
      std::string part(ns.substr(start, end - start));
      while (part.ends_with('_')) part.pop_back();  // a keyword's mark
      std::replace(part.begin(), part.end(), '_', '-');
      name += (name.empty() ? "" : "-") + part;
      start = end + 2;
    }
    return name + ".hpp";
  }

  // ---- Gathering: one scope per interface, in the world's order ----

  void collect() {
    Scope world_scope;
    world_scope.ns = root_;
    for (const auto& t : world_.world_types()) world_scope.types.push_back(t.get());
    for (const WorldItem& item : world_.imports()) add_item(item, Side::Import, world_scope);
    for (const WorldItem& item : world_.exports()) add_item(item, Side::Export, world_scope);
    // Interfaces first (the world's types may use theirs), in the order the
    // world names them; the world last.
    scopes_.push_back(std::move(world_scope));
    for (const Scope& s : scopes_)
      if (s.iface) scope_of_[s.iface] = &s;
    world_scope_ = &scopes_.back();
  }

  void add_item(const WorldItem& item, Side side, Scope& world_scope) {
    if (item.kind == WorldItem::Kind::Type) return;  // in world_types
    if (item.kind == WorldItem::Kind::Function) {
      (side == Side::Import ? world_scope.has_import : world_scope.has_export) = true;
      (side == Side::Import ? world_scope.imported : world_scope.exported).push_back(&item.function);
      return;
    }
    Scope* scope = nullptr;
    for (Scope& s : scopes_)
      if (s.iface == item.interface) scope = &s;
    if (!scope) {
      Scope fresh;
      fresh.iface = item.interface;
      fresh.ns = interface_namespace(item);
      fresh.wit_name = interface_key(item);
      for (const auto& t : item.interface->types) fresh.types.push_back(t.get());
      scopes_.push_back(std::move(fresh));
      scope = &scopes_.back();
    }
    bool& seen = side == Side::Import ? scope->has_import : scope->has_export;
    if (seen) return;
    seen = true;
    for (const Function& f : item.interface->functions) {
      (side == Side::Import ? scope->imported : scope->exported).push_back(&f);
    }
  }

  static std::string interface_key(const WorldItem& item) {
    if (!item.interface->name) return item.name;
    const Package& p = *item.interface->package;
    return p.namespace_name + ":" + p.name + "/" + *item.interface->name + (p.version ? "@" + *p.version : "");
  }

  // `ns::pkg::iface`; with `v1_2_0` after the package when the world uses
  // two versions of it.
  std::string interface_namespace(const WorldItem& item) const {
    if (!item.interface->name) return root_ + "::" + snake(item.name);
    const Package& p = *item.interface->package;
    std::string ns = (interface_prefix_.empty() ? "" : interface_prefix_ + "::") + snake(p.namespace_name) +
                     "::" + snake(p.name);
    const auto packages = world_.packages();
    const bool versions = std::any_of(packages.begin(), packages.end(), [&](const Package* other) {
      return other != &p && other->namespace_name == p.namespace_name && other->name == p.name;
    });
    if (versions && p.version) {
      std::string v = "v" + *p.version;
      std::replace_if(v.begin(), v.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      ns += "::" + v;
    }
    return ns + "::" + snake(*item.interface->name);
  }

  // Whether a value of the type holds a handle anywhere (own, borrow,
  // stream, future, error-context).
  static bool holds_handle(const abi::Type& t) {
    switch (t.kind()) {
      case TypeKind::Own:
      case TypeKind::Borrow:
      case TypeKind::Stream:
      case TypeKind::Future:
      case TypeKind::ErrorContext: return true;
      default: break;
    }
    for (const auto& f : t.fields())
      if (holds_handle(*f.type)) return true;
    for (const auto& c : t.cases())
      if (c.type && holds_handle(*c.type)) return true;
    return t.element() && holds_handle(*t.element());
  }
  // Whether a value of the type holds a stream or a future anywhere.
  static bool holds_channel(const abi::Type& t) {
    if (t.kind() == TypeKind::Stream || t.kind() == TypeKind::Future) return true;
    for (const auto& f : t.fields())
      if (holds_channel(*f.type)) return true;
    for (const auto& c : t.cases())
      if (c.type && holds_channel(*c.type)) return true;
    return t.element() && holds_channel(*t.element());
  }
  bool uses_channels() const {
    for (const Scope& scope : scopes_)
      for (const auto* list : {&scope.imported, &scope.exported})
        for (const Function* f : *list) {
          for (const auto& p : f->type->params)
            if (holds_channel(*p)) return true;
          if (f->type->result && holds_channel(*f->type->result)) return true;
        }
    return false;
  }

  // ---- C++ spellings of WIT types ----

  // The containers of the chosen family (BindgenOptions::Containers).
  std::string string_type() const {
    switch (containers_) {
      case Containers::Frame: return "cmhost::abi::typed::FrameString";
      case Containers::Pmr: return "std::pmr::string";
      default: return "std::string";
    }
  }
  std::string list_type(const std::string& element) const {
    switch (containers_) {
      case Containers::Frame: return "cmhost::abi::typed::FrameVector<" + element + ">";
      case Containers::Pmr: return "std::pmr::vector<" + element + ">";
      default: return "std::vector<" + element + ">";
    }
  }
  std::string map_type(const std::string& key, const std::string& value) const {
    // Frame maps would need a node allocator of their own: frame headers keep std::map.
    return (containers_ == Containers::Pmr ? "std::pmr::map<" : "std::map<") + key + ", " + value + ">";
  }

  // Values passed by value and never moved: numbers, enums, flags, handles.
  static bool is_small(const abi::TypeRef& type) {
    switch (type->kind()) {
      case TypeKind::String:
      case TypeKind::List:
      case TypeKind::FixedList:
      case TypeKind::Map:
      case TypeKind::Record:
      case TypeKind::Variant:
      case TypeKind::Option:
      case TypeKind::Result:
      case TypeKind::Tuple: return false;
      default: return true;
    }
  }
  // A parameter of a call into the guest.
  std::string guest_param(const abi::TypeRef& type, const Scope& scope) const {
    return is_small(type) ? cpp_type(type, scope) : "const " + cpp_type(type, scope) + "&";
  }

  const TypeList& scope_types(const Scope& scope) const {
    return scope.iface ? scope.iface->types : world_.world_types();
  }

  std::string qualified(const NamedType& named, const Scope& from) const {
    const Scope& owner = named.owner ? *scope_of_.at(named.owner) : *world_scope_;
    const std::string name = pascal(named.name);
    if (&owner == &from) return name;
    if (owner.iface && emitting_ && &owner != emitting_) uses_[emitting_].insert(&owner);
    return "::" + owner.ns + "::" + name;
  }

  // The C++ type of a resource, which is also the tag of its handles.
  std::string resource_class(const abi::Type& handle, const Scope& from) const {
    const NamedType* named = world_.by_id(info_.handle_name(handle), scope_types(from));
    if (!named || !named->resource) named = world_.resource_type(*handle.resource(), scope_types(from));
    if (!named) unsupported("a handle of the resource `" + handle.resource()->name + "` that the world does not name");
    while (named->alias_of && named->alias_of->resource) named = named->alias_of;
    return qualified(*named, from);
  }

  // `view`: the type as read in place from guest memory (string_view,
  // ListView, the `View` twins of named types), for the views family.
  std::string cpp_type(const abi::TypeRef& type, const Scope& from, bool view = false) const {
    if (!type) return "void";
    if (type->kind() != TypeKind::Own && type->kind() != TypeKind::Borrow)
      if (const NamedType* named = world_.named(*type, scope_types(from)))
        return qualified(*named, from) + (view && holds_view(*type) ? "View" : "");
    return structure(*type, from, view);
  }

  // Whether a value of the type holds strings, lists or maps (so the views
  // family gives it a `View` twin).
  static bool holds_view(const abi::Type& type) {
    switch (type.kind()) {
      case TypeKind::String:
      case TypeKind::List:
      case TypeKind::Map: return true;
      default: break;
    }
    for (const auto& f : type.fields())
      if (holds_view(*f.type)) return true;
    for (const auto& c : type.cases())
      if (c.type && holds_view(*c.type)) return true;
    return type.element() && holds_view(*type.element());
  }

  std::string structure(const abi::Type& type, const Scope& from, bool view = false) const {
    switch (type.kind()) {
      case TypeKind::Bool: return "bool";
      case TypeKind::S8: return "int8_t";
      case TypeKind::U8: return "uint8_t";
      case TypeKind::S16: return "int16_t";
      case TypeKind::U16: return "uint16_t";
      case TypeKind::S32: return "int32_t";
      case TypeKind::U32: return "uint32_t";
      case TypeKind::S64: return "int64_t";
      case TypeKind::U64: return "uint64_t";
      case TypeKind::F32: return "float";
      case TypeKind::F64: return "double";
      case TypeKind::Char: return "char32_t";
      case TypeKind::String: return view ? "std::string_view" : string_type();
      case TypeKind::List:
        return view ? "cmhost::abi::typed::ListView<" + cpp_type(type.element(), from, true) + ">"
                    : list_type(cpp_type(type.element(), from));
      case TypeKind::FixedList:
        return "std::array<" + cpp_type(type.element(), from, view) + ", " + std::to_string(type.fixed_length()) + ">";
      case TypeKind::Map:
        return map_type(cpp_type(type.element()->fields()[0].type, from, view),
                        cpp_type(type.element()->fields()[1].type, from, view));
      case TypeKind::Option: return "std::optional<" + cpp_type(type.cases()[1].type, from, view) + ">";
      case TypeKind::Result:
        return "cmhost::abi::typed::Result<" + cpp_type(type.cases()[0].type, from, view) + ", " +
               cpp_type(type.cases()[1].type, from, view) + ">";
      case TypeKind::Tuple: {
        std::string out = "std::tuple<";
        for (size_t i = 0; i < type.fields().size(); ++i)
          out += (i ? ", " : "") + cpp_type(type.fields()[i].type, from, view);
        return out + ">";
      }
      case TypeKind::Own: return "cmhost::abi::typed::Own<" + resource_class(type, from) + ">";
      case TypeKind::Borrow: return "cmhost::abi::typed::Borrow<" + resource_class(type, from) + ">";
      case TypeKind::ErrorContext: return "cmhost::abi::typed::ErrorContext";
      case TypeKind::Stream: return "cmhost::abi::typed::Stream<" + cpp_type(type.element(), from) + ">";
      case TypeKind::Future: return "cmhost::abi::typed::Future<" + cpp_type(type.element(), from) + ">";
      default: unsupported("the type " + type.to_wit() + " has no name the bindings could give it");
    }
  }

  // ---- Types ----

  void emit_scope(Header& h, const Scope& scope) {
    if (!scope.iface) return;  // the world's own scope comes last (emit_world)
    emitting_ = &scope;
    h.line();
    h.line("// " + (scope.iface->name ? "interface " + scope.wit_name : "the world's interface `" + scope.wit_name + "`"));
    emit_types(h, scope);
    if (!has_host(scope) && scope.exported.empty()) return;
    if (!scope.types.empty()) h.line();
    h.open_namespace(scope.ns);
    emit_host(h, scope, "Host");
    emit_guest(h, scope, "Guest");
    h.close_namespace(scope.ns);
  }

  // The scope's types in its namespace, then what the typed lifts and
  // lowers need to know of them (before anything instantiates those).
  void emit_types(Header& h, const Scope& scope) {
    if (scope.types.empty()) return;
    h.open_namespace(scope.ns);
    // Resources are declared first: handles name them as tags.
    for (const NamedType* t : scope.types)
      if (t->resource && !t->alias_of) h.line("class " + pascal(t->name) + ";");
    for (const NamedType* t : scope.types)
      if (!t->resource || t->alias_of) emit_type(h, scope, *t);
    for (const NamedType* t : scope.types)
      if (t->resource && !t->alias_of) emit_resource(h, scope, *t);
    h.close_namespace(scope.ns);
    if (traits_.empty()) return;
    h.line();
    h.open_namespace("cmhost::abi::typed");
    for (const std::string& t : traits_) h.line(t);
    h.close_namespace("cmhost::abi::typed");
    traits_.clear();
  }

  void emit_resource(Header& h, const Scope& scope, const NamedType& t) {
    const std::string name = pascal(t.name);
    const std::vector<const Function*> methods = resource_functions(scope.imported, t, FuncKind::Method);
    if (!host_resource(t)) return;  // the guest's: its declaration names its handles
    h.line();
    h.line("// resource " + t.name + ": the host's objects implement it; handles are Own<" + name + "> and Borrow<" +
           name + ">.");
    h.open("class " + name + " {");
    h.access("public:");
    h.line("virtual ~" + name + "() = default;");
    for (const Function* f : methods) h.line("virtual " + signature(*f, scope, /*skip_self=*/true) + " = 0;");
    h.close();
  }

  static std::vector<const Function*> resource_functions(const std::vector<const Function*>& funcs, const NamedType& t,
                                                         FuncKind kind) {
    std::vector<const Function*> out;
    for (const Function* f : funcs)
      if (f->resource == &t && f->kind == kind) out.push_back(f);
    return out;
  }

  // The type, and in the views family its `View` twin when it holds
  // strings, lists or maps.
  void emit_type(Header& h, const Scope& scope, const NamedType& t) {
    emit_type(h, scope, t, false);
    if (containers_ == Containers::Views && !t.resource && t.value && holds_view(*t.value)) emit_type(h, scope, t, true);
  }

  void emit_type(Header& h, const Scope& scope, const NamedType& t, bool view) {
    const std::string suffix = view ? "View" : "";
    const std::string name = pascal(t.name) + suffix;
    h.line();
    if (t.alias_of) {
      h.line("using " + name + " = " + qualified(*t.alias_of, scope) + suffix + ";");
      return;
    }
    if (t.resource) return;
    const abi::Type& type = *t.value;
    const std::string full = "::" + scope.ns + "::" + name;
    switch (type.kind()) {
      case TypeKind::Record: {
        h.open("struct " + name + " {");
        std::string fields;
        for (const auto& field : type.fields()) {
          h.line(cpp_type(field.type, scope, view) + " " + snake(field.name) + "{};");
          fields += std::string(fields.empty() ? "" : ", ") + "field(" + quote(field.name) + ", &T::" + snake(field.name) + ")";
        }
        if (!view) h.line("bool operator==(const " + name + "&) const = default;");  // views compare their contents
        h.close();
        traits_.push_back("template <>");
        traits_.push_back("struct Record<" + full + "> {");
        traits_.push_back("  using T = " + full + ";");
        traits_.push_back("  static constexpr auto fields = std::make_tuple(" + fields + ");");
        traits_.push_back("};");
        if (!view) emit_wit_type(scope, full, type);
        return;
      }
      case TypeKind::Variant: {
        const std::string cases_ns = snake(t.name) + (view ? "_view" : "");
        h.open_namespace(cases_ns);
        std::string alternatives;
        for (const auto& c : type.cases()) {
          // Spelled in full: the case's own name would hide a type of the same name.
          const std::string payload = c.type ? cpp_type(c.type, nowhere_, view) : "void";
          h.line("struct " + pascal(c.name) + " : cmhost::abi::typed::Case<" + payload + "> {" +
                 (c.type ? " using Case::Case; " : "") + "};");
          alternatives += std::string(alternatives.empty() ? "" : ", ") + cases_ns + "::" + pascal(c.name);
        }
        h.close_namespace(cases_ns);
        h.line("using " + name + " = std::variant<" + alternatives + ">;");
        if (!view) emit_wit_type(scope, full, type);
        return;
      }
      case TypeKind::Enum: {
        const size_t n = type.labels().size();
        const char* underlying = n <= 256 ? "uint8_t" : n <= 65536 ? "uint16_t" : "uint32_t";
        std::string labels;
        for (const auto& label : type.labels()) labels += std::string(labels.empty() ? "" : ", ") + snake(label);
        h.line("enum class " + name + " : " + underlying + " { " + labels + " };");
        traits_.push_back("template <>");
        traits_.push_back("struct Enum<" + full + "> {");
        traits_.push_back("  static constexpr size_t count = " + std::to_string(n) + ";");
        traits_.push_back("};");
        emit_wit_type(scope, full, type);
        return;
      }
      case TypeKind::Flags: {
        const auto labels = type.labels();
        h.open("struct " + name + " : cmhost::abi::typed::Flags<" + name + ", " + std::to_string(labels.size()) + "> {");
        for (const auto& label : labels) h.line("static const " + name + " " + snake(label) + ";");
        h.close();
        for (size_t i = 0; i < labels.size(); ++i)
          h.line("inline constexpr " + name + " " + name + "::" + snake(labels[i]) + "{{uint32_t{1} << " +
                 std::to_string(i) + "}};");
        if (!view) emit_wit_type(scope, full, type);
        return;
      }
      default: h.line("using " + name + " = " + structure(type, scope, view) + ";"); return;
    }
  }

  // WitType<full> (abi/typed/wit_type.hpp): the type's component type, so
  // the host can make streams and futures of it. Not for types holding
  // handles, whose resource types are the host's run-time choice.
  void emit_wit_type(const Scope& scope, const std::string& full, const abi::Type& type) {
    if (holds_handle(type)) return;
    traits_.push_back("template <>");
    traits_.push_back("struct WitType<" + full + "> {");
    traits_.push_back("  static TypeRef get() {");
    traits_.push_back("    static const TypeRef type = " + wit_expr(type, scope, true) + ";");
    traits_.push_back("    return type;");
    traits_.push_back("  }");
    traits_.push_back("};");
  }

  // The expression making `type` with abi::Type's constructors (in
  // namespace cmhost::abi::typed); named types inside it by wit_type<>().
  std::string wit_expr(const abi::Type& type, const Scope& scope, bool top = false) const {
    if (!top && type.kind() != TypeKind::Own && type.kind() != TypeKind::Borrow)
      if (const NamedType* named = world_.named(type, scope_types(scope)))
        if (!named->resource) return "wit_type<" + qualified(*named, nowhere_) + ">()";
    auto sub = [&](const abi::TypeRef& t) { return t ? wit_expr(*t, scope) : std::string("nullptr"); };
    auto labels = [&]() {
      std::string out;
      for (const auto& label : type.labels()) out += std::string(out.empty() ? "" : ", ") + quote(label);
      return "{" + out + "}";
    };
    switch (type.kind()) {
      case TypeKind::Bool: return "Type::bool_()";
      case TypeKind::S8: return "Type::s8()";
      case TypeKind::U8: return "Type::u8()";
      case TypeKind::S16: return "Type::s16()";
      case TypeKind::U16: return "Type::u16()";
      case TypeKind::S32: return "Type::s32()";
      case TypeKind::U32: return "Type::u32()";
      case TypeKind::S64: return "Type::s64()";
      case TypeKind::U64: return "Type::u64()";
      case TypeKind::F32: return "Type::f32()";
      case TypeKind::F64: return "Type::f64()";
      case TypeKind::Char: return "Type::char_()";
      case TypeKind::String: return "Type::string()";
      case TypeKind::List: return "Type::list(" + sub(type.element()) + ")";
      case TypeKind::FixedList:
        return "Type::fixed_list(" + sub(type.element()) + ", " + std::to_string(type.fixed_length()) + ")";
      case TypeKind::Map:
        return "Type::map(" + sub(type.element()->fields()[0].type) + ", " + sub(type.element()->fields()[1].type) + ")";
      case TypeKind::Option: return "Type::option(" + sub(type.cases()[1].type) + ")";
      case TypeKind::Result: return "Type::result(" + sub(type.cases()[0].type) + ", " + sub(type.cases()[1].type) + ")";
      case TypeKind::Tuple: {
        std::string out;
        for (const auto& f : type.fields()) out += (out.empty() ? "" : ", ") + sub(f.type);
        return "Type::tuple({" + out + "})";
      }
      case TypeKind::Record: {
        std::string out;
        for (const auto& f : type.fields()) out += (out.empty() ? "" : ", ") + ("{" + quote(f.name) + ", " + sub(f.type) + "}");
        return "Type::record({" + out + "})";
      }
      case TypeKind::Variant: {
        std::string out;
        for (const auto& c : type.cases()) out += (out.empty() ? "" : ", ") + ("{" + quote(c.name) + ", " + sub(c.type) + "}");
        return "Type::variant({" + out + "})";
      }
      case TypeKind::Enum: return "Type::enum_(" + labels() + ")";
      case TypeKind::Flags: return "Type::flags(" + labels() + ")";
      default: unsupported("the type " + type.to_wit() + " has no component type the bindings could write");
    }
  }

  // ---- Functions ----

  // A resource the host implements: one defined by an interface (or the
  // world) the world imports. add_to_linker defines it.
  bool host_resource(const NamedType& r) const {
    const Scope& owner = r.owner ? *scope_of_.at(r.owner) : *world_scope_;
    return owner.has_import && !r.alias_of;
  }
  // The resource a `use` of it (a chain of them) stands for.
  static const NamedType* origin_of(const NamedType* t) {
    while (t && t->alias_of && t->alias_of->resource) t = t->alias_of;
    return t;
  }
  // The scope's name of the host resource a handle of kind `kind` refers
  // to (its own resource, or one it uses from another interface), or null.
  const NamedType* handle_resource(const abi::TypeRef& type, TypeKind kind, const Scope& scope) const {
    if (!type || type->kind() != kind) return nullptr;
    const NamedType* named = world_.by_id(info_.handle_name(*type), scope_types(scope));
    if (!named || !named->resource) named = world_.resource_type(*type->resource(), scope_types(scope));
    // add_to_linker defines or looks up the scope's own names only.
    if (!named || named->owner != scope.iface) return nullptr;
    return host_resource(*origin_of(named)) ? named : nullptr;
  }

  // A host function's parameter: a borrow of a host resource is the object,
  // a stream or future (of values) the reader of it.
  std::string host_param(const abi::TypeRef& type, const Scope& scope) const {
    if (const NamedType* r = handle_resource(type, TypeKind::Borrow, scope)) return qualified(*r, scope) + "&";
    if (const char* reader = channel_reader(*type)) return std::string(reader) + "<" + cpp_type(type->element(), scope) + ">";
    return cpp_type(type, scope);
  }
  // The host's reader class of a stream or future parameter with elements, or null.
  static const char* channel_reader(const abi::Type& type) {
    if (!type.element()) return nullptr;
    if (type.kind() == TypeKind::Stream) return "cmhost::StreamReader";
    if (type.kind() == TypeKind::Future) return "cmhost::FutureReader";
    return nullptr;
  }
  // A host function's result: an own handle of a host resource is a new object.
  std::string host_result(const Function& f, const Scope& scope) const {
    if (const NamedType* r = handle_resource(f.type->result, TypeKind::Own, scope))
      return "std::unique_ptr<" + qualified(*r, scope) + ">";
    return cpp_type(f.type->result, scope);
  }

  // `R name(cmhost::Caller& caller, T a, U b)`, the C++ form of a function
  // the host implements: the caller gives the store (its data, handles of
  // host resources) and the calling guest's memory.
  // An async function returns nothing and completes `completion` with its
  // result, during the call or later, from any thread.
  std::string signature(const Function& f, const Scope& scope, bool skip_self) const {
    const bool async = f.type->async;
    std::string out = (async ? std::string("void") : host_result(f, scope)) + " " + host_method_name(f) +
                      "(cmhost::Caller& caller";
    const size_t first = skip_self && f.kind == FuncKind::Method ? 1 : 0;
    for (size_t i = first; i < f.type->params.size(); ++i)
      out += ", " + host_param(f.type->params[i], scope) + " " + snake(f.type->param_names[i]);
    if (async) out += ", " + completion_type(f, scope) + " completion";
    return out + ")";
  }
  std::string completion_type(const Function& f, const Scope& scope) const {
    return "cmhost::TypedCompletion<" + cpp_type(f.type->result, scope) + ">";
  }

  static std::string host_method_name(const Function& f) {
    switch (f.kind) {
      case FuncKind::Freestanding:
      case FuncKind::Method: return snake(f.item_name);
      case FuncKind::Constructor: return snake(f.resource->name) + "_new";
      case FuncKind::Static: return snake(f.resource->name) + "_" + snake(f.item_name);
    }
    return snake(f.item_name);
  }

  std::string import_name(const Scope& scope, const Function& f) const {
    return scope.wit_name.empty() ? f.name : scope.wit_name + "#" + f.name;
  }

  // The abstract class of an imported interface (or the world's imported
  // functions) and its add_to_linker.
  void emit_host(Header& h, const Scope& scope, const std::string& class_name) {
    std::vector<const Function*> on_host;
    for (const Function* f : scope.imported)
      if (f->kind != FuncKind::Method) on_host.push_back(f);
    const std::vector<const NamedType*> resources = host_resources(scope);
    if (!has_host(scope)) return;
    h.line();
    h.line(resources.empty() ? "// What the host implements."
                             : "// What the host implements; resource methods are on the resources' classes.");
    h.open("class " + class_name + " {");
    h.access("public:");
    h.line("virtual ~" + class_name + "() = default;");
    for (const Function* f : on_host) h.line("virtual " + signature(*f, scope, false) + " = 0;");
    h.close();
    std::string returned = "void";
    if (!resources.empty()) {
      h.line();
      h.line("// The host resource types add_to_linker defined: they make handles of the host's objects.");
      h.open("struct Resources {");
      for (const NamedType* r : resources) h.line("cmhost::HostResource<" + pascal(r->name) + "> " + snake(r->name) + ";");
      h.close();
      returned = "Resources";
    }
    h.line();
    h.line("// Supplies the imports with `host` (kept alive by the linker).");
    h.open("inline " + returned + " add_to_linker(cmhost::Linker& linker, std::shared_ptr<" + class_name + "> host) {");
    if (on_host.empty()) h.line("(void)host;  // only resource methods, called on the resources' objects");
    for (const NamedType* r : resources)
      h.line("auto " + resource_var(*r) + " = linker.define_resource<" + pascal(r->name) + ">(" +
             quote(resource_import(scope, *r)) + ");");
    // Resources used from other interfaces: added before this one (as the
    // world orders them), supplied again under this interface's names.
    for (const NamedType* r : used_host_resources(scope)) {
      const NamedType& origin = *origin_of(r);
      const Scope& from = origin.owner ? *scope_of_.at(origin.owner) : *world_scope_;
      h.line("auto " + resource_var(*r) + " = linker.resource<" + pascal(r->name) + ">(" +
             quote(resource_import(from, origin)) + ");");
      h.line("linker.define_resource(" + quote(resource_import(scope, *r)) + ", " + resource_var(*r) + ");");
    }
    for (const Function* f : scope.imported) emit_wrap(h, scope, *f);
    if (!resources.empty()) {
      std::string fields;
      for (const NamedType* r : resources) fields += (fields.empty() ? "" : ", ") + resource_var(*r);
      h.line("return Resources{" + fields + "};");
    }
    h.close("}");
  }

  // The resources of the scope the host implements, which add_to_linker defines.
  std::vector<const NamedType*> host_resources(const Scope& scope) const {
    std::vector<const NamedType*> out;
    for (const NamedType* t : scope.types)
      if (t->resource && t->owner == scope.iface && host_resource(*t)) out.push_back(t);
    return out;
  }
  // The host resources of other interfaces the scope `use`s: the linker
  // supplies them under the scope's names too.
  std::vector<const NamedType*> used_host_resources(const Scope& scope) const {
    std::vector<const NamedType*> out;
    for (const NamedType* t : scope.types)
      if (t->resource && t->alias_of && t->owner == scope.iface && host_resource(*origin_of(t))) out.push_back(t);
    return out;
  }
  // The import name of a resource of `scope`.
  static std::string resource_import(const Scope& scope, const NamedType& r) {
    return scope.wit_name.empty() ? r.name : scope.wit_name + "#" + r.name;
  }
  // Whether the scope has a Host class and an add_to_linker.
  bool has_host(const Scope& scope) const {
    return !scope.imported.empty() || !host_resources(scope).empty() || !used_host_resources(scope).empty();
  }

  static std::string resource_var(const NamedType& r) { return snake(r.name) + "_resource"; }

  // One import: the guest's call lifted into C++ values, the host's answer
  // lowered back; handles of host resources become objects and back.
  void emit_wrap(Header& h, const Scope& scope, const Function& f) {
    std::string params = "cmhost::Caller& caller";
    std::string args;
    std::set<std::string> captures;
    if (f.kind != FuncKind::Method) captures.insert("host");
    const size_t first = f.kind == FuncKind::Method ? 1 : 0;
    if (f.kind == FuncKind::Method) {
      params += ", " + cpp_type(f.type->params[0], scope) + " self";
      captures.insert(resource_var(*f.resource));
    }
    for (size_t i = first; i < f.type->params.size(); ++i) {
      const std::string name = snake(f.type->param_names[i]);
      params += ", " + cpp_type(f.type->params[i], scope) + " " + name;
      std::string arg = is_small(f.type->params[i]) ? name : "std::move(" + name + ")";
      if (const NamedType* r = handle_resource(f.type->params[i], TypeKind::Borrow, scope)) {
        arg = resource_var(*r) + ".get(caller.store(), " + name + ")";
        captures.insert(resource_var(*r));
      } else if (channel_reader(*f.type->params[i])) {
        arg = host_param(f.type->params[i], scope) + "(caller.store(), " + name + ")";
      }
      args += (args.empty() ? "" : ", ") + arg;
    }
    const bool async = f.type->async;
    if (async) {
      params += ", " + completion_type(f, scope) + " completion";
      args += (args.empty() ? "" : ", ") + std::string("std::move(completion)");
    }
    args = "caller" + (args.empty() ? "" : ", " + args);
    std::string call = f.kind == FuncKind::Method
                           ? resource_var(*f.resource) + ".get(caller.store(), self)." + snake(f.item_name) + "(" + args + ")"
                           : "host->" + host_method_name(f) + "(" + args + ")";
    if (const NamedType* r = async ? nullptr : handle_resource(f.type->result, TypeKind::Own, scope)) {
      call = resource_var(*r) + ".make_own(caller.store(), " + call + ")";
      captures.insert(resource_var(*r));
    }
    std::string capture_list;
    for (const std::string& c : captures) capture_list += (capture_list.empty() ? "" : ", ") + c;
    h.open(std::string(async ? "linker.func_wrap_async(" : "linker.func_wrap(") + quote(import_name(scope, f)) + ", [" +
           capture_list + "](" + params + ") {");
    h.line((async ? "" : "return ") + call + ";");
    h.close("});");
  }

  // The class calling an exported interface's functions (or the world's).
  void emit_guest(Header& h, const Scope& scope, const std::string& class_name) {
    if (scope.exported.empty()) return;
    h.line();
    h.line("// Calls the instance's exports; the signatures are checked once, by the constructor.");
    h.open("class " + class_name + " {");
    h.access("public:");
    std::vector<std::string> init;
    for (const Function* f : scope.exported) init.push_back(member_init(*f, scope, import_name(scope, *f)));
    emit_constructor(h, "explicit " + class_name + "(const cmhost::Instance& instance)", init);
    emit_guest_methods(h, scope);
    h.line();
    h.access("private:");
    emit_guest_members(h, scope);
    h.close();
  }

  // `head` with its member initialisers, one per line.
  static void emit_constructor(Header& h, const std::string& head, const std::vector<std::string>& init) {
    h.line(head);
    for (size_t i = 0; i < init.size(); ++i)
      h.line(std::string(i == 0 ? "    : " : "      ") + init[i] + (i + 1 < init.size() ? "," : " {}"));
  }

  // One method per exported function, calling its TypedFunc member.
  void emit_guest_methods(Header& h, const Scope& scope) const {
    for (const Function* f : scope.exported) {
      std::string params = "cmhost::Store& store";
      std::string args = "store";
      for (size_t i = 0; i < f->type->params.size(); ++i) {
        params += ", " + guest_param(f->type->params[i], scope) + " " + snake(f->type->param_names[i]);
        args += ", " + snake(f->type->param_names[i]);
      }
      if (f->type->async) {
        // Called through the store's event loop: to its end, or started.
        const std::string result = cpp_type(f->type->result, scope);
        h.line(result + " " + guest_method_name(*f) + "(" + params + ") const { return " + member(*f) + ".call(" +
               args + "); }");
        h.line("cmhost::TypedPendingCall<" + result + "> " + guest_method_name(*f) + "_async(" + params +
               ") const { return " + member(*f) + ".call_async(" + args + "); }");
        continue;
      }
      if (viewed_result(*f)) {
        h.line("// `read(const " + cpp_type(f->type->result, scope, true) +
               "&)` sees the result in the guest's memory, until post-return.");
        h.line("template <class Read>");
        h.line("void " + guest_method_name(*f) + "(" + params + ", Read&& read) const { " + member(*f) +
               ".call_viewing(" + args + ", std::forward<Read>(read)); }");
        continue;
      }
      h.line(cpp_type(f->type->result, scope) + " " + guest_method_name(*f) + "(" + params + ") const { return " +
             member(*f) + ".call(" + args + "); }");
    }
  }
  // In the views family, a result holding strings or lists is read in place.
  bool viewed_result(const Function& f) const {
    return containers_ == Containers::Views && !f.type->async && f.type->result && holds_view(*f.type->result);
  }
  void emit_guest_members(Header& h, const Scope& scope) const {
    for (const Function* f : scope.exported)
      h.line(std::string(f->type->async ? "cmhost::TypedAsyncFunc<" : "cmhost::TypedFunc<") +
             typed_signature(*f, scope) + "> " + member(*f) + ";");
  }
  // The member's initialiser: the export looked up and checked.
  std::string member_init(const Function& f, const Scope& scope, const std::string& export_name) const {
    return member(f) + (f.type->async ? "(instance.typed_async_func<" : "(instance.typed_func<") +
           typed_signature(f, scope) + ">(" + quote(export_name) + "))";
  }

  std::string typed_signature(const Function& f, const Scope& scope) const {
    std::string out = cpp_type(f.type->result, scope, viewed_result(f)) + "(";
    for (size_t i = 0; i < f.type->params.size(); ++i) out += (i ? ", " : "") + cpp_type(f.type->params[i], scope);
    return out + ")";
  }

  static std::string guest_method_name(const Function& f) {
    switch (f.kind) {
      case FuncKind::Freestanding: return snake(f.item_name);
      case FuncKind::Method: return snake(f.resource->name) + "_" + snake(f.item_name);
      case FuncKind::Constructor: return snake(f.resource->name) + "_new";
      case FuncKind::Static: return snake(f.resource->name) + "_" + snake(f.item_name);
    }
    return snake(f.item_name);
  }
  static std::string member(const Function& f) { return guest_method_name(f) + "_"; }

  // ---- The world: its own types and functions, the instance class ----

  void emit_world(Header& h) {
    const Scope& scope = *world_scope_;
    emitting_ = &scope;
    h.line();
    h.line("// the world " + world_title_);
    emit_types(h, scope);
    if (!scope.types.empty()) h.line();
    h.open_namespace(scope.ns);
    emit_host(h, scope, "Host");
    // The class wrapping an instance: the world's functions, and each
    // exported interface's Guest.
    std::vector<const Scope*> exported;
    for (const Scope& s : scopes_)
      if (s.iface && !s.exported.empty()) exported.push_back(&s);
    h.line();
    h.line("// An instance of the world: its exported functions and interfaces, checked once.");
    h.open("class " + world_class_ + " {");
    h.access("public:");
    std::vector<std::string> init = {"instance_(instance)"};
    for (const Function* f : scope.exported) init.push_back(member_init(*f, scope, f->name));
    for (const Scope* s : exported) init.push_back(snake(s->ns.substr(s->ns.rfind(':') + 1)) + "_(instance)");
    emit_constructor(h, "explicit " + world_class_ + "(cmhost::Instance instance)", init);
    h.open("static " + world_class_ + " instantiate(cmhost::Store& store, const cmhost::Component& component, const cmhost::Linker& linker) {");
    h.line("return " + world_class_ + "(linker.instantiate(store, component));");
    h.close("}");
    h.line("const cmhost::Instance& instance() const { return instance_; }");
    emit_guest_methods(h, scope);
    for (const Scope* s : exported) {
      const std::string n = snake(s->ns.substr(s->ns.rfind(':') + 1));
      h.line("const ::" + s->ns + "::Guest& " + n + "() const { return " + n + "_; }");
    }
    h.line();
    h.access("private:");
    h.line("cmhost::Instance instance_;");
    emit_guest_members(h, scope);
    for (const Scope* s : exported)
      h.line("::" + s->ns + "::Guest " + snake(s->ns.substr(s->ns.rfind(':') + 1)) + "_;");
    h.close();
    // One call supplying every import from one object implementing every Host.
    std::vector<std::string> hosts;
    for (const Scope& s : scopes_)
      if (has_host(s)) hosts.push_back(s.iface ? "::" + s.ns : "");
    h.line();
    h.line("// Supplies every import from `host`, which implements each imported interface's Host.");
    h.line("template <class H>");
    h.open("void add_to_linker(cmhost::Linker& linker, std::shared_ptr<H> host) {");
    if (hosts.empty()) {
      h.line("(void)linker;  // the world imports nothing");
      h.line("(void)host;");
    }
    for (const std::string& ns : hosts)
      h.line((ns.empty() ? std::string("add_to_linker(linker, std::static_pointer_cast<Host>(host))")
                         : ns + "::add_to_linker(linker, std::static_pointer_cast<" + ns + "::Host>(host))") +
             ";");
    h.close("}");
    h.close_namespace(scope.ns);
  }

  Containers containers_;
  const WorldDecoder& world_;
  const ComponentInfo& info_;
  std::string root_;
  std::string interface_prefix_;  // the namespace interfaces' namespaces are in; empty: the global one
  std::string world_title_;
  std::string world_class_;  // the class wrapping an instance
  std::vector<Scope> scopes_;
  std::unordered_map<const Interface*, const Scope*> scope_of_;
  const Scope* world_scope_ = nullptr;
  std::vector<std::string> traits_;
  // The interfaces whose names each scope's declarations use (split files include their headers).
  mutable std::map<const Scope*, std::set<const Scope*>> uses_;
  const Scope* emitting_ = nullptr;
  const Scope nowhere_{};  // names seen from here are qualified in full
  bool channels_ = false;  // some function passes streams or futures: the headers include cmhost/streams.hpp
};

// `a::b_c`: identifiers joined by `::`.
bool is_namespace_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t start = 0;;) {
    const size_t end = std::min(name.find("::", start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part.empty() || std::isdigit(static_cast<unsigned char>(part[0])) ||
        !std::all_of(part.begin(), part.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      return false;
    if (end == name.size()) return true;
    start = end + 2;
  }
}

std::vector<BindingFile> generate(std::span<const uint8_t> bytes, const BindgenOptions& options, bool split) {
  for (const auto& [option, value] : {std::pair{"--namespace", &options.root_namespace},
                                      std::pair{"--interface-namespace", &options.interface_namespace}})
    if (!value->empty() && !is_namespace_name(*value))
      unsupported(std::string(option) + " `" + *value + "` is not a C++ namespace (identifiers joined by ::)");
  const ComponentInfo info = ComponentInfo::from_bytes(bytes);
  // A world's encoding (wit-component's): the component exports a type
  // `name`, a component type whose one export, `ns:pkg/name@v`, is a
  // component of the world's type.
  std::vector<const NamedExtern*> worlds;
  for (const auto& e : info.type.exports)
    if (e.desc.sort == Sort::Type && e.desc.component && e.desc.component->imports.empty() &&
        e.desc.component->exports.size() == 1 && e.desc.component->exports[0].desc.sort == Sort::Component &&
        e.desc.component->exports[0].desc.component)
      worlds.push_back(&e.desc.component->exports[0]);
  const bool encoded_world = !worlds.empty() && worlds.size() == info.type.exports.size() && info.type.imports.empty();
  WorldDecoder world;
  std::string title, root_namespace = "component", world_class = "World";
  if (encoded_world) {
    const NamedExtern* chosen = nullptr;
    std::string names;
    for (const NamedExtern* w : worlds) {
      const auto parsed = parse_extern_name(w->name);
      const std::string short_name = parsed ? parsed->interface : w->name;
      const std::string unversioned = parsed ? parsed->namespace_name + ":" + parsed->package + "/" + short_name : w->name;
      names += (names.empty() ? "" : ", ") + w->name;
      if (options.world.empty() ? worlds.size() == 1
                                : options.world == w->name || options.world == unversioned || options.world == short_name)
        chosen = w;
    }
    if (!chosen)
      unsupported(options.world.empty() ? "the input has several worlds (" + names + "): choose one with --world"
                                        : "no world `" + options.world + "` in the input (it has " + names + ")");
    for (const auto& item : chosen->desc.component->imports) world.import(item, "");
    for (const auto& item : chosen->desc.component->exports) world.export_(item, "");
    title = chosen->name;
    if (const auto parsed = parse_extern_name(chosen->name)) {
      root_namespace = snake(parsed->namespace_name) + "::" + snake(parsed->package) + "::" + snake(parsed->interface);
      world_class = pascal(parsed->interface);
    }
  } else {
    for (size_t i = 0; i < info.type.imports.size(); ++i) world.import(info.type.imports[i], info.import_implements[i]);
    for (size_t i = 0; i < info.type.exports.size(); ++i) world.export_(info.type.exports[i], info.export_implements[i]);
    title = "of the component";
  }
  if (!options.root_namespace.empty()) root_namespace = options.root_namespace;
  return Generator(world, info, root_namespace, options.interface_namespace, title, world_class, options.containers)
      .generate(options.source_name, split);
}

}  // namespace

std::string generate_bindings(std::span<const uint8_t> bytes, const BindgenOptions& options) {
  return generate(bytes, options, false).front().text;
}

std::vector<BindingFile> generate_split_bindings(std::span<const uint8_t> bytes, const BindgenOptions& options) {
  return generate(bytes, options, true);
}

}  // namespace cmhost::tools
