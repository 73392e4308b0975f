#include "printer.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "cmhost/error.hpp"
#include "world.hpp"

namespace cmhost::tools {

namespace {

using namespace wit;

// ---- Names ----

// WIT keywords: a name spelled like one is printed with a leading `%`
// (printing.rs `is_keyword`).
bool is_keyword(std::string_view name) {
  static const std::unordered_set<std::string_view> keywords = {
      "use",       "type",        "func",          "u8",     "u16",     "u32",     "u64",
      "s8",        "s16",         "s32",           "s64",    "f32",     "f64",     "float32",
      "float64",   "char",        "resource",      "record", "flags",   "variant", "enum",
      "bool",      "string",      "option",        "result", "future",  "stream",  "list",
      "own",       "borrow",      "_",             "as",     "from",    "static",  "interface",
      "tuple",     "world",       "import",        "export", "package", "with",    "include",
      "constructor", "error-context", "async",     "map",
  };
  return keywords.count(name) > 0;
}

std::string escape(std::string_view name) {
  return is_keyword(name) ? "%" + std::string(name) : std::string(name);
}

// ---- Output, as printing.rs `OutputToString`: two spaces per level ----

class WitText {
 public:
  void str(std::string_view text) {
    indent_if_needed();
    out_ += text;
  }
  void newline() {
    out_ += '\n';
    needs_indent_ = true;
  }
  void indent_start() {
    out_ += " {";
    ++indent_;
    newline();
  }
  void indent_end() {
    if (indent_ > 0) --indent_;
    indent_if_needed();
    out_ += '}';
    newline();
  }
  void semicolon() {
    out_ += ';';
    newline();
  }
  std::string take() { return std::move(out_); }

 private:
  void indent_if_needed() {
    if (!needs_indent_) return;
    out_.append(2 * indent_, ' ');
    needs_indent_ = false;
  }

  std::string out_;
  size_t indent_ = 0;
  bool needs_indent_ = false;
};

// Prints a decoded world following printing.rs `WitPrinter`.
class WitPrinter {
 public:
  WitPrinter(const WorldDecoder& world, const ComponentInfo& info)
      : world_(world), info_(info), scope_(&world.world_types()) {}

  std::string print() {
    // The main package (printing.rs `print_package` with is_main).
    out_.str("package root:component");
    out_.semicolon();
    out_.newline();
    out_.str("world root");
    out_.indent_start();
    print_world();
    out_.indent_end();
    // Every other package, nested, two blank lines between them (`print`).
    const auto packages = world_.packages();
    for (size_t i = 0; i < packages.size(); ++i) {
      if (i > 0) {
        out_.newline();
        out_.newline();
      }
      const Package& package = *packages[i];
      package_ = &package;
      out_.str("package " + escape(package.namespace_name) + ":" + escape(package.name));
      if (package.version) out_.str("@" + *package.version);
      out_.indent_start();
      for (const auto& iface : package.interfaces) {
        out_.str("interface " + escape(*iface->name));
        out_.indent_start();
        print_interface(*iface);
        out_.indent_end();
      }
      out_.indent_end();
      package_ = nullptr;
    }
    return out_.take();
  }

 private:
  using ResourceFuncs = std::map<const NamedType*, std::vector<const Function*>>;

  // A blank line before every item of a block but the first (`new_item`).
  void new_item() {
    if (any_items_) out_.newline();
    any_items_ = true;
  }

  // Interface imports, then the world's types (with the functions of its
  // resources), then function imports, then a blank line and the exports
  // (`print_world`).
  void print_world() {
    const bool prev_items = any_items_;
    any_items_ = false;
    std::vector<const NamedType*> types;
    ResourceFuncs resource_funcs;
    std::vector<const WorldItem*> function_imports;
    for (const WorldItem& item : world_.imports()) {
      switch (item.kind) {
        case WorldItem::Kind::Type: types.push_back(item.type); break;
        case WorldItem::Kind::Function:
          if (item.function.resource)
            resource_funcs[item.function.resource].push_back(&item.function);
          else
            function_imports.push_back(&item);
          break;
        case WorldItem::Kind::Interface:
          print_world_item(item, "import");
          // No blank line between imports, but one after them.
          any_items_ = true;
          break;
      }
    }
    print_types(nullptr, types, resource_funcs);
    for (const WorldItem* item : function_imports) {
      print_world_item(*item, "import");
      any_items_ = true;
    }
    if (!world_.exports().empty()) new_item();
    for (const WorldItem& item : world_.exports()) print_world_item(item, "export");
    any_items_ = prev_items;
  }

  void print_world_item(const WorldItem& item, const char* keyword) {
    out_.str(keyword);
    out_.str(" ");
    if (item.kind == WorldItem::Kind::Function) {
      out_.str(escape(item.function.name));
      out_.str(": ");
      print_function(item.function);
      out_.semicolon();
      return;
    }
    if (item.interface_key) {
      print_path_to_interface(*item.interface);
      out_.semicolon();
      return;
    }
    out_.str(escape(item.name));
    out_.str(": ");
    if (item.interface->name) {  // `import label: ns:pkg/iface;` (implements)
      print_path_to_interface(*item.interface);
      out_.semicolon();
      return;
    }
    out_.str("interface");
    out_.indent_start();
    print_interface(*item.interface);
    out_.indent_end();
  }

  // `name` within the package being printed, `ns:pkg/name@version` otherwise.
  void print_path_to_interface(const Interface& iface) {
    if (iface.package == package_) {
      out_.str(escape(*iface.name));
      return;
    }
    const Package& p = *iface.package;
    out_.str(escape(p.namespace_name) + ":" + escape(p.name) + "/" + escape(*iface.name));
    if (p.version) out_.str("@" + *p.version);
  }

  // Types (resources with their functions), then the other functions, a
  // blank line between items (`print_interface`).
  void print_interface(const Interface& iface) {
    const bool prev_items = any_items_;
    any_items_ = false;
    const TypeList* prev_scope = scope_;
    scope_ = &iface.types;
    ResourceFuncs resource_funcs;
    std::vector<const Function*> freestanding;
    for (const Function& f : iface.functions) {
      if (f.resource)
        resource_funcs[f.resource].push_back(&f);
      else
        freestanding.push_back(&f);
    }
    std::vector<const NamedType*> types;
    for (const auto& t : iface.types) types.push_back(t.get());
    print_types(&iface, types, resource_funcs);
    for (const Function* f : freestanding) {
      new_item();
      out_.str(escape(f->item_name));
      out_.str(": ");
      print_function(*f);
      out_.semicolon();
    }
    scope_ = prev_scope;
    any_items_ = prev_items;
  }

  // `use` statements first, one per run of types from the same interface,
  // with no blank lines; then each declared type as an item (`print_types`).
  void print_types(const Interface* owner, const std::vector<const NamedType*>& types,
                   const ResourceFuncs& resource_funcs) {
    struct Use {
      const Interface* from;
      std::vector<const NamedType*> types;
    };
    std::vector<Use> uses;
    std::vector<const NamedType*> declared;
    for (const NamedType* t : types) {
      const NamedType* other = t->alias_of;
      if (other && other->owner && other->owner != owner) {
        if (!uses.empty() && uses.back().from == other->owner)
          uses.back().types.push_back(t);
        else
          uses.push_back({other->owner, {t}});
        continue;
      }
      declared.push_back(t);
    }
    for (const Use& use : uses) {
      any_items_ = true;
      out_.str("use ");
      print_path_to_interface(*use.from);
      out_.str(".{");
      for (size_t i = 0; i < use.types.size(); ++i) {
        if (i > 0) out_.str(", ");
        const NamedType& mine = *use.types[i];
        if (mine.name == mine.alias_of->name) {
          out_.str(escape(mine.name));
        } else {
          out_.str(escape(mine.alias_of->name) + " as " + escape(mine.name));
        }
      }
      out_.str("}");
      out_.semicolon();
    }
    static const std::vector<const Function*> no_funcs;
    for (const NamedType* t : declared) {
      new_item();
      if (t->resource && !t->alias_of) {
        auto funcs = resource_funcs.find(t);
        print_resource(*t, funcs == resource_funcs.end() ? no_funcs : funcs->second);
      } else {
        declare_type(*t);
      }
    }
  }

  // `resource name;`, or a block with its constructor, methods and static
  // functions, no blank lines between them (`print_resource`).
  void print_resource(const NamedType& resource, const std::vector<const Function*>& funcs) {
    out_.str("resource ");
    out_.str(escape(resource.name));
    if (funcs.empty()) {
      out_.semicolon();
      return;
    }
    out_.indent_start();
    for (const Function* f : funcs) {
      if (f->kind == FuncKind::Method) {
        out_.str(escape(f->item_name));
        out_.str(": ");
      } else if (f->kind == FuncKind::Static) {
        out_.str(escape(f->item_name));
        out_.str(": static ");
      }
      print_function(*f);
      out_.semicolon();
    }
    out_.indent_end();
  }

  // `func(a: t, ...) -> r`; methods leave out `self`, a constructor that
  // returns its own resource leaves out the result (`print_function`).
  void print_function(const Function& f) {
    if (f.type->async && f.kind != FuncKind::Constructor) out_.str("async ");
    out_.str(f.kind == FuncKind::Constructor ? "constructor(" : "func(");
    const size_t skip = f.kind == FuncKind::Method ? 1 : 0;
    for (size_t i = skip; i < f.type->params.size(); ++i) {
      if (i > skip) out_.str(", ");
      out_.str(escape(f.type->param_names[i]));
      out_.str(": ");
      out_.str(type_name(f.type->params[i]));
    }
    out_.str(")");
    const abi::TypeRef& result = f.type->result;
    if (f.kind == FuncKind::Constructor && result && result->kind() == TypeKind::Own &&
        result->resource() == f.resource->resource)
      return;
    if (result) {
      out_.str(" -> ");
      out_.str(type_name(result));
    }
  }

  // The declaration of a named type (`declare_type` and the `declare_*`).
  void declare_type(const NamedType& t) {
    const std::string name = escape(t.name);
    if (t.alias_of) {  // another name in the same scope
      out_.str("type " + name + " = " + escape(t.alias_of->name));
      out_.semicolon();
      return;
    }
    const abi::Type& type = *t.value;
    auto block = [&](const char* keyword) {
      out_.str(keyword);
      out_.str(" ");
      out_.str(name);
      out_.indent_start();
    };
    switch (type.kind()) {
      case TypeKind::Record:
        block("record");
        for (const auto& field : type.fields()) {
          out_.str(escape(field.name) + ": " + type_name(field.type) + ",");
          out_.newline();
        }
        out_.indent_end();
        return;
      case TypeKind::Variant:
        block("variant");
        for (const auto& c : type.cases()) {
          out_.str(escape(c.name));
          if (c.type) out_.str("(" + type_name(c.type) + ")");
          out_.str(",");
          out_.newline();
        }
        out_.indent_end();
        return;
      case TypeKind::Enum:
      case TypeKind::Flags:
        block(type.kind() == TypeKind::Enum ? "enum" : "flags");
        for (const auto& label : type.labels()) {
          out_.str(escape(label) + ",");
          out_.newline();
        }
        out_.indent_end();
        return;
      case TypeKind::Own:  // `own<r>` spelled out, as the printer forces it here
        out_.str("type " + name + " = own<" + escape(resource_name(type)) + ">");
        out_.semicolon();
        return;
      default:
        out_.str("type " + name + " = " + structure(type));
        out_.semicolon();
        return;
    }
  }

  // The name a handle was written with (`h` of `type h = r` too), else the
  // resource's.
  std::string resource_name(const abi::Type& handle) const {
    if (const NamedType* t = world_.by_id(info_.handle_name(handle), *scope_)) return t->name;
    return world_.resource_name(*handle.resource(), *scope_);
  }

  // A type where it is used: its name when it has one (`print_type_name`).
  std::string type_name(const abi::TypeRef& type) const {
    if (const NamedType* named = world_.named(*type, *scope_)) return escape(named->name);
    return structure(*type);
  }

  // A type spelled out, its parts by name.
  std::string structure(const abi::Type& type) const {
    switch (type.kind()) {
      case TypeKind::Own: return escape(resource_name(type));
      case TypeKind::Borrow: return "borrow<" + escape(resource_name(type)) + ">";
      case TypeKind::Tuple: {
        std::string out = "tuple<";
        for (size_t i = 0; i < type.fields().size(); ++i) {
          if (i > 0) out += ", ";
          out += type_name(type.fields()[i].type);
        }
        return out + ">";
      }
      case TypeKind::Option: return "option<" + type_name(type.cases()[1].type) + ">";
      case TypeKind::Result: {
        const abi::TypeRef& ok = type.cases()[0].type;
        const abi::TypeRef& error = type.cases()[1].type;
        if (!ok && !error) return "result";
        if (!error) return "result<" + type_name(ok) + ">";
        return "result<" + (ok ? type_name(ok) : std::string("_")) + ", " + type_name(error) + ">";
      }
      case TypeKind::List: return "list<" + type_name(type.element()) + ">";
      case TypeKind::FixedList:
        return "list<" + type_name(type.element()) + ", " + std::to_string(type.fixed_length()) +
               ">";
      case TypeKind::Map:
        return "map<" + type_name(type.element()->fields()[0].type) + ", " +
               type_name(type.element()->fields()[1].type) + ">";
      case TypeKind::Stream:
      case TypeKind::Future: {
        std::string out = type.kind() == TypeKind::Stream ? "stream" : "future";
        if (type.element()) out += "<" + type_name(type.element()) + ">";
        return out;
      }
      case TypeKind::Record:
      case TypeKind::Variant:
      case TypeKind::Enum:
      case TypeKind::Flags:
        // Unnamed: not valid WIT (wasm-tools refuses such a component);
        // printed inline so that nothing is hidden.
        return type.to_wit();
      default: return abi::to_string(type.kind());  // primitives: their WIT names
    }
  }

  const WorldDecoder& world_;
  const ComponentInfo& info_;
  const TypeList* scope_;             // names in effect: the world's or an interface's
  const Package* package_ = nullptr;  // the package being printed; null: the root one
  WitText out_;
  bool any_items_ = false;
};

}  // namespace

std::string component_wit(const ComponentInfo& info) {
  WorldDecoder world;
  for (size_t i = 0; i < info.type.imports.size(); ++i) world.import(info.type.imports[i], info.import_implements[i]);
  for (size_t i = 0; i < info.type.exports.size(); ++i) world.export_(info.type.exports[i], info.export_implements[i]);
  return WitPrinter(world, info).print();
}

}  // namespace cmhost::tools
