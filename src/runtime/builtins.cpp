#include "builtins.hpp"

#include <fmt/core.h>

#include <cstring>
#include <utility>

#include "cmhost/error.hpp"
#include "handles.hpp"
#include "scheduler.hpp"
#include "streams.hpp"
#include "task.hpp"
#include "waitables.hpp"

namespace cmhost::runtime {

namespace {

using binary::CanonKind;
using Params = std::span<const uint64_t>;
using Results = std::span<uint64_t>;

// Returned by a copy or a cancellation that has to wait, in async mode.
constexpr uint32_t kBlocked = 0xffff'ffff;

CoreType engine_type(const binary::CoreValType& t) {
  if (!std::holds_alternative<binary::CoreNumType>(t))
    throw Error(ErrorKind::Link, "built-ins taking references are not supported");
  return *binary::to_core_type(t);
}

engine::FuncType engine_func_type(const binary::CoreFuncType& t) {
  engine::FuncType out;
  for (const auto& p : t.params) out.params.push_back(engine_type(p));
  for (const auto& r : t.results) out.results.push_back(engine_type(r));
  return out;
}

bool any_node(const abi::Type& t, abi::TypeKind kind) {
  if (t.kind() == kind) return true;
  for (const auto& f : t.fields())
    if (any_node(*f.type, kind)) return true;
  for (const auto& c : t.cases())
    if (c.type && any_node(*c.type, kind)) return true;
  return t.element() && t.is_list_like() && any_node(*t.element(), kind);
}

// Whether lifting `result` reads memory (spilled, or strings and lists).
bool result_reads_memory(const abi::Type& result, abi::AddrWidth width) {
  return result.layout(width).flat_count > abi::kMaxFlatParams || any_node(result, abi::TypeKind::String) ||
         any_node(result, abi::TypeKind::List) || any_node(result, abi::TypeKind::Map);
}

const char* end_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::StreamReadable:
    case HandleKind::StreamWritable: return "stream";
    default: return "future";
  }
}

// What every built-in closure knows: where it was defined and with what.
struct Site {
  Store* store;
  ComponentInstance* inst;
  CanonKind kind;
  abi::TypeRef type;  // stream/future type, or task.return's result
  CopyOptions options;
  Builtins::Links links;
  bool async;        // subtask.cancel, {stream,future}.cancel-*
  bool cancellable;  // waitable-set.{wait,poll}, thread.{suspend,yield}*
  uint32_t context_slot;

  Scheduler& scheduler() const { return store->scheduler(); }
  Thread& thread() const { return store->scheduler().current_or_root(); }
  const char* name() const { return binary::to_string(kind); }
  const abi::TypeRef& element() const { return type->element(); }
  Task& task() const {
    Thread& t = thread();
    if (!t.task) throw_trap(std::string(name()) + " called outside of a task");
    return *t.task;
  }
};

HandleTable& handles(const Site& site) { return *site.inst->state().handles; }

bool* may_leave_flag(const Site& site) { return &site.inst->state().may_leave; }

// The end a stream or future built-in names at `index`: a handle of the kind
// the built-in works on, whose element type is the built-in's.
CopyEnd& copy_end(const Site& site, uint32_t index) {
  HandleKind kind;
  switch (site.kind) {
    case CanonKind::StreamRead:
    case CanonKind::StreamCancelRead:
    case CanonKind::StreamDropReadable: kind = HandleKind::StreamReadable; break;
    case CanonKind::StreamWrite:
    case CanonKind::StreamCancelWrite:
    case CanonKind::StreamDropWritable: kind = HandleKind::StreamWritable; break;
    case CanonKind::FutureRead:
    case CanonKind::FutureCancelRead:
    case CanonKind::FutureDropReadable: kind = HandleKind::FutureReadable; break;
    default: kind = HandleKind::FutureWritable; break;
  }
  auto& end = handles(site).get<CopyEnd>(index, kind);
  if (!same_element_type(end.element_type(), site.element()))
    throw_trap(fmt::format("{}: the {}'s element type is not {}", site.name(), end_name(kind), site.type->to_wit()));
  return end;
}

void check_may_leave(const Site& site) {
  if (!site.inst->state().may_leave)
    throw_trap(fmt::format("cannot leave component instance `{}`: {} while may_leave is false", site.inst->name(),
                           site.name()));
}

Thread& other_thread(const Site& site, uint32_t index) {
  return *site.inst->state().threads->get(index, "thread");
}

void store_event(const Site& site, uint64_t ptr, uint32_t code, uint32_t index, uint32_t payload,
                 Results results) {
  const std::span<uint8_t> memory = site.store->core().memory_bytes(*site.options.memory);
  if (ptr % 4 != 0) throw_trap("misaligned event pointer");
  if (ptr > memory.size() || memory.size() - ptr < 8) throw_trap("event pointer out of bounds");
  const uint32_t words[2] = {index, payload};
  std::memcpy(memory.data() + ptr, words, sizeof words);
  results[0] = code;
}

// stream_copy / future_copy of the reference.
uint32_t copy(const Site& site, uint32_t index, uint64_t ptr, uint64_t length) {
  check_may_leave(site);
  const bool stream = site.kind == CanonKind::StreamRead || site.kind == CanonKind::StreamWrite;
  const bool read = site.kind == CanonKind::StreamRead || site.kind == CanonKind::FutureRead;
  auto& end = copy_end(site, index);
  if (end.state == CopyEnd::State::Done) {
    if (stream)
      throw_trap(read ? "cannot read from stream after being notified that the writable end dropped"
                      : "cannot write to stream after being notified that the readable end dropped");
    throw_trap(read ? "cannot read from future after previous read succeeded"
                    : "cannot write to future after previous write succeeded or readable end dropped");
  }
  if (end.state != CopyEnd::State::Idle) throw_trap(fmt::format("{}: the {} end is busy", site.name(), end_name(end.handle_kind())));
  if (end.in_waitable_set() && !site.options.async)
    throw_trap(fmt::format("{}: waitable cannot be used synchronously while added to a waitable set", site.name()));

  auto buffer = std::make_unique<GuestBuffer>(*site.store, *site.inst, may_leave_flag(site), site.element(),
                                              site.options, ptr, stream ? length : 1);
  GuestBuffer& b = *buffer;
  end.start_copy(index, std::move(buffer));
  if (stream) {
    if (read)
      end.stream().read(*site.inst, b, end);
    else
      end.stream().write(*site.inst, b, end);
  } else {
    if (read)
      end.future().read(*site.inst, b, end);
    else
      end.future().write(*site.inst, b, end);
  }
  if (!end.has_pending_event()) {
    if (site.options.async) return kBlocked;
    end.wait_for_pending_event(site.scheduler(), site.thread());
  }
  return end.take_pending_event().payload;
}

uint32_t cancel_copy(const Site& site, uint32_t index) {
  check_may_leave(site);
  auto& end = copy_end(site, index);
  if (end.state != CopyEnd::State::Copying || end.has_sync_waiter())
    throw_trap(fmt::format("{}: no {} in progress to cancel", site.name(), end_name(end.handle_kind())));
  // component-model#647 traps here; guests built before it (wit-bindgen
  // 0.58 and older) cancel their own wake-up stream's read this way, which
  // the engine may let through as long as the cancel need not wait.
  const bool sync_in_set = end.in_waitable_set() && !site.async;
  if (sync_in_set && !site.store->engine().config().allow_sync_cancel_in_waitable_set)
    throw_trap(fmt::format("{}: waitable cannot be used synchronously while added to a waitable set (guests built "
                           "before component-model#647, such as wit-bindgen 0.58's, do this: "
                           "EngineConfig::allow_sync_cancel_in_waitable_set, or `--compat=sync-cancel-in-set` "
                           "on the command line, runs them)",
                           site.name()));
  end.state = CopyEnd::State::CancellingCopy;
  if (!end.has_pending_event()) {
    end.channel().cancel();
    if (!end.has_pending_event()) {
      if (site.async) return kBlocked;
      if (sync_in_set)
        throw_trap(fmt::format("{}: waitable cannot wait synchronously while added to a waitable set", site.name()));
      end.wait_for_pending_event(site.scheduler(), site.thread());
    }
  }
  return end.take_pending_event().payload;
}

void drop_end(const Site& site, uint32_t index) {
  check_may_leave(site);
  // Checked before removing, so that a busy end stays usable to the trap's
  // message and the table keeps its shape.
  auto& end = copy_end(site, index);
  end.drop();
  handles(site).remove_entry(index);
}

uint32_t cancel_subtask(const Site& site, uint32_t index) {
  check_may_leave(site);
  Thread& thread = site.thread();
  auto& subtask = handles(site).get<Subtask>(index, HandleKind::Subtask);
  if (subtask.resolve_delivered()) throw_trap("cannot cancel a subtask whose resolution was already delivered");
  if (subtask.cancellation_requested) throw_trap("cannot cancel a subtask twice");
  if (subtask.in_waitable_set() && !site.async)
    throw_trap(fmt::format("{}: waitable cannot be used synchronously while added to a waitable set", site.name()));
  if (!subtask.resolved()) {
    subtask.cancellation_requested = true;
    if (subtask.callee) subtask.callee->request_cancellation(thread.task ? thread.task->inst : site.inst);
    if (subtask.on_cancel) std::exchange(subtask.on_cancel, nullptr)();  // the host may resolve it now
    if (!subtask.resolved()) {
      if (site.async) return kBlocked;
      subtask.wait_for_pending_event(site.scheduler(), thread);
    }
  }
  subtask.take_pending_event();
  return static_cast<uint32_t>(subtask.state);
}

uint32_t new_thread(const Site& site, uint32_t function_index, uint32_t argument) {
  Task& task = site.task();
  check_may_leave(site);
  const auto function = site.store->core().table_func(*site.links.table, function_index);
  if (!function) throw_trap(fmt::format("thread.new-indirect: no function at table index {}", function_index));
  const engine::FuncType start_type{{CoreType::I32}, {}};
  if (site.store->core().func_type(*function) != start_type)
    throw_trap("thread.new-indirect: the function's type is not the declared start function type");
  Store* store = site.store;
  const engine::Extern start = *function;
  // The thread keeps its task alive.
  std::shared_ptr<Task> owner = task.shared_from_this();
  Thread& thread = store->scheduler().new_fiber_thread(&task, task.inst, [store, owner, start, argument] {
    Thread& self = *store->scheduler().current();
    try {
      const uint64_t arg = argument;
      store->core().call(start, std::span<const uint64_t>(&arg, 1), {});
      owner->unregister_thread(self);
    } catch (...) {
      owner->drop_thread(self);
      try {
        throw;
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::Trap) owner->inst->state().poisoned = true;
        throw;
      }
    }
  });
  task.register_thread(thread);
  return thread.index;
}

engine::HostFunc context_get(const Site& site) {
  return [site](engine::Caller&, Params, Results r) { r[0] = site.thread().storage[site.context_slot]; };
}

engine::HostFunc context_set(const Site& site) {
  return [site](engine::Caller&, Params p, Results) { site.thread().storage[site.context_slot] = p[0]; };
}

engine::HostFunc backpressure_inc(const Site& site) {
  return [site](engine::Caller&, Params, Results) {
    if (++site.inst->state().backpressure >= (1u << 16)) throw_trap("backpressure counter overflow (2^16)");
  };
}

engine::HostFunc backpressure_dec(const Site& site) {
  return [site](engine::Caller&, Params, Results) {
    if (site.inst->state().backpressure == 0) throw_trap("backpressure.dec below zero");
    --site.inst->state().backpressure;
  };
}

engine::HostFunc task_return(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    Task& task = site.task();
    check_may_leave(site);
    if (!task.func->lifted().async_lift) throw_trap("task.return called by a task not lifted with the async option");
    const auto& result = task.func->type().result;
    if (!result != !site.type || (result && !abi::equal(*result, *site.type)))
      throw_trap("task.return's result type is not the task's result type");
    // The reference compares the options outright; like the suite (and
    // wasmtime) cmhost compares what lifting the result uses.
    if (result && result_reads_memory(*result, site.options.abi.addr)) {
      if (site.links.memory != task.func->lifted().memory ||
          (any_node(*result, abi::TypeKind::String) &&
           site.options.abi.encoding != task.func->lifted().abi->options().encoding))
        throw_trap("task.return's options differ from those of the task's lift");
    }
    task.return_(task.callee_abi->cx(), p);
  };
}

engine::HostFunc task_cancel(const Site& site) {
  return [site](engine::Caller&, Params, Results) {
    Task& task = site.task();
    check_may_leave(site);
    if (!task.func->lifted().async_lift) throw_trap("task.cancel called by a task not lifted with the async option");
    task.cancel();
  };
}

engine::HostFunc waitable_set_new(const Site& site) {
  return [site](engine::Caller&, Params, Results r) {
    check_may_leave(site);
    r[0] = handles(site).add(HandleKind::WaitableSet, std::make_shared<WaitableSet>());
  };
}

engine::HostFunc waitable_set_wait(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) {
    check_may_leave(site);
    auto& set = handles(site).get<WaitableSet>(static_cast<uint32_t>(p[0]), HandleKind::WaitableSet);
    const Event event = set.wait_for_event_and(site.scheduler(), site.thread(), [] { return true; }, site.cancellable);
    store_event(site, p[1], static_cast<uint32_t>(event.code), event.index, event.payload, r);
  };
}

engine::HostFunc waitable_set_poll(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) {
    check_may_leave(site);
    auto& set = handles(site).get<WaitableSet>(static_cast<uint32_t>(p[0]), HandleKind::WaitableSet);
    const Event event = set.poll(site.thread(), site.cancellable);
    store_event(site, p[1], static_cast<uint32_t>(event.code), event.index, event.payload, r);
  };
}

engine::HostFunc waitable_set_drop(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    const auto index = static_cast<uint32_t>(p[0]);
    handles(site).get<WaitableSet>(index, HandleKind::WaitableSet).check_droppable();
    handles(site).remove_entry(index);
  };
}

engine::HostFunc waitable_join(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    const auto waitable_index = static_cast<uint32_t>(p[0]);
    const auto set_index = static_cast<uint32_t>(p[1]);
    HandleTable::Entry& entry = handles(site).entry_or_trap(waitable_index);
    auto* waitable = dynamic_cast<Waitable*>(entry.object.get());
    if (!waitable)
      throw_trap(fmt::format("handle index {} is a {}, not a waitable", waitable_index, to_string(entry.kind)));
    if (waitable->has_sync_waiter()) throw_trap("cannot join a waitable that a synchronous call waits on");
    if (set_index == 0) return waitable->join(nullptr);
    waitable->join(&handles(site).get<WaitableSet>(set_index, HandleKind::WaitableSet));
  };
}

engine::HostFunc subtask_cancel(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) { r[0] = cancel_subtask(site, static_cast<uint32_t>(p[0])); };
}

engine::HostFunc subtask_drop(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    const auto index = static_cast<uint32_t>(p[0]);
    auto& subtask = handles(site).get<Subtask>(index, HandleKind::Subtask);
    subtask.check_droppable();
    subtask.drop_waitable();
    handles(site).remove_entry(index);
  };
}

engine::HostFunc channel_new(const Site& site) {
  return [site](engine::Caller&, Params, Results r) {
    check_may_leave(site);
    const bool stream = site.kind == CanonKind::StreamNew;
    std::shared_ptr<HandleObject> shared;
    if (stream)
      shared = std::make_shared<SharedStream>(site.element());
    else
      shared = std::make_shared<SharedFuture>(site.element());
    auto readable = std::make_shared<CopyEnd>(stream ? CopyEnd::Kind::StreamReadable : CopyEnd::Kind::FutureReadable, shared);
    auto writable = std::make_shared<CopyEnd>(stream ? CopyEnd::Kind::StreamWritable : CopyEnd::Kind::FutureWritable, shared);
    const uint64_t ri = handles(site).add(readable->handle_kind(), readable);
    const uint64_t wi = handles(site).add(writable->handle_kind(), writable);
    r[0] = ri | (wi << 32);
  };
}

engine::HostFunc stream_copy(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) { r[0] = copy(site, static_cast<uint32_t>(p[0]), p[1], p[2]); };
}

engine::HostFunc future_copy(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) { r[0] = copy(site, static_cast<uint32_t>(p[0]), p[1], 1); };
}

engine::HostFunc channel_cancel_copy(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) { r[0] = cancel_copy(site, static_cast<uint32_t>(p[0])); };
}

engine::HostFunc channel_drop_end(const Site& site) {
  return [site](engine::Caller&, Params p, Results) { drop_end(site, static_cast<uint32_t>(p[0])); };
}

engine::HostFunc thread_index(const Site& site) {
  return [site](engine::Caller&, Params, Results r) {
    check_may_leave(site);
    r[0] = site.thread().index;
  };
}

engine::HostFunc thread_new_indirect(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) {
    r[0] = new_thread(site, static_cast<uint32_t>(p[0]), static_cast<uint32_t>(p[1]));
  };
}

engine::HostFunc thread_resume_later(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    Thread& other = other_thread(site, static_cast<uint32_t>(p[0]));
    if (!other.suspended()) throw_trap("thread.resume-later: the thread is not suspended");
    site.scheduler().resume_later(other);
  };
}

engine::HostFunc thread_suspend(const Site& site) {
  return [site](engine::Caller&, Params, Results r) {
    check_may_leave(site);
    r[0] = site.scheduler().suspend(site.thread(), site.cancellable);
  };
}

engine::HostFunc thread_yield(const Site& site) {
  return [site](engine::Caller&, Params, Results r) {
    check_may_leave(site);
    r[0] = site.scheduler().yield(site.thread(), site.cancellable);
  };
}

engine::HostFunc thread_switch(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) {
    check_may_leave(site);
    Thread& self = site.thread();
    Thread& other = other_thread(site, static_cast<uint32_t>(p[0]));
    Scheduler& s = site.scheduler();
    switch (site.kind) {
      case CanonKind::ThreadSuspendThenResume:
        if (!other.suspended()) throw_trap("thread.suspend-then-resume: the thread is not suspended");
        r[0] = s.suspend_then_resume(self, site.cancellable, other);
        break;
      case CanonKind::ThreadYieldThenResume:
        if (!other.suspended()) throw_trap("thread.yield-then-resume: the thread is not suspended");
        r[0] = s.yield_then_resume(self, site.cancellable, other);
        break;
      case CanonKind::ThreadSuspendThenPromote: r[0] = s.suspend_then_promote(self, site.cancellable, other); break;
      default: r[0] = s.yield_then_promote(self, site.cancellable, other); break;
    }
  };
}

engine::HostFunc error_context_new(const Site& site) {
  return [site](engine::Caller&, Params p, Results r) {
    check_may_leave(site);
    GuestContext guest(*site.store, *site.inst, site.options.memory, std::nullopt, site.options.abi, nullptr);
    const abi::ValueAbi string_abi(abi::Type::string(), site.options.abi.addr);
    const uint64_t flat[2] = {p[0], p[1]};
    const abi::Val message = string_abi.lift_flat(guest.cx(), flat);
    auto context = std::make_shared<ErrorContext>(std::string(message.as_string()));
    r[0] = handles(site).add(HandleKind::ErrorContext, std::move(context));
  };
}

engine::HostFunc error_context_debug_message(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    auto& context = handles(site).get<ErrorContext>(static_cast<uint32_t>(p[0]), HandleKind::ErrorContext);
    GuestContext guest(*site.store, *site.inst, site.options.memory, site.options.realloc, site.options.abi,
                       nullptr);
    const abi::ValueAbi string_abi(abi::Type::string(), site.options.abi.addr);
    string_abi.store(guest.cx(), abi::Val::string(context.debug_message), p[1]);
  };
}

engine::HostFunc error_context_drop(const Site& site) {
  return [site](engine::Caller&, Params p, Results) {
    check_may_leave(site);
    handles(site).remove<ErrorContext>(static_cast<uint32_t>(p[0]), HandleKind::ErrorContext);
  };
}

// Shared-everything threads: thread.spawn-*, thread.available-parallelism.
engine::HostFunc unsupported(const Site& site) {
  throw Error(ErrorKind::Link, fmt::format("canon {} is not supported", site.name()));
}

// Lift, lower and resource.* have plan steps of their own and never come here.
engine::HostFunc own_step(const Site& site) { return unsupported(site); }

// Each row's behaviour (binary/canon_table.def): a row naming a function
// not defined above fails to compile, and the switch covers every kind.
engine::HostFunc make_func(const Site& site) {
  switch (site.kind) {
#define CMHOST_CANON(kind, opcode, name, immediates, params, results, behaviour) \
  case CanonKind::kind: return behaviour(site);
#include "binary/canon_table.def"
#undef CMHOST_CANON
  }
  throw Error(ErrorKind::Usage, "unknown canonical definition");
}

}  // namespace

engine::Extern Builtins::make(Store& store, ComponentInstance& inst, const validate::step::CanonBuiltin& builtin,
                              const Links& links) {
  Site site{&store,
                   &inst,
                   builtin.canon.kind,
                   builtin.type,
                   CopyOptions{links.memory, links.realloc,
                               abi::CanonOptions{builtin.options.addr, builtin.options.encoding, true}},
                   links,
                   builtin.canon.async,
                   builtin.canon.cancellable,
                   builtin.canon.context_slot};
  site.options.async = builtin.options.async;
  return store.core().host_func(engine_func_type(builtin.core_type), make_func(site));
}

}  // namespace cmhost::runtime
