#include "cmhost/abi/canon.hpp"

#include "cmhost/error.hpp"
#include "program.hpp"

namespace cmhost::abi {

const char* to_string(StringEncoding e) noexcept {
  switch (e) {
    case StringEncoding::Utf8: return "utf8";
    case StringEncoding::Utf16: return "utf16";
    case StringEncoding::Latin1Utf16: return "latin1+utf16";
  }
  return "?";
}

uint64_t AbiContext::realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align,
                             uint64_t new_size) {
  require_memory("allocation");
  const uint64_t ptr = memory_->realloc(old_ptr, old_size, align, new_size);
  refresh();
  return ptr;
}

void AbiContext::no_memory(const char* why) {
  throw Error(ErrorKind::Usage, std::string("the canonical ABI needs a linear memory for ") + why);
}

void AbiContext::lift_limit_reached(uint64_t bytes) const {
  throw Error(ErrorKind::Trap, "lift limit: lifting the value would allocate more than the store's limit of " +
                                   std::to_string(lift_limit_) + " host bytes for one lift (" + std::to_string(bytes) +
                                   " more asked)");
}

// ---- ValueAbi ---------------------------------------------------------------

ValueAbi::ValueAbi(TypeRef type, AddrWidth width)
    : type_(std::move(type)),
      width_(width),
      program_(std::make_unique<detail::Program>(detail::compile(type_, width))) {}
ValueAbi::~ValueAbi() = default;
ValueAbi::ValueAbi(ValueAbi&&) noexcept = default;
ValueAbi& ValueAbi::operator=(ValueAbi&&) noexcept = default;

static void check_width(const AbiContext& cx, AddrWidth width) {
  if (cx.options().addr != width)
    throw Error(ErrorKind::Usage, "canonical ABI program compiled for another address width");
}

Val ValueAbi::load(AbiContext& cx, uint64_t ptr) const {
  check_width(cx, width_);
  cx.require_memory("loads");
  detail::check_range(cx, ptr, layout().size, layout().align, "value", *type_);
  return detail::load(cx, *program_, program_->root, ptr);
}

void ValueAbi::store(AbiContext& cx, const Val& value, uint64_t ptr) const {
  check_width(cx, width_);
  cx.require_memory("stores");
  detail::check_range(cx, ptr, layout().size, layout().align, "value", *type_);
  detail::store(cx, *program_, program_->root, value, ptr);
}

static void require_listed(const Type& type, const Layout& l) {
  if (!l.flat_listed())
    throw Error(ErrorKind::Usage, type.to_wit() + " flattens to " + std::to_string(l.flat_count) +
                                      " core values and is only passed through memory");
}

Val ValueAbi::lift_flat(AbiContext& cx, std::span<const uint64_t> flat) const {
  check_width(cx, width_);
  require_listed(*type_, layout());
  if (flat.size() != layout().flat_count)
    throw Error(ErrorKind::Usage, type_->to_wit() + " lifts from " +
                                      std::to_string(layout().flat_count) + " core values, not " +
                                      std::to_string(flat.size()));
  return detail::lift_flat(cx, *program_, program_->root, flat.data());
}

void ValueAbi::lower_flat(AbiContext& cx, const Val& value, std::vector<uint64_t>& out) const {
  check_width(cx, width_);
  require_listed(*type_, layout());
  const size_t at = out.size();
  out.resize(at + layout().flat_count);
  detail::lower_flat(cx, *program_, program_->root, value, out.data() + at);
}

// ---- FunctionAbi --------------------------------------------------------------

// One side of a function type: each value's program, and the tuple of all of
// them for when they are passed through memory.
struct FunctionAbi::Values {
  std::vector<ValueAbi> each;
  std::unique_ptr<ValueAbi> tuple;  // absent when there are no values
  uint64_t flat_count = 0;
  std::vector<CoreType> flat;  // listed when flat_count <= kMaxListedFlat

  Values(const std::vector<TypeRef>& types, AddrWidth width) {
    std::vector<TypeRef> elements;
    for (const auto& t : types) {
      each.emplace_back(t, width);
      const Layout& l = t->layout(width);
      flat_count += l.flat_count;
      elements.push_back(t);
    }
    if (flat_count <= kMaxListedFlat)
      for (const auto& t : types) {
        const auto& f = t->layout(width).flat;
        flat.insert(flat.end(), f.begin(), f.end());
      }
    if (!types.empty()) tuple = std::make_unique<ValueAbi>(Type::tuple(elements), width);
  }

  const detail::Program& tp() const { return tuple->program(); }

  void store_all(AbiContext& cx, std::span<const Val> vals, uint64_t ptr) const {
    const detail::Op& op = tp().ops[tp().root];
    detail::check_range(cx, ptr, op.size, op.align, "spilled values", *tuple->type());
    for (size_t i = 0; i < each.size(); ++i) {
      const detail::Child& c = tp().children[op.children + i];
      detail::store(cx, tp(), c.op, vals[i], ptr + c.offset);
    }
  }

  std::vector<Val> load_all(AbiContext& cx, uint64_t ptr) const {
    const detail::Op& op = tp().ops[tp().root];
    detail::check_range(cx, ptr, op.size, op.align, "spilled values", *tuple->type());
    std::vector<Val> out;
    out.reserve(each.size());
    for (size_t i = 0; i < each.size(); ++i) {
      const detail::Child& c = tp().children[op.children + i];
      out.push_back(detail::load(cx, tp(), c.op, ptr + c.offset));
    }
    return out;
  }

  void lower_all(AbiContext& cx, std::span<const Val> vals, std::vector<uint64_t>& flat) const {
    const size_t at = flat.size();
    flat.resize(at + flat_count);
    uint64_t* out = flat.data() + at;
    for (size_t i = 0; i < each.size(); ++i) {
      detail::lower_flat(cx, each[i].program(), each[i].program().root, vals[i], out);
      out += each[i].layout().flat_count;
    }
  }

  std::vector<Val> lift_all(AbiContext& cx, const uint64_t* in) const {
    std::vector<Val> out;
    out.reserve(each.size());
    for (const auto& v : each) {
      out.push_back(detail::lift_flat(cx, v.program(), v.program().root, in));
      in += v.layout().flat_count;
    }
    return out;
  }

  void check_count(std::span<const Val> vals, const char* what) const {
    if (vals.size() != each.size())
      throw_invalid_value(std::string("expected ") + std::to_string(each.size()) + " " + what +
                          ", got " + std::to_string(vals.size()));
  }
};

FunctionAbi::FunctionAbi(std::vector<TypeRef> params, std::vector<TypeRef> results,
                         CanonOptions options, bool async)
    : params_(std::move(params)),
      results_(std::move(results)),
      options_(options),
      async_(async),
      param_values_(std::make_unique<Values>(params_, options.addr)),
      result_values_(std::make_unique<Values>(results_, options.addr)),
      lift_params_spilled_(param_values_->flat_count > kMaxFlatParams),
      lower_params_spilled_(param_values_->flat_count > (async_ ? kMaxFlatAsyncParams : kMaxFlatParams)),
      results_spilled_(result_values_->flat_count > kMaxFlatResults) {}

FunctionAbi::~FunctionAbi() = default;

CoreSignature FunctionAbi::core_signature(AbiSide side) const {
  const CoreType ptr = options_.addr == AddrWidth::I32 ? CoreType::I32 : CoreType::I64;
  CoreSignature sig;
  if (params_spilled(side))
    sig.params = {ptr};
  else
    sig.params = param_values_->flat;
  if (!async_) {
    if (!results_spilled())
      sig.results = result_values_->flat;
    else if (side == AbiSide::Lift)
      sig.results = {ptr};
    else
      sig.params.push_back(ptr);
  } else if (side == AbiSide::Lower) {
    if (result_values_->flat_count > 0) sig.params.push_back(ptr);
    sig.results = {CoreType::I32};
  }
  // An async lift returns i32 with a callback and nothing without; the
  // runtime, which knows the callback option, adds that result.
  return sig;
}

void FunctionAbi::lower_args(AbiContext& cx, std::span<const Val> args,
                             std::vector<uint64_t>& flat) const {
  param_values_->check_count(args, "arguments");
  if (!params_spilled(AbiSide::Lift)) return param_values_->lower_all(cx, args, flat);
  const auto& tuple = param_values_->tuple->layout();
  const uint64_t ptr = cx.realloc(0, 0, tuple.align, tuple.size);
  param_values_->store_all(cx, args, ptr);
  flat.push_back(ptr);
}

std::vector<Val> FunctionAbi::lift_results(AbiContext& cx, std::span<const uint64_t> flat) const {
  // An async export delivers its results as the arguments of task.return,
  // which flatten up to MAX_FLAT_PARAMS values.
  const bool spilled = result_values_->flat_count > (async_ ? kMaxFlatParams : kMaxFlatResults);
  const size_t want = spilled ? 1 : result_values_->flat_count;
  if (flat.size() != want)
    throw Error(ErrorKind::Usage, "expected " + std::to_string(want) + " core results, got " +
                                      std::to_string(flat.size()));
  if (!spilled) return result_values_->lift_all(cx, flat.data());
  cx.require_memory("spilled results");
  return result_values_->load_all(cx, flat[0]);
}

std::vector<Val> FunctionAbi::lift_args(AbiContext& cx, std::span<const uint64_t> flat) const {
  const bool spilled = params_spilled(AbiSide::Lower);
  const size_t want = spilled ? 1 : param_values_->flat_count;
  if (flat.size() < want)
    throw Error(ErrorKind::Usage, "expected " + std::to_string(want) + " core arguments, got " +
                                      std::to_string(flat.size()));
  if (!spilled) return param_values_->lift_all(cx, flat.data());
  cx.require_memory("spilled arguments");
  return param_values_->load_all(cx, flat[0]);
}

std::optional<uint64_t> FunctionAbi::result_pointer(std::span<const uint64_t> flat_args) const {
  if (results_.empty() || (!async_ && !results_spilled())) return std::nullopt;
  // The out pointer is the core parameter after the (flat or spilled) arguments.
  const size_t at = params_spilled(AbiSide::Lower) ? 1 : param_values_->flat_count;
  if (flat_args.size() <= at) throw Error(ErrorKind::Usage, "the core arguments lack the result pointer");
  return flat_args[at];
}

void FunctionAbi::lower_results(AbiContext& cx, std::span<const Val> results,
                                std::span<const uint64_t> flat_args,
                                std::vector<uint64_t>& flat) const {
  result_values_->check_count(results, "results");
  if (!async_ && !results_spilled()) return result_values_->lower_all(cx, results, flat);
  const std::optional<uint64_t> out = result_pointer(flat_args);
  if (!out) return;
  cx.require_memory("spilled results");
  result_values_->store_all(cx, results, *out);
}

}  // namespace cmhost::abi
