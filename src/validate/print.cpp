// Readable text for plans and resolved types, in the spirit of the component
// text format. Types are printed with a length budget: shared type DAGs can
// be exponentially large when written out.
#include <map>
#include <set>

#include "internal.hpp"

namespace cmhost::validate {
namespace detail {
namespace {

constexpr size_t kTypeTextBudget = 4000;

class Printer {
 public:
  std::string out;

  bool full() const { return out.size() > kTypeTextBudget; }

  void resource(const abi::ResourceType& r) { out += "$" + (r.name.empty() ? "resource" : r.name); }

  void type(const abi::TypeRef& t) {
    if (full()) return;
    if (!t) {
      out += "_";
      return;
    }
    using K = abi::TypeKind;
    switch (t->kind()) {
      case K::Record:
        out += "(record";
        for (const auto& f : t->fields()) {
          out += " (field \"" + f.name + "\" ";
          type(f.type);
          out += ")";
        }
        out += ")";
        break;
      case K::Tuple:
        out += "(tuple";
        for (const auto& f : t->fields()) {
          out += " ";
          type(f.type);
        }
        out += ")";
        break;
      case K::Variant:
        out += "(variant";
        for (const auto& c : t->cases()) {
          out += " (case \"" + c.name + "\"";
          if (c.type) {
            out += " ";
            type(c.type);
          }
          out += ")";
        }
        out += ")";
        break;
      case K::Enum:
      case K::Flags:
        out += t->kind() == K::Enum ? "(enum" : "(flags";
        for (const auto& l : t->labels()) out += " \"" + l + "\"";
        out += ")";
        break;
      case K::Option:
        out += "(option ";
        type(t->cases()[1].type);
        out += ")";
        break;
      case K::Result:
        out += "(result";
        if (t->cases()[0].type) {
          out += " ";
          type(t->cases()[0].type);
        }
        if (t->cases()[1].type) {
          out += " (error ";
          type(t->cases()[1].type);
          out += ")";
        }
        out += ")";
        break;
      case K::List:
      case K::FixedList:
        out += "(list ";
        type(t->element());
        if (t->kind() == K::FixedList) out += " " + std::to_string(t->fixed_length());
        out += ")";
        break;
      case K::Map:
        out += "(map ";
        type(t->element()->fields()[0].type);
        out += " ";
        type(t->element()->fields()[1].type);
        out += ")";
        break;
      case K::Own:
      case K::Borrow:
        out += t->kind() == K::Own ? "(own " : "(borrow ";
        resource(*t->resource());
        out += ")";
        break;
      case K::Stream:
      case K::Future:
        out += std::string("(") + abi::to_string(t->kind());
        if (t->element()) {
          out += " ";
          type(t->element());
        }
        out += ")";
        break;
      default: out += abi::to_string(t->kind()); break;
    }
    if (full() && out.size() < kTypeTextBudget + 10) out += " ...";
  }

  void func(const FuncType& f) {
    out += f.async ? "(func async" : "(func";
    for (size_t i = 0; i < f.params.size(); ++i) {
      out += " (param \"" + f.param_names[i] + "\" ";
      type(f.params[i]);
      out += ")";
    }
    if (f.result) {
      out += " (result ";
      type(f.result);
      out += ")";
    }
    out += ")";
  }

  void externs(const char* what, const std::vector<NamedExtern>& list) {
    for (const auto& e : list) {
      if (full()) return;
      out += std::string(" (") + what + " \"" + e.name + "\" ";
      desc(e.desc);
      out += ")";
    }
  }

  void desc(const ExternDesc& d) {
    if (full()) return;
    switch (d.sort) {
      case binary::Sort::CoreModule:
        out += "(core module";
        for (const auto& i : d.module->imports) {
          out += " (import \"" + i.module + "\" \"" + i.name + "\" ";
          core(i.type);
          out += ")";
        }
        for (const auto& e : d.module->exports) {
          out += " (export \"" + e.name + "\" ";
          core(e.type);
          out += ")";
        }
        out += ")";
        return;
      case binary::Sort::Func: func(*d.func); return;
      case binary::Sort::Value:
        out += "(value ";
        type(d.value);
        out += ")";
        return;
      case binary::Sort::Instance:
        out += "(instance";
        externs("export", d.instance->exports);
        out += ")";
        return;
      case binary::Sort::Component:
        out += "(component";
        externs("import", d.component->imports);
        externs("export", d.component->exports);
        out += ")";
        return;
      case binary::Sort::Type:
        out += "(type ";
        if (d.resource) {
          resource(*d.resource);
          out += " (sub resource))";
          return;
        }
        out += "(eq ";
        if (d.value) type(d.value);
        if (d.func) func(*d.func);
        if (d.instance || d.component) {
          ExternDesc inner = d;
          inner.sort = d.instance ? binary::Sort::Instance : binary::Sort::Component;
          desc(inner);
        }
        out += "))";
        return;
      default: out += sort_name(d.sort); return;
    }
  }

  void limits(const binary::CoreLimits& l) {
    if (l.is_64) out += " i64";
    out += " " + std::to_string(l.min);
    if (l.max) out += " " + std::to_string(*l.max);
    if (l.shared) out += " shared";
  }

  void core(const CoreExtern& e) {
    switch (e.sort) {
      case binary::Sort::CoreFunc: out += to_string(e.func); break;
      case binary::Sort::CoreTag:
        out += "(tag " + to_string(e.func) + ")";
        break;
      case binary::Sort::CoreTable:
        out += "(table";
        limits(e.table.limits);
        out += " " + to_string(binary::CoreValType(e.table.element)) + ")";
        break;
      case binary::Sort::CoreMemory:
        out += "(memory";
        limits(e.memory.limits);
        if (e.memory.page_size_log2)
          out += " (pagesize " + std::to_string(uint64_t{1} << (*e.memory.page_size_log2 & 63)) + ")";
        out += ")";
        break;
      case binary::Sort::CoreGlobal:
        out += "(global ";
        out += e.global.is_mutable ? "(mut " + to_string(e.global.type) + ")" : to_string(e.global.type);
        out += ")";
        break;
      default: out += sort_name(e.sort); break;
    }
  }
};

std::string options_text(const CanonOptions& o) {
  std::string out;
  if (o.memory) out += " (memory " + std::to_string(*o.memory) + ")";
  if (o.addr == abi::AddrWidth::I64) out += " memory64";
  if (o.realloc) out += " (realloc " + std::to_string(*o.realloc) + ")";
  if (o.post_return) out += " (post-return " + std::to_string(*o.post_return) + ")";
  if (o.async) out += " async";
  if (o.callback) out += " (callback " + std::to_string(*o.callback) + ")";
  if (o.encoding != abi::StringEncoding::Utf8)
    out += std::string(" string-encoding=") + abi::to_string(o.encoding);
  return out;
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::string sort_index(binary::SortIndex si) {
  return std::string(sort_name(si.sort)) + " " + std::to_string(si.index);
}

// Lists one plan's steps with the index each one defines.
class PlanPrinter {
 public:
  std::string out;

  void plan(const ComponentPlan& p, const std::string& indent) {
    printed_.insert(&p);
    std::map<binary::Sort, uint32_t> next;
    auto define = [&](binary::Sort sort) {
      return std::string(sort_name(sort)) + " " + std::to_string(next[sort]++) + " = ";
    };
    for (const Step& step : p.steps) {
      out += indent;
      std::visit(
          [&](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, step::CoreModule>) {
              out += define(binary::Sort::CoreModule);
              if (s.outer)
                out += "alias outer " + std::to_string(s.outer->count) + " core module " +
                       std::to_string(s.outer->index) + " (at run time)";
              else
                out += "module " + std::to_string(s.module);
            } else if constexpr (std::is_same_v<T, step::CoreInstantiate>) {
              out += define(binary::Sort::CoreInstance) + "instantiate module " +
                     std::to_string(s.module);
              for (size_t i = 0; i < s.args.size(); ++i)
                out += (i ? ", (" : " with (") + quoted(s.args[i].first) + ", core instance " +
                       std::to_string(s.args[i].second) + ")";
            } else if constexpr (std::is_same_v<T, step::CoreInlineInstance>) {
              out += define(binary::Sort::CoreInstance) + "exports";
              for (size_t i = 0; i < s.exports.size(); ++i)
                out += (i ? ", (" : " (") + quoted(s.exports[i].name) + ", " +
                       sort_index({s.exports[i].sort, s.exports[i].index}) + ")";
            } else if constexpr (std::is_same_v<T, step::CoreAliasExport>) {
              out += define(s.sort) + "alias export " + quoted(s.name) + " of core instance " +
                     std::to_string(s.instance);
            } else if constexpr (std::is_same_v<T, step::Import>) {
              Printer pr;
              pr.desc(s.desc);
              out += (s.desc.sort == binary::Sort::Type ? std::string("type = ") : define(s.desc.sort)) +
                     "import " + quoted(s.name) + " " + pr.out;
            } else if constexpr (std::is_same_v<T, step::AliasExport>) {
              out += (s.sort == binary::Sort::Type ? std::string("type = ") : define(s.sort)) +
                     "alias export " + quoted(s.name) + " of instance " + std::to_string(s.instance);
              if (s.resource) out += " (binds $" + s.resource->name + ")";
            } else if constexpr (std::is_same_v<T, step::Component>) {
              out += define(binary::Sort::Component);
              if (!s.plan) {
                out += "alias outer " + std::to_string(s.outer->count) + " component " +
                       std::to_string(s.outer->index) + " (at run time)\n";
                return;
              }
              out += "component " + quoted(s.plan->name);
              if (printed_.count(s.plan.get())) {
                out += " (listed above)";
              } else {
                out += ":\n";
                plan(*s.plan, indent + "  ");
                return;
              }
            } else if constexpr (std::is_same_v<T, step::Instantiate>) {
              out += define(binary::Sort::Instance) + "instantiate component " +
                     std::to_string(s.component);
              for (size_t i = 0; i < s.args.size(); ++i)
                out += (i ? ", (" : " with (") + quoted(s.args[i].first) + ", " +
                       sort_index(s.args[i].second) + ")";
            } else if constexpr (std::is_same_v<T, step::InlineInstance>) {
              out += define(binary::Sort::Instance) + "exports";
              for (size_t i = 0; i < s.exports.size(); ++i)
                out += (i ? ", (" : " (") + quoted(s.exports[i].first) + ", " +
                       sort_index(s.exports[i].second) + ")";
            } else if constexpr (std::is_same_v<T, step::Lift>) {
              Printer pr;
              pr.func(*s.type);
              out += define(binary::Sort::Func) + "lift core func " + std::to_string(s.core_func) +
                     " " + pr.out + options_text(s.options);
            } else if constexpr (std::is_same_v<T, step::Lower>) {
              Printer pr;
              pr.func(*s.type);
              out += define(binary::Sort::CoreFunc) + "lower func " + std::to_string(s.func) + " " +
                     pr.out + options_text(s.options);
            } else if constexpr (std::is_same_v<T, step::ResourceDefinition>) {
              out += "resource $" + s.resource->name + " = define (rep " + to_string(s.rep) + ")";
              if (s.dtor) out += " (dtor core func " + std::to_string(*s.dtor) + ")";
            } else if constexpr (std::is_same_v<T, step::ResourceBuiltin>) {
              out += define(binary::Sort::CoreFunc) + binary::to_string(s.kind) + " $" +
                     s.resource->name;
            } else if constexpr (std::is_same_v<T, step::CanonBuiltin>) {
              out += define(binary::Sort::CoreFunc) + binary::to_string(s.canon.kind);
              switch (s.canon.kind) {
                case binary::CanonKind::ContextGet:
                case binary::CanonKind::ContextSet:
                  out += " " + to_string(s.canon.context_type) + " " +
                         std::to_string(s.canon.context_slot);
                  break;
                case binary::CanonKind::ThreadNewIndirect:
                case binary::CanonKind::ThreadSpawnIndirect:
                  out += " (core type " + std::to_string(s.canon.core_type_index) +
                         ") (table " + std::to_string(s.canon.table_index) + ")";
                  break;
                case binary::CanonKind::ThreadSpawnRef:
                  out += " (core type " + std::to_string(s.canon.core_type_index) + ")";
                  break;
                default: break;
              }
              if (s.canon.async) out += " async";
              if (s.canon.cancellable) out += " cancellable";
              if (s.canon.shared) out += " shared";
              if (s.type) {
                Printer pr;
                pr.type(s.type);
                out += " " + pr.out;
              }
              out += options_text(s.options);
            } else if constexpr (std::is_same_v<T, step::Export>) {
              out += (s.target.sort == binary::Sort::Type ? std::string("type = ") : define(s.target.sort)) +
                     "export " + quoted(s.name) + " " + sort_index(s.target);
            } else if constexpr (std::is_same_v<T, step::Start>) {
              out += "start func " + std::to_string(s.func);
              for (size_t i = 0; i < s.args.size(); ++i)
                out += (i ? ", value " : " (value ") + std::to_string(s.args[i]) +
                       (i + 1 == s.args.size() ? ")" : "");
              for (uint32_t i = 0; i < s.results; ++i)
                out += " -> value " + std::to_string(next[binary::Sort::Value]++);
            }
            out += "\n";
          },
          step);
    }
  }

 private:
  std::set<const ComponentPlan*> printed_;
};

}  // namespace

std::string to_string(const abi::Type& type) {
  Printer p;
  // The printer takes shared references; this view does not own `type`.
  p.type(abi::TypeRef(abi::TypeRef(), &type));
  return p.out;
}

}  // namespace detail

std::string to_string(const Plan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.modules.size(); ++i)
    out += "module " + std::to_string(i) + " = bytes " + detail::hex(plan.modules[i].offset) +
           " (" + std::to_string(plan.modules[i].size) + " bytes)\n";
  if (!plan.root) return out;
  out += "component " + detail::quoted(plan.root->name) + ":\n";
  detail::PlanPrinter printer;
  printer.plan(*plan.root, "  ");
  return out + printer.out;
}

std::string to_string(const CoreExtern& type) {
  detail::Printer p;
  p.core(type);
  return p.out;
}

}  // namespace cmhost::validate

// The public type printers (cmhost/types.hpp).
std::string cmhost::to_string(const ExternDesc& desc) {
  validate::detail::Printer p;
  p.desc(desc);
  return p.out;
}

std::string cmhost::to_string(const FuncType& type) {
  validate::detail::Printer p;
  p.func(type);
  return p.out;
}
