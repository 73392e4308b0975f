#include "cmhost/error.hpp"
#include "cmhost/runtime.hpp"
#include "call_handles.hpp"
#include "guest_memory.hpp"
#include "lifted_call.hpp"

namespace cmhost::runtime {

FuncRef Func::host(std::shared_ptr<const validate::FuncType> type, HostCallback callback) {
  auto f = std::shared_ptr<Func>(new Func());
  f->type_ = std::move(type);
  f->host_ = std::move(callback);
  return f;
}

namespace {

// Marks an instance as running for the duration of a call.
class Entered {
 public:
  explicit Entered(bool& flag) : flag_(flag) { flag_ = true; }
  ~Entered() { flag_ = false; }
  Entered(const Entered&) = delete;
  Entered& operator=(const Entered&) = delete;

 private:
  bool& flag_;
};

void check_result_count(const validate::FuncType& type, const std::vector<abi::Val>& results) {
  const size_t want = type.result ? 1 : 0;
  if (results.size() != want)
    throw_invalid_value("host function returned " + std::to_string(results.size()) +
                        " results, its type has " + std::to_string(want));
}

}  // namespace

namespace {

// The host's side of a call: arguments from Vals, results into Vals.
class ValSteps final : public LiftedCallSteps {
 public:
  ValSteps(const abi::FunctionAbi& abi, std::span<const abi::Val> args) : abi_(abi), args_(args) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    abi_.lower_args(callee, args_, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    results = abi_.lift_results(callee, flat);
  }
  std::vector<abi::Val> results;

 private:
  const abi::FunctionAbi& abi_;
  std::span<const abi::Val> args_;
};

// Arguments from Vals; the result handed over where the callee left it.
class ReadingSteps final : public LiftedCallSteps {
 public:
  ReadingSteps(const abi::FunctionAbi& abi, std::span<const abi::Val> args, const Func::ResultReader& read)
      : abi_(abi), args_(args), read_(read) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    abi_.lower_args(callee, args_, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    read_(abi::typed::CallResult{callee, flat, abi_.results_spilled()});
  }

 private:
  const abi::FunctionAbi& abi_;
  std::span<const abi::Val> args_;
  const Func::ResultReader& read_;
};

}  // namespace

void Func::call_reading(Store& store, std::span<const abi::Val> args, const ResultReader& read) const {
  if (host_) throw Error(ErrorKind::Usage, "host functions return Vals: call them with call()");
  ReadingSteps steps(*abi_, args, read);
  call_lifted(store, steps);
}

std::vector<abi::Val> Func::call(Store& store, std::span<const abi::Val> args) const {
  if (host_) {
    if (args.size() != type_->params.size())
      throw_invalid_value("expected " + std::to_string(type_->params.size()) + " arguments, got " +
                          std::to_string(args.size()));
    auto results = host_(args);
    check_result_count(*type_, results);
    return results;
  }
  ValSteps steps(*abi_, args);
  call_lifted(store, steps);
  return std::move(steps.results);
}

void Func::call_lifted(Store& store, LiftedCallSteps& steps) const {
  ComponentInstance& inst = *instance_;
  if (inst.poisoned_)
    throw_trap("cannot enter component instance `" + inst.name_ + "`: it trapped earlier");
  if (inst.entered_)
    throw_trap("cannot enter component instance `" + inst.name_ + "` while it is running");
  Entered entered(inst.entered_);
  try {
    std::optional<CoreGuestMemory> memory;
    if (memory_) memory.emplace(store.core(), *memory_, realloc_, &inst.may_leave_);
    CallHandles handles(store, inst, store.next_call_id_++);
    abi::AbiContext cx(memory ? &*memory : nullptr, abi_->options(), &handles);
    std::vector<uint64_t> flat;
    steps.lower_args(cx, flat);
    std::vector<uint64_t> core_results(core_result_count_);
    store.core().call(core_func_, flat, core_results);
    handles.check_borrows_dropped();
    cx.refresh();  // the callee may have grown memory
    steps.lift_results(cx, core_results);
    if (post_return_) store.core().call(*post_return_, core_results, {});
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Trap) inst.poisoned_ = true;
    throw;
  }
}

bool func_type_matches(const validate::FuncType& actual, const validate::FuncType& expected,
                       std::string* why, const abi::SameResource& same_resource) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (actual.async != expected.async) return fail("one function is async and the other is not");
  if (actual.params.size() != expected.params.size())
    return fail("expected " + std::to_string(expected.params.size()) + " parameters, got " +
                std::to_string(actual.params.size()));
  for (size_t i = 0; i < actual.params.size(); ++i) {
    if (actual.param_names[i] != expected.param_names[i])
      return fail("parameter " + std::to_string(i) + " is named `" + actual.param_names[i] +
                  "`, expected `" + expected.param_names[i] + "`");
    if (!abi::equal(*actual.params[i], *expected.params[i], same_resource))
      return fail("parameter `" + actual.param_names[i] + "` is " + actual.params[i]->to_wit() +
                  ", expected " + expected.params[i]->to_wit());
  }
  if (!actual.result != !expected.result) return fail("the result arity differs");
  if (actual.result && !abi::equal(*actual.result, *expected.result, same_resource))
    return fail("the result is " + actual.result->to_wit() + ", expected " +
                expected.result->to_wit());
  return true;
}

}  // namespace cmhost::runtime
