#include "canon_lower.hpp"

#include "call_context.hpp"
#include "cmhost/error.hpp"
#include "host_calls.hpp"
#include "lifted_call.hpp"
#include "task.hpp"
#include "waitables.hpp"

namespace cmhost::runtime {

namespace {

// The caller's side of a call made on this stack, borrows scoped by `call_id`.
// Copies between the caller's core values and memory and the callee's.
class CopySteps final : public LiftedCallSteps {
 public:
  CopySteps(const abi::CallCopy& copy, abi::AbiContext& caller, std::span<const uint64_t> caller_args)
      : copy_(copy), caller_(caller), caller_args_(caller_args) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    copy_.copy_args(caller_, caller_args_, callee, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    caller_.refresh();
    copy_.copy_results(callee, flat, caller_, caller_args_, results);
  }
  std::vector<uint64_t> results;

 private:
  const abi::CallCopy& copy_;
  abi::AbiContext& caller_;
  std::span<const uint64_t> caller_args_;
};

// Arguments lifted from the caller into Vals and lowered into the callee;
// results the other way. For callees whose task lives on after the lowered
// call returns (async), the caller's side is its subtask, which this only
// observes: when the caller is gone, results are dropped.
class LowerSteps final : public LiftedCallSteps {
 public:
  LowerSteps(const LowerSite& site, std::shared_ptr<const abi::FunctionAbi> callee_abi,
             std::span<const uint64_t> args, const std::shared_ptr<Subtask>& subtask)
      : site_(site),
        callee_abi_(std::move(callee_abi)),
        args_(args.begin(), args.end()),
        subtask_(subtask) {}

  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    std::shared_ptr<Subtask> subtask = subtask_.lock();
    if (!subtask) throw_trap("the caller of this task is gone");
    subtask->on_start();
    GuestContext caller(*site_.store, *site_.inst, site_.memory, site_.realloc, site_.abi->options(),
                        subtask->lenders.get());
    const std::vector<abi::Val> args = site_.abi->lift_args(caller.cx(), args_);
    callee_abi_->lower_args(callee, args, flat);
  }

  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    const std::vector<abi::Val> results = callee_abi_->lift_results(callee, flat);
    std::shared_ptr<Subtask> subtask = subtask_.lock();
    if (!subtask) return;
    GuestContext caller(*site_.store, *site_.inst, site_.memory, site_.realloc, site_.abi->options(),
                        subtask->lenders.get());
    std::vector<uint64_t> out;
    site_.abi->lower_results(caller.cx(), results, args_, out);
    subtask->resolve(Subtask::State::Returned, std::move(out));
  }

  void cancelled() override {
    std::shared_ptr<Subtask> subtask = subtask_.lock();
    if (!subtask) return;
    subtask->resolve(subtask->state == Subtask::State::Starting ? Subtask::State::CancelledBeforeStarted
                                                                : Subtask::State::CancelledBeforeReturned,
                     {});
  }

 private:
  LowerSite site_;
  std::shared_ptr<const abi::FunctionAbi> callee_abi_;
  std::vector<uint64_t> args_;
  std::weak_ptr<Subtask> subtask_;
};

// A synchronous call into a synchronous-typed lifted function through Vals,
// all on this stack.
class SyncSteps final : public LiftedCallSteps {
 public:
  SyncSteps(const abi::FunctionAbi& caller_abi, abi::AbiContext& caller, const abi::FunctionAbi& callee_abi,
            std::span<const uint64_t> args)
      : caller_abi_(caller_abi), caller_(caller), callee_abi_(callee_abi), args_(args) {}
  void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) override {
    const std::vector<abi::Val> args = caller_abi_.lift_args(caller_, args_);
    callee_abi_.lower_args(callee, args, flat);
  }
  void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) override {
    const std::vector<abi::Val> results = callee_abi_.lift_results(callee, flat);
    caller_.refresh();
    caller_abi_.lower_results(caller_, results, args_, out);
  }
  std::vector<uint64_t> out;

 private:
  const abi::FunctionAbi& caller_abi_;
  abi::AbiContext& caller_;
  const abi::FunctionAbi& callee_abi_;
  std::span<const uint64_t> args_;
};

}  // namespace

void Lowering::check_may_leave(const ComponentInstance& caller) {
  if (!caller.state().may_leave)
    throw_trap("cannot leave component instance `" + caller.name() + "` here (may_leave is false)");
}

// A synchronous call into another instance's synchronous lifted function
// copies memory to memory with no Val in between. The copy needs the two
// memories to be distinct (the source must not move while the
// destination's realloc runs).
bool Lowering::can_fuse(const LowerSite& site, const Func& target) {
  if (site.async || target.is_host() || target.lifted().instance == site.inst) return false;
  if (target.type().async || !target.lifted().abi) return false;
  return !(site.memory && target.lifted().memory && *site.memory == *target.lifted().memory);
}

engine::HostFunc Lowering::fused(const LowerSite& site, FuncRef target) {
  auto copy = std::make_shared<const abi::CallCopy>(*site.abi, *target->lifted().abi);
  return [site, target, copy](engine::Caller&, std::span<const uint64_t> params, std::span<uint64_t> results) {
    check_may_leave(*site.inst);
    GuestContext caller(*site.store, *site.inst, site.memory, site.realloc, site.abi->options(),
                        site.store->next_call_id());
    CopySteps steps(*copy, caller.cx(), params);
    target->call_lifted(*site.store, steps, site.inst);
    std::copy(steps.results.begin(), steps.results.end(), results.begin());
  };
}

engine::HostFunc Lowering::make(LowerSite site, FuncRef target) {
  if (can_fuse(site, *target)) return fused(site, std::move(target));
  return [site, target](engine::Caller&, std::span<const uint64_t> params, std::span<uint64_t> results) {
    check_may_leave(*site.inst);
    if (std::holds_alternative<AsyncHostFunc>(target->host_form())) return call_async_host(site, *target, params, results);
    if (target->is_host()) return call_host(site, *target, params, results);
    if (!target->type().async) return call_sync(site, *target, params, results);
    call_async(site, *target, params, results);
  };
}

// Host functions return at once: an async lower reports RETURNED.
void Lowering::call_host(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                         std::span<uint64_t> results) {
  Store& store = *site.store;
  GuestContext caller(store, *site.inst, site.memory, site.realloc, site.abi->options(), uint64_t{0});
  abi::AbiContext& cx = caller.cx();
  if (const auto* flat = std::get_if<FlatHostFunc>(&target.host_form())) {  // no Vals: it reads and writes the core values
    HostCall call{store, site.inst, &cx};
    flat->callback(call, cx, *site.abi, params, site.async ? std::span<uint64_t>() : results);
    if (site.async) results[0] = pack_subtask(Subtask::State::Returned, 0);
    return;
  }
  const std::vector<abi::Val> args = site.abi->lift_args(cx, params);
  HostCall call{store, site.inst, &cx};
  const std::vector<abi::Val> values = target.call_host(call, args);
  cx.refresh();
  std::vector<uint64_t> flat;
  site.abi->lower_results(cx, values, params, flat);
  if (site.async) {
    results[0] = pack_subtask(Subtask::State::Returned, 0);
    return;
  }
  std::copy(flat.begin(), flat.end(), results.begin());
}

// An async host function: its completion resolves the caller's subtask, now
// or later from the event loop.
void Lowering::call_async_host(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                               std::span<uint64_t> results) {
  const AsyncHostFunc& async = std::get<AsyncHostFunc>(target.host_form());
  Store& store = *site.store;
  Scheduler& scheduler = store.scheduler();
  HostDriver* driver = scheduler.host_driver();
  if (!driver) throw Error(ErrorKind::Usage, "async host functions need the embedder's event loop");
  ComponentInstance& caller = *site.inst;
  auto subtask = std::make_shared<Subtask>();
  subtask->lenders = std::make_unique<CallHandles>(store, caller, 0);
  std::vector<abi::Val> args;
  {
    GuestContext lifting(store, caller, site.memory, site.realloc, site.abi->options(), subtask->lenders.get());
    args = site.abi->lift_args(lifting.cx(), params);
  }
  subtask->on_start();
  auto completion = std::make_shared<HostCompletion>(site, target.type_ref(), params, subtask, driver->post_box(),
                                                     async.name);
  driver->call_started();
  try {
    GuestContext context(store, caller, site.memory, site.realloc, site.abi->options(), uint64_t{0});
    HostCall call{store, site.inst, &context.cx()};
    async.callback(call, args, completion);
  } catch (...) {
    completion->abandon();  // the call fails here, with what the callable threw
    throw;
  }
  const bool done = completion->deliver_if_completed();
  completion.reset();  // the callable keeps its own reference while it runs on
  if (!site.async) {
    if (!done && !subtask->resolved() && !subtask->host_failure) {
      Subtask* s = subtask.get();
      Thread& thread = scheduler.current_or_root();
      thread.waits_on_host = true;
      try {
        scheduler.wait_until(thread, [s] { return s->resolved() || s->host_failure.has_value(); }, false);
      } catch (...) {
        thread.waits_on_host = false;
        throw;
      }
      thread.waits_on_host = false;
    }
    if (subtask->host_failure) throw *subtask->host_failure;  // a trap in this caller
    subtask->deliver_resolve();
    std::copy(subtask->flat_results.begin(), subtask->flat_results.end(), results.begin());
    return;
  }
  results[0] = hand_to_async_caller(caller, subtask);
}

// An async lower's core result: RETURNED when the subtask resolved at once,
// else its state and its index in the caller's table, where it reports its
// progress from now on.
uint32_t Lowering::hand_to_async_caller(ComponentInstance& caller, const std::shared_ptr<Subtask>& subtask) {
  if (subtask->resolved()) {
    subtask->deliver_resolve();
    return pack_subtask(Subtask::State::Returned, 0);
  }
  const uint32_t index = caller.state().handles->add(HandleKind::Subtask, subtask);
  subtask->index = index;
  subtask->reports_progress();
  return pack_subtask(subtask->state, index);
}

void Lowering::call_sync(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                         std::span<uint64_t> results) {
  Store& store = *site.store;
  GuestContext caller(store, *site.inst, site.memory, site.realloc, site.abi->options(), uint64_t{0});
  SyncSteps steps(*site.abi, caller.cx(), *target.lifted().abi, params);
  target.call_lifted(store, steps, site.inst);
  if (site.async) {
    results[0] = pack_subtask(Subtask::State::Returned, 0);
    return;
  }
  std::copy(steps.out.begin(), steps.out.end(), results.begin());
}

// An async-typed callee: a subtask that a synchronous lower waits for and
// an async lower hands to the caller when it did not resolve at once.
void Lowering::call_async(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                          std::span<uint64_t> results) {
  Store& store = *site.store;
  Scheduler& scheduler = store.scheduler();
  Thread& thread = scheduler.current_or_root();
  ComponentInstance& caller = *site.inst;
  auto subtask = std::make_shared<Subtask>();
  subtask->lenders = std::make_unique<CallHandles>(store, caller, 0);
  auto steps = std::make_shared<LowerSteps>(site, target.lifted().abi, params, subtask);
  subtask->callee = Task::start_async(store, target, std::move(steps), &caller);
  if (!site.async) {
    if (!subtask->resolved()) {
      Subtask* s = subtask.get();
      scheduler.wait_until(thread, [s] { return s->resolved(); }, false);
    }
    subtask->deliver_resolve();
    std::copy(subtask->flat_results.begin(), subtask->flat_results.end(), results.begin());
    return;
  }
  results[0] = hand_to_async_caller(caller, subtask);
}

}  // namespace cmhost::runtime
