// Canonical definitions (CanonicalABI.md "Canonical Definitions"): options,
// lift and lower against the flattened signatures, and the built-ins with
// their core function types.
#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>

#include "cmhost/error.hpp"
#include "validator.hpp"

namespace cmhost::validate::detail {
namespace {

using binary::CanonKind;
using binary::CoreNumType;
using binary::CoreValType;

binary::CoreFuncType signature(std::vector<CoreValType> params, std::vector<CoreValType> results) {
  binary::CoreFuncType f;
  f.params = std::move(params);
  f.results = std::move(results);
  return f;
}

binary::CoreFuncType signature(const abi::CoreSignature& sig) {
  binary::CoreFuncType f;
  for (auto t : sig.params) f.params.push_back(binary::to_core_val_type(t));
  for (auto t : sig.results) f.results.push_back(binary::to_core_val_type(t));
  return f;
}

std::string list(const std::vector<CoreValType>& types) {
  std::string out = "[";
  for (size_t i = 0; i < types.size(); ++i) out += (i ? " " : "") + to_string(types[i]);
  return out + "]";
}

const CoreValType kI32 = CoreNumType::I32;
const CoreValType kI64 = CoreNumType::I64;

const char* encoding_name(abi::StringEncoding e) {
  switch (e) {
    case abi::StringEncoding::Utf8: return "utf8";
    case abi::StringEncoding::Utf16: return "utf16";
    case abi::StringEncoding::Latin1Utf16: return "latin1-utf16";
  }
  return "?";
}

// The option requirements of CanonicalABI.md, as checks against `options`.
struct Requirements {
  const CanonOptions& options;
  size_t offset;

  void memory() const {
    if (!options.memory) fail(offset, "canonical option `memory` is required");
  }
  void realloc() const {
    memory();
    if (!options.realloc) fail(offset, "canonical option `realloc` is required");
  }
  void sync(const char* where) const {
    if (options.async) fail(offset, std::string("cannot specify `async` option on `") + where + "`");
  }
  // Lowerings and the built-ins take neither post-return nor callback.
  void no_lift_options() const {
    if (options.post_return)
      fail(offset, "canonical option `post-return` cannot be specified for lowerings");
    if (options.callback)
      fail(offset, "canonical option `callback` cannot be specified for lowerings");
  }
};

}  // namespace

CanonOptions Validator::canon_options(Scope& s, const std::vector<binary::CanonOption>& options,
                                      size_t offset) {
  CanonOptions out;
  std::optional<abi::StringEncoding> encoding;
  auto once = [&](bool present, const char* name) {
    if (present) fail(offset, std::string("canonical option `") + name + "` is specified more than once");
  };
  for (const auto& o : options) {
    switch (o.kind) {
      case binary::CanonOptionKind::StringUtf8:
      case binary::CanonOptionKind::StringUtf16:
      case binary::CanonOptionKind::StringLatin1Utf16: {
        const abi::StringEncoding e = o.kind == binary::CanonOptionKind::StringUtf8
                                          ? abi::StringEncoding::Utf8
                                      : o.kind == binary::CanonOptionKind::StringUtf16
                                          ? abi::StringEncoding::Utf16
                                          : abi::StringEncoding::Latin1Utf16;
        if (encoding)
          fail(offset, std::string("canonical encoding option `") + encoding_name(*encoding) +
                           "` conflicts with option `" + encoding_name(e) + "`");
        encoding = e;
        break;
      }
      case binary::CanonOptionKind::Memory: {
        once(out.memory.has_value(), "memory");
        if (o.index >= s.core_memories.size())
          fail(offset, "unknown memory " + std::to_string(o.index) + ": memory index out of bounds");
        const auto& limits = s.core_memories[o.index].limits;
        if (limits.shared) fail(offset, "canonical option `memory` cannot be a shared memory");
        out.memory = o.index;
        out.addr = limits.is_64 ? abi::AddrWidth::I64 : abi::AddrWidth::I32;
        break;
      }
      case binary::CanonOptionKind::Realloc:
        once(out.realloc.has_value(), "realloc");
        out.realloc = o.index;
        break;
      case binary::CanonOptionKind::PostReturn:
        once(out.post_return.has_value(), "post-return");
        core_func_at(s, o.index, offset);
        out.post_return = o.index;
        break;
      case binary::CanonOptionKind::Async:
        once(out.async, "async");
        out.async = true;
        break;
      case binary::CanonOptionKind::Callback:
        once(out.callback.has_value(), "callback");
        core_func_at(s, o.index, offset);
        out.callback = o.index;
        break;
    }
  }
  out.encoding = encoding.value_or(abi::StringEncoding::Utf8);
  if (out.callback && !out.async) fail(offset, "cannot specify callback without async");
  if (out.async && out.post_return) fail(offset, "cannot specify post-return function in async");
  if (out.realloc) {
    if (!out.memory)
      fail(offset, "canonical option `realloc` requires `memory` to also be specified");
    const CoreValType addr = out.addr == abi::AddrWidth::I64 ? kI64 : kI32;
    if (!same_core_func_type(core_func_at(s, *out.realloc, offset),
                             signature({addr, addr, addr, addr}, {addr})))
      fail(offset, "canonical option `realloc` uses a core function with an incorrect signature");
  }
  return out;
}

void Validator::canon(Scope& s, const binary::Canon& c, size_t offset) {
  switch (c.kind) {
    case CanonKind::Lift: return lift(s, c, offset);
    case CanonKind::Lower: return lower(s, c, offset);
    case CanonKind::ResourceNew:
    case CanonKind::ResourceDrop:
    case CanonKind::ResourceRep: {
      const TypeEntry& entry = type_at(s, c.type_index, offset);
      if (!entry.desc.resource)
        fail(offset, "type index " + std::to_string(c.type_index) + " is not a resource type");
      const abi::ResourceTypeRef resource = entry.desc.resource;
      binary::CoreFuncType type = signature({kI32}, {});
      if (c.kind != CanonKind::ResourceDrop) {
        // Only the component that defines a resource type sees its representation.
        auto local = s.local_resources.find(resource.get());
        if (local == s.local_resources.end())
          fail(offset, "type index " + std::to_string(c.type_index) + " is not a local resource");
        type = c.kind == CanonKind::ResourceNew ? signature({local->second}, {kI32})
                                                : signature({kI32}, {local->second});
      }
      s.core_funcs.push_back(type);
      emit(s, step::ResourceBuiltin{c.kind, resource, std::move(type)}, offset);
      return;
    }
    default: return builtin(s, c, offset);
  }
}

namespace {

// The canonical ABI of a function type under a canon definition's options.
std::shared_ptr<const abi::FunctionAbi> function_abi(const FuncType& type, const CanonOptions& options) {
  std::vector<abi::TypeRef> results;
  if (type.result) results.push_back(type.result);
  return std::make_shared<const abi::FunctionAbi>(type.params, results,
                                                  abi::CanonOptions{options.addr, options.encoding, true}, options.async);
}

bool params_have_pointers(const FuncType& type) {
  return std::any_of(type.params.begin(), type.params.end(),
                     [](const auto& p) { return contains_pointer(*p); });
}

}  // namespace

void Validator::lift(Scope& s, const binary::Canon& c, size_t offset) {
  const TypeEntry& entry = type_at(s, c.type_index, offset);
  if (!entry.desc.func)
    fail(offset, "type index " + std::to_string(c.type_index) + " is not a function type");
  const std::shared_ptr<const FuncType> type = entry.desc.func;
  const binary::CoreFuncType core = core_func_at(s, c.func_index, offset);
  const CanonOptions options = canon_options(s, c.options, offset);
  const Requirements need{options, offset};
  if (options.async && !type->async)
    fail(offset, "the `async` canonical option requires an async function type");

  const std::shared_ptr<const abi::FunctionAbi> compiled = function_abi(*type, options);
  const abi::FunctionAbi& abi = *compiled;
  // Arguments are lowered into the callee: lists and strings, and spilled
  // arguments, need realloc; results read from memory need memory.
  if (abi.params_spilled(abi::AbiSide::Lift) || params_have_pointers(*type)) need.realloc();
  if (type->result) {
    const uint32_t flat = type->result->layout(options.addr).flat_count;
    const uint32_t max = options.async ? abi::kMaxFlatParams : abi::kMaxFlatResults;
    if (flat > max || contains_pointer(*type->result)) need.memory();
  }
  binary::CoreFuncType expected = signature(abi.core_signature(abi::AbiSide::Lift));
  if (options.async && options.callback) expected.results = {kI32};

  auto same = [](const std::vector<CoreValType>& a, const std::vector<CoreValType>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_core_val_type);
  };
  if (!same(expected.params, core.params))
    fail(offset, "lowered parameter types `" + list(expected.params) +
                     "` do not match parameter types `" + list(core.params) + "` of " +
                     describe(s, binary::Sort::CoreFunc, c.func_index));
  if (!same(expected.results, core.results))
    fail(offset, "lowered result types `" + list(expected.results) +
                     "` do not match result types `" + list(core.results) + "` of " +
                     describe(s, binary::Sort::CoreFunc, c.func_index));
  if (options.post_return &&
      !same_core_func_type(core_func_at(s, *options.post_return, offset),
                           signature(core.results, {})))
    fail(offset, "canonical option `post-return` uses a core function with an incorrect signature");
  if (options.callback) {
    const binary::CoreFuncType& callback = core_func_at(s, *options.callback, offset);
    if (!same_core_func_type(callback, signature({kI32, kI32, kI32}, {kI32})) &&
        !same_core_func_type(callback, signature({kI32}, {kI32})))
      fail(offset, "canonical option `callback` uses a core function with an incorrect signature");
  }
  s.funcs.push_back(type);
  emit(s, step::Lift{c.func_index, type, options, compiled}, offset);
}

void Validator::lower(Scope& s, const binary::Canon& c, size_t offset) {
  if (c.func_index >= s.funcs.size())
    fail(offset, "unknown func " + std::to_string(c.func_index) + ": function index out of bounds");
  const std::shared_ptr<const FuncType> type = s.funcs[c.func_index];
  const CanonOptions options = canon_options(s, c.options, offset);
  const Requirements need{options, offset};
  need.no_lift_options();
  if (options.async && !type->async)
    fail(offset, "the `async` canonical option requires an async function type");

  const std::shared_ptr<const abi::FunctionAbi> compiled = function_abi(*type, options);
  const abi::FunctionAbi& abi = *compiled;
  // Arguments are lifted out of the caller's memory; results are lowered
  // into it, through realloc for lists and strings.
  if (abi.params_spilled(abi::AbiSide::Lower) || params_have_pointers(*type)) need.memory();
  if (type->result) {
    if (contains_pointer(*type->result)) need.realloc();
    if (options.async || abi.results_spilled()) need.memory();
  }
  binary::CoreFuncType core_type = signature(abi.core_signature(abi::AbiSide::Lower));
  s.core_funcs.push_back(core_type);
  emit(s, step::Lower{c.func_index, type, options, std::move(core_type), compiled}, offset);
}

namespace {

// The signature tokens of binary/canon_table.def's params and results.
enum class SignatureToken : uint8_t { i32, i64, addr, ctx, funcref, derived };

struct BuiltinSignature {
  std::array<SignatureToken, 3> tokens{};
  uint8_t count = 0;
  bool derived() const { return count == 1 && tokens[0] == SignatureToken::derived; }
};

constexpr BuiltinSignature tokens(std::initializer_list<SignatureToken> list) {
  BuiltinSignature out;
  for (SignatureToken t : list) out.tokens[out.count++] = t;
  return out;
}

struct BuiltinRow {
  CanonKind kind;
  BuiltinSignature params, results;
};

namespace signature_tokens {
using enum SignatureToken;
constexpr BuiltinRow kBuiltinRows[] = {
#define CMHOST_SIGNATURE(...) tokens({__VA_ARGS__})
#define CMHOST_CANON(kind, opcode, name, immediates, params, results, behaviour) \
  {CanonKind::kind, CMHOST_SIGNATURE params, CMHOST_SIGNATURE results},
#include "binary/canon_table.def"
#undef CMHOST_CANON
#undef CMHOST_SIGNATURE
};
}  // namespace signature_tokens
using signature_tokens::kBuiltinRows;

constexpr bool rows_in_kind_order() {
  for (size_t i = 0; i < std::size(kBuiltinRows); ++i)
    if (static_cast<size_t>(kBuiltinRows[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_kind_order());

}  // namespace

// The requirements a built-in's options carry, beyond taking neither
// post-return nor callback.
void Validator::option_requirements(const binary::Canon& c, const step::CanonBuiltin& out, size_t offset) {
  const Requirements need{out.options, offset};
  const char* name = binary::to_string(c.kind);
  switch (c.kind) {
    case CanonKind::StreamRead:
    case CanonKind::StreamWrite:
    case CanonKind::FutureRead:
    case CanonKind::FutureWrite:
      if (out.type->element()) {
        need.memory();
        // Reading lowers the values into this component's memory.
        const bool read = c.kind == CanonKind::StreamRead || c.kind == CanonKind::FutureRead;
        if (read && contains_pointer(*out.type->element())) need.realloc();
      }
      break;
    case CanonKind::ErrorContextNew:
      need.memory();
      need.sync(name);
      break;
    case CanonKind::ErrorContextDebugMessage:
      need.realloc();
      need.sync(name);
      break;
    default: break;
  }
}

// task.return: its signature is its result's, lowered.
binary::CoreFuncType Validator::task_return(Scope& s, const binary::Canon& c, step::CanonBuiltin& out,
                                            size_t offset) {
  out.options = canon_options(s, c.options, offset);
  const Requirements need{out.options, offset};
  need.no_lift_options();
  if (out.options.realloc) fail(offset, "cannot specify `realloc` option on `task.return`");
  need.sync("task.return");
  std::vector<abi::TypeRef> params;
  if (c.result) {
    out.type = val_type(s, *c.result, offset);
    params.push_back(out.type);
    if (contains_borrow(*out.type)) fail(offset, "`task.return` result cannot contain a `borrow` type");
  }
  const abi::FunctionAbi abi(params, {}, {out.options.addr, out.options.encoding, true}, false);
  if (abi.params_spilled(abi::AbiSide::Lower) || (out.type && contains_pointer(*out.type))) need.memory();
  return signature(abi.core_signature(abi::AbiSide::Lower));
}

void Validator::builtin(Scope& s, const binary::Canon& c, size_t offset) {
  namespace imm = binary::canon_immediates;
  step::CanonBuiltin out{c, nullptr, {}, {}};
  const char* name = binary::to_string(c.kind);
  const uint16_t immediates = binary::canon_info(c.kind).immediates;
  const BuiltinRow& row = kBuiltinRows[static_cast<size_t>(c.kind)];

  binary::CoreFuncType type;
  if (c.kind == CanonKind::TaskReturn) {
    type = task_return(s, c, out, offset);
  } else {
    if (row.params.derived()) fail(offset, std::string("unexpected canonical built-in `") + name + "`");
    // The stream or future type a built-in works on.
    if (immediates & (imm::stream_type | imm::future_type)) {
      const abi::TypeKind kind = immediates & imm::stream_type ? abi::TypeKind::Stream : abi::TypeKind::Future;
      const TypeEntry& entry = type_at(s, c.type_index, offset);
      if (!entry.desc.value || entry.desc.value->kind() != kind)
        fail(offset, std::string("`") + name + "` requires a " +
                         (kind == abi::TypeKind::Stream ? "stream" : "future") + " type");
      out.type = entry.desc.value;
    }
    if (immediates & imm::options) {
      out.options = canon_options(s, c.options, offset);
      Requirements{out.options, offset}.no_lift_options();
      option_requirements(c, out, offset);
    }
    if (immediates & imm::memory) {
      if (c.memory_index >= s.core_memories.size())
        fail(offset, "unknown memory " + std::to_string(c.memory_index) + ": memory index out of bounds");
      out.options.memory = c.memory_index;
      out.options.addr =
          s.core_memories[c.memory_index].limits.is_64 ? abi::AddrWidth::I64 : abi::AddrWidth::I32;
    }
    if (immediates & imm::context) {
      const auto* num = std::get_if<CoreNumType>(&c.context_type);
      if (!num || (*num != CoreNumType::I32 && *num != CoreNumType::I64))
        fail(offset, std::string("`") + name + "` only supports `i32` or `i64`");
      if (c.context_slot > 1)
        fail(offset, std::string("`") + name + "` immediate must be zero or one: " + std::to_string(c.context_slot));
      if (s.context_type && !same_core_val_type(*s.context_type, c.context_type))
        fail(offset, std::string("`") + name + "` type must match previous context type");
      s.context_type = c.context_type;
    }
    if (immediates & imm::core_type) {
      // The thread's start function: a core function type taking one i32.
      if (c.core_type_index >= s.core_types.size())
        fail(offset, "unknown core type " + std::to_string(c.core_type_index) + ": type index out of bounds");
      const CoreTypeEntry& start = s.core_types[c.core_type_index];
      if (!start.is_func) fail(offset, "expected a core function type");
      if (!same_core_func_type(start.func, signature({kI32}, {})))
        fail(offset, "start function must take a single `i32` argument and return nothing");
    }
    if (immediates & imm::table) {
      if (c.table_index >= s.core_tables.size())
        fail(offset, "unknown table " + std::to_string(c.table_index) + ": table index out of bounds");
      const auto& table = s.core_tables[c.table_index];
      const auto& heap = table.element.heap;
      if (table.limits.is_64 || heap.type_index || heap.abstract != binary::AbstractHeapType::Func)
        fail(offset, "table is not a 32-bit table of (ref null (func))");
    }
    auto resolve = [&](const BuiltinSignature& sig) {
      std::vector<CoreValType> out_types;
      for (uint8_t i = 0; i < sig.count; ++i) {
        switch (sig.tokens[i]) {
          case SignatureToken::i32: out_types.push_back(kI32); break;
          case SignatureToken::i64: out_types.push_back(kI64); break;
          case SignatureToken::addr:
            out_types.push_back(out.options.addr == abi::AddrWidth::I64 ? kI64 : kI32);
            break;
          case SignatureToken::ctx: out_types.push_back(c.context_type); break;
          case SignatureToken::funcref:
            out_types.push_back(binary::CoreRefType{true, {binary::AbstractHeapType::Func, {}, c.shared}});
            break;
          case SignatureToken::derived: break;  // refused above
        }
      }
      return out_types;
    };
    type = signature(resolve(row.params), resolve(row.results));
  }
  s.core_funcs.push_back(type);
  out.core_type = std::move(type);
  emit(s, std::move(out), offset);
}

}  // namespace cmhost::validate::detail
