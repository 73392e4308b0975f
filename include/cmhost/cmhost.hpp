// The cmhost embedder API.
//
//   cmhost::Engine engine;
//   auto component = cmhost::Component::from_file(engine, "app.wasm");
//   cmhost::Linker linker;
//   linker.func_wrap("log", [](std::string_view s) { std::puts(std::string(s).c_str()); });
//   cmhost::Store store(engine);
//   auto instance = linker.instantiate(store, component);
//   auto run = instance.typed_func<uint32_t(uint32_t)>("run");
//   uint32_t result = run.call(store, 42);
//
// Every failure is a cmhost::Error whose kind says decode, validate, link or
// trap, and whose message says what and where. The classes hold their
// implementation behind an opaque `Impl`, so this header and those it
// includes are all an embedder compiles.
#pragma once

#include <array>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <variant>
#include <vector>

#include "cmhost/abi.hpp"
#include "cmhost/abi/typed.hpp"
#include "cmhost/abi/typed/val_bridge.hpp"
#include "cmhost/abi/typed_signature.hpp"
#include "cmhost/engine.hpp"
#include "cmhost/error.hpp"
#include "cmhost/function_ref.hpp"
#include "cmhost/types.hpp"
#include "cmhost/wave.hpp"

namespace cmhost {

namespace engine {
class Engine;  // cmhost/engine/backend.hpp
}

using abi::Val;

class Caller;
class ChannelEnd;
class Func;
class Instance;
class Linker;
class InstancePre;
class Store;
class HostResourceBase;

// The core engine and its configuration. A handle, as wasmtime's Engine
// is: copies share one engine, and every Store and Component made from it
// keeps it alive, so the embedder's Engine may go first.
class Engine {
 public:
  explicit Engine(engine::EngineConfig config = {});
  Engine(const Engine&);
  Engine& operator=(const Engine&);
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  ~Engine();
  // The core engine (the backend EngineConfig chose), for the runtime and
  // tools that drive core modules (cmhost/engine/backend.hpp).
  engine::Engine& core();

  // Moves the engine's epoch on by one; any thread may call it (a timer
  // thread, say). Guest code of a store whose deadline it reaches traps
  // with "interrupted" (Store::set_epoch_deadline), and so does the store's
  // event loop if it is waiting.
  void increment_epoch();

 private:
  friend class Component;
  friend class Store;
  // The shared core engine; Error (Usage) on an Engine moved from.
  const std::shared_ptr<engine::Engine>& shared_core() const;
  std::shared_ptr<engine::Engine> core_;
};

// A decoded, validated component with its core modules compiled. Copies
// share it.
class Component {
 public:
  static Component from_bytes(const Engine& engine, std::vector<uint8_t> bytes);
  static Component from_file(const Engine& engine, const std::string& path);
  // The component with its core modules from `artifact_path`, which the
  // engine's backend compiled ahead of time (Engine::load_artifact), instead
  // of compiled or taken from the cache: Error (Usage) saying why when the
  // artifact does not fit the engine or the component (another component,
  // a stale build, other flags), is no artifact, or is a file another user
  // owns or others may write.
  static Component from_bytes_with_artifact(const Engine& engine, std::vector<uint8_t> bytes,
                                            const std::string& artifact_path);
  static Component from_file_with_artifact(const Engine& engine, const std::string& path, const std::string& artifact_path);
  // Compiles the component's core modules ahead of time into an artifact
  // file for from_bytes_with_artifact (`cmhost compile`). Error (Usage) on
  // an engine whose backend has no artifacts; Validate naming the module
  // and feature the translation cannot handle.
  static void write_artifact(const Engine& engine, const std::vector<uint8_t>& bytes, const std::string& artifact_path);

  // Its imports and exports.
  const ComponentType& type() const;

  // A component too big to wait for optimized code runs baseline code first
  // (EngineConfig::AotTier::Tiered) while the optimized code is built in
  // the background. Once that is ready: the component again, with it
  // (decoded and validated anew, as from_bytes with a warm cache), for the
  // instances made from now on; those made already keep their code.
  // Otherwise (still building, or already the final code): nullopt, after
  // at most one look at the cache.
  std::optional<Component> with_faster_code() const;

  class Impl;

 private:
  friend class Linker;
  friend class InstancePre;
  // Decoded, validated and compiled (or its artifact taken from the cache).
  static Component compiled(const std::shared_ptr<engine::Engine>& core,
                            std::shared_ptr<const std::vector<uint8_t>> bytes);
  std::shared_ptr<const Impl> impl_;
};

// What a store lets its guests take. A limit hit is a trap whose message
// names it; memory and table growth past a limit fails instead, as growth
// past a declared maximum does (memory.grow and table.grow return -1), and
// an instance whose memory or table starts above one is refused (a trap).
// The defaults bound what a hostile guest can make the host allocate while
// leaving room for real workloads (docs/robustness.md).
struct StoreLimits {
  // Linear memory: each memory (unset: its declared maximum), and the
  // store's memories together, checked at every memory.grow (guest or host)
  // against what the store's memories hold at that moment.
  std::optional<uint64_t> memory_bytes = std::nullopt;
  std::optional<uint64_t> total_memory_bytes = uint64_t{4} << 30;
  // Elements of the store's core tables together (8 to 24 host bytes each),
  // checked as instances are made and at every table.grow.
  std::optional<uint64_t> table_elements = uint64_t{1} << 20;
  uint32_t instances = 10'000;        // component and core instances the store makes
  uint32_t table_entries = 1u << 20;  // entries of one instance's handle table
  // Streams, futures, subtasks, waitable sets and error contexts alive in
  // the store's handle tables together.
  uint32_t waitables = 1u << 17;
  uint32_t call_depth = 64;  // calls into guests nested on one another (host -> guest -> host -> ...)
  // Host bytes one lift may allocate: strings, lists and the items of
  // compound values. A guest can make a small memory lift large (a list of
  // strings that all alias one long string).
  uint64_t lift_bytes = uint64_t{1} << 30;
  // Host memory the store keeps for its guests from one call to the next:
  // 64 bytes per handle table entry (resources, streams, futures, subtasks,
  // waitable sets, error contexts) plus each error context's message, the
  // store's instances together. What one call may make the host allocate
  // for the moment is bounded per call (lift_bytes, and WASI's bounds in
  // docs/robustness.md).
  uint64_t host_bytes = uint64_t{256} << 20;
};

// Where instances live. A store may hold one object of the embedder's, its
// user data, which host functions read with Caller::data<T>().
class Store {
 public:
  explicit Store(const Engine& engine);
  template <class T>
  Store(const Engine& engine, T data) : Store(engine) {
    data_ = std::make_shared<T>(std::move(data));
    data_type_ = &typeid(T);
  }
  // Move a store only while no host work is in flight: host functions'
  // callbacks, copies and waits hold the Store& their Caller gave them.
  Store(Store&& other) noexcept;
  Store& operator=(Store&& other) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // The user data; throws Error (Usage) naming both types when the store
  // holds no T.
  template <class T>
  T& data() {
    check_data_type(typeid(T));
    return *static_cast<T*>(data_.get());
  }

  // Drops an own handle the host holds (a resource a guest returned, say):
  // the resource's destructor runs. Error (InvalidValue) when `own` is not
  // an own handle the host holds.
  void drop(const Val& own);
  template <class Tag>
  void drop(abi::typed::Own<Tag> own) {
    drop(Val::own(own.handle));
  }
  // How many host objects of host resources the store holds (for leak checks).
  size_t host_objects() const;

  // Limits for what the store's guests do from now on (memory and table
  // limits: for the instances made from now on).
  void set_limits(const StoreLimits& limits);
  const StoreLimits& limits() const;

  // Engines that meter guest code (EngineConfig::metering) only; Error
  // (Usage) otherwise. Fuel is how many units (loop iterations and calls)
  // the store's guest code may still run, across calls; unlimited (nullopt)
  // by default. Running out is a trap saying "out of fuel".
  void set_fuel(std::optional<uint64_t> units);
  std::optional<uint64_t> fuel() const;
  // Guest code, and the event loop while it waits, trap with "interrupted"
  // once the engine's epoch has moved `ticks` past where it is now
  // (Engine::increment_epoch). No deadline by default.
  void set_epoch_deadline(uint64_t ticks);
  // Whether the deadline has passed: host functions that wait (WASI's poll)
  // look, and end their wait with a trap.
  bool interrupted() const;

  // The event loop of the store's guests and host work: runs ready guest
  // threads, host stream and future copies whose guest side is ready, and
  // completions of async host functions (which may arrive from other
  // threads: the loop waits for them) until `done` holds. A deadlock
  // (nothing can make progress, no host completion outstanding) is an
  // Error (Trap) saying what is blocked; a guest's trap ends the loop too.
  void run_until(FunctionRef<bool()> done);
  // Runs until nothing is ready now (blocked guests and pending host work
  // stay as they are).
  void run_until_idle();
  // One thread, several stores (a store per instance, dropped with it):
  // `other`'s loop runs within this one's. While this store's loop runs,
  // `other`'s guests and host work go on too, and what `other` waits for
  // (descriptors, timers, host completions) wakes this loop. A trap in
  // `other`'s guests goes to `on_trap`, not out of this loop; `other` is
  // then the embedder's to drop (never from inside `on_trap`) or go on
  // with. Until stop_driving(other) or either store's end. Usage errors: a
  // store driven already, or one that drives this one.
  void drive(Store& other, std::function<void(const Error& trap)> on_trap);
  void stop_driving(Store& other);

  // Waits of the event loop for host work that must not block it (a
  // socket's recv, a sleep): `ready(revents)` runs from the loop, on the
  // store's thread, once `fd` has one of `events` (poll(2)'s POLLIN,
  // POLLOUT; an error or a hang-up counts as ready); `due()` once the
  // monotonic clock reaches `deadline`; `idle()` once nothing else is
  // ready (before the loop would sleep; at the latest after a few turns of
  // a loop that stays busy), for work that gains from being batched, as a
  // connection's sends. Each fires once and may start other waits. The
  // loop sleeps on all of them in one epoll_wait(2), with no thread per
  // wait, and a pending wait is not a deadlock. Cancel a descriptor's waits
  // before closing it: a closed descriptor's wait never fires.
  using WaitId = uint64_t;
  WaitId when_ready(int fd, short events, std::function<void(short revents)> ready);
  WaitId when_time(std::chrono::steady_clock::time_point deadline, std::function<void()> due);
  WaitId when_idle(std::function<void()> idle);
  // Forgets a wait that has not fired: false when it fired (or never was).
  bool cancel_wait(WaitId id);
  // Host work that can only block (a read of a regular file, fsync): `work`
  // runs on a small process-wide pool of threads (at most 4, started as
  // needed), never on the loop; then `done` runs from the loop on the
  // store's thread, given what `work` threw (null when nothing). Until then
  // the loop waits for it rather than calling a stall a deadlock. `work`
  // must not touch the store; if the store is gone first, `done` is
  // destroyed with it, on its thread, without being called. These and the
  // waits above are for the store's thread, and their callbacks must not
  // destroy the store.
  void run_blocking(std::function<void()> work, std::function<void(std::exception_ptr failure)> done);

  class Impl;

 private:
  friend class Caller;
  friend class ChannelEnd;
  friend class PendingCall;
  friend class Func;
  friend class HostResourceBase;
  friend class Linker;
  friend class InstancePre;
  void check_data_type(const std::type_info& asked) const;

  std::shared_ptr<void> data_;
  const std::type_info* data_type_ = nullptr;
  std::unique_ptr<Impl> impl_;  // after the data: destroyed first
};

// What a host function sees of its call: the store (and its user data), and
// when a guest calls it through a lowered import, the guest's memory and
// realloc as that import's options give them. Valid during the call only.
class Caller {
 public:
  class Context;
  explicit Caller(Context& context) : context_(context) {}

  Store& store();
  template <class T>
  T& data() {
    return store().data<T>();
  }
  // Whether the caller is a guest (not the host calling the function itself).
  bool from_guest() const;
  // The calling guest's memory, empty when the call has none (called by the
  // host, or lowered without a `memory` option). Invalid after realloc or
  // anything else that can grow memory.
  std::span<uint8_t> memory();
  // Allocates in the caller's memory with its `realloc`; Error (Usage) when
  // the call has none, Trap when the guest traps.
  uint64_t realloc(uint64_t old_ptr, uint64_t old_size, uint32_t align, uint64_t new_size);

 private:
  Context& context_;
};

// What HostResource<T> does for every T.
class HostResourceBase {
 public:
  HostResourceBase(const HostResourceBase&) = default;
  HostResourceBase& operator=(const HostResourceBase&) = default;
  // For function types: abi::Type::own(resource.type()), abi::Type::borrow(...).
  const abi::ResourceTypeRef& type() const { return abi_type_; }

  class Impl;

 protected:
  explicit HostResourceBase(std::shared_ptr<const Impl> impl);
  Val make_object(Store& store, std::shared_ptr<void> object, const std::type_info& type) const;
  void* object(Store& store, const Val& handle, const std::type_info& type) const;

 private:
  friend class Linker;
  std::shared_ptr<const Impl> impl_;
  abi::ResourceTypeRef abi_type_;
};

// A resource type the host defines (Linker::define_resource), whose values
// are C++ objects of type T owned by the store: `make` hands out an own
// handle to a new object, `get` finds the object behind a handle the host
// holds (an argument of a host function, say), and the object is destroyed
// when its last own handle is dropped, by a guest or by the host, or with
// the store.
template <class T>
class HostResource : public HostResourceBase {
 public:
  explicit HostResource(HostResourceBase base) : HostResourceBase(std::move(base)) {}

  Val make(Store& store, std::unique_ptr<T> object) const {
    return make_object(store, std::shared_ptr<void>(std::move(object)), typeid(T));
  }
  // The same as a typed handle (for typed calls and wrapped functions).
  abi::typed::Own<T> make_own(Store& store, std::unique_ptr<T> object) const {
    return {make(store, std::move(object)).as_handle()};
  }
  // Error (InvalidValue) when the handle is not one of this resource's.
  T& get(Store& store, const Val& handle) const { return *static_cast<T*>(object(store, handle, typeid(T))); }
  T& get(Store& store, abi::typed::Borrow<T> handle) const { return get(store, Val::borrow(handle.handle)); }
  T& get(Store& store, abi::typed::Own<T> handle) const { return get(store, Val::own(handle.handle)); }
};

// The completion of one call of an async host function (Linker::
// define_async_func). Complete it once: during the call, later from the
// event loop, or from any other thread (the loop wakes for it). Copies
// refer to the same completion; when the last goes uncompleted, the
// guest's call traps.
class Completion {
 public:
  // The call's results (checked against the function's type when the loop
  // delivers them); Error (Usage) when completed before.
  void complete(std::vector<Val> results);
  // Ends the call with a trap in the guest saying `message`.
  void fail(std::string message);
  // `hook` runs on the store's thread when the calling guest asks to
  // cancel the call (subtask.cancel), once; at once when it asked already.
  // Set it during the call or from the store's thread. The host may then
  // cancel() (the guest sees the call cancelled before it returned; from
  // the hook, before its subtask.cancel returns), or complete it anyway.
  // The hook runs inside the guest's built-in: it may end the call and
  // let go of host work (a timer, a descriptor's wait), but not call into
  // a guest or run the event loop.
  void on_cancel(std::function<void()> hook);
  // On the store's thread, once the guest asked: ends the call as
  // cancelled. Error (Usage) before it asked, or once completed.
  void cancel();

  class Impl;
  explicit Completion(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

namespace wrap {
// What an async wrapped function's completion converts its result with:
// the result type's bridge and the handle tags the signature bound.
struct ResultBridge {
  std::optional<abi::typed::ValBridge> result;  // none: the function returns nothing
  std::shared_ptr<const abi::typed::HandleTypes> handles;
};
}  // namespace wrap

// The completion of one call of an async host function made with
// Linker::func_wrap_async, taking the result as its C++ type R (void: none).
// As Completion: complete once, from the call, the loop, or any thread.
template <class R>
class TypedCompletion {
 public:
  TypedCompletion(Completion completion, std::shared_ptr<const wrap::ResultBridge> bridge)
      : completion_(std::move(completion)), bridge_(std::move(bridge)) {}

  // (A void R takes no value: the declaration names a stand-in then.)
  void complete(const std::conditional_t<std::is_void_v<R>, std::monostate, R>& value)
    requires(!std::is_void_v<R>)
  {
    completion_.complete({bridge_->result->to_val(value, bridge_->handles.get())});
  }
  void complete()
    requires std::is_void_v<R>
  {
    completion_.complete({});
  }
  // Ends the call with a trap in the guest saying `message`.
  void fail(std::string message) { completion_.fail(std::move(message)); }
  // As Completion's: hear of the guest's cancellation request, and honour it.
  void on_cancel(std::function<void()> hook) { completion_.on_cancel(std::move(hook)); }
  void cancel() { completion_.cancel(); }

 private:
  Completion completion_;
  std::shared_ptr<const wrap::ResultBridge> bridge_;
};

// A host function with its call's context.
using HostFunction = std::function<std::vector<Val>(Caller& caller, std::span<const Val> args)>;
// A host function called with its call's core values (what func_wrap
// makes): the caller's context, the lowered call's ABI, its core arguments,
// and where its flat result goes (empty when it goes through memory).
using FlatHostFunction = std::function<void(Caller& caller, abi::AbiContext& cx, const abi::FunctionAbi& abi,
                                            std::span<const uint64_t> params, std::span<uint64_t> results)>;
// A host function that completes later: it receives its arguments and the
// call's completion. Borrowed handles among the arguments are valid during
// the call only.
using AsyncHostFunction = std::function<void(Caller& caller, std::span<const Val> args, Completion completion)>;

class PendingCall;

// An exported function of an instance. Copies refer to the same function.
class Func {
 public:
  const std::string& name() const { return name_; }
  const FuncType& type() const;
  // Calls the function: a trap poisons the callee's instance and throws
  // Error (Trap); bad arguments throw InvalidValue. An async function's task
  // runs, with every other task it waits for, until it returns its result.
  std::vector<Val> call(Store& store, std::span<const Val> args) const;
  // Starts the call and returns: an async function's task runs until it
  // first blocks and goes on as the store's event loop runs, so several
  // calls can be in flight in one store. Other functions run to the end.
  PendingCall call_async(Store& store, std::span<const Val> args) const;

  // Reads the result where the callee left it, before post-return (`read`
  // is called during the call, never kept): e.g.
  //   f.call_reading(store, {}, [&](const abi::typed::CallResult& r) {
  //     abi::typed::Reader reader(r.cx);
  //     auto ops = abi::typed::load_result<abi::typed::ListView<Op>>(reader, r); ... });
  using ResultReader = FunctionRef<void(const abi::typed::CallResult&)>;
  void call_reading(Store& store, std::span<const Val> args, const ResultReader& read) const;
  // The same with the core arguments written by `lower` in the callee's
  // context (what TypedFunc does): Usage when the function's parameters are
  // passed in memory rather than flat.
  using ArgLowerer = FunctionRef<void(abi::AbiContext& callee, std::vector<uint64_t>& flat)>;
  void call_lowering(Store& store, const ArgLowerer& lower, const ResultReader& read) const;

  class Impl;

 private:
  friend class Instance;
  Func(std::string name, std::shared_ptr<const Impl> impl) : name_(std::move(name)), impl_(std::move(impl)) {}

  std::string name_;
  std::shared_ptr<const Impl> impl_;
};

// A call started by Func::call_async.
class PendingCall {
 public:
  // Whether the callee returned (or was cancelled).
  bool done() const;
  // Whether it was cancelled (cancel(), then task.cancel): no results.
  bool cancelled() const;
  // Runs the store's event loop until the call is done; its results.
  std::vector<Val> wait(Store& store);
  // The results once done: Error (Usage) before, or when taken already.
  std::vector<Val> results();
  // `done` runs from the store's event loop once the call is done (on the
  // loop's next step when it is already), on the store's thread: where a
  // server that keeps many calls in flight learns that one returned.
  void on_done(Store& store, std::function<void()> done);
  // Asks the callee to cancel, as a caller's subtask.cancel does: a task
  // still waiting to start is cancelled at once; one blocked is told
  // (TASK_CANCELLED) now, one running when it next blocks. It may still
  // return, or call task.cancel: done() either way, and results() then says
  // the call was cancelled. Once; nothing once done or when the callee's
  // instance trapped. From the embedder's loop (an on_done or reactor
  // callback, or between runs), never inside a guest's call (Error, Usage).
  void cancel(Store& store);

  class Impl;

 private:
  friend class Func;
  explicit PendingCall(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

namespace detail {
// What `fit` says of a C++ signature against `type`, for a message: `side`
// is what `type` belongs to ("export", "import"), `cpp` what the signature
// belongs to ("C++ signature", "C++ function").
std::string describe_misfit(const abi::typed::SignatureFit& fit, const FuncType& type, std::string_view side,
                            std::string_view cpp);
}  // namespace detail

// An export called with C++ values: the signature was checked against the
// export's type once, when it was looked up (Instance::typed_func), so a
// call lowers the arguments and reads the result with no checks of types
// and no Vals. Arguments and results are the C++ types of abi::typed
// (cmhost/abi/typed.hpp): scalars, strings, lists, fixed-length lists,
// maps, records, tuples, variants, options, results, enums and flags;
// arguments may also be views (std::string_view, std::span<const T>).
template <class Signature>
class TypedFunc;

template <class R, class... Args>
class TypedFunc<R(Args...)> {
  static_assert((abi::typed::is_lowerable_arg_v<std::remove_cvref_t<Args>> && ...),
                "typed calls take the value types of abi::typed: call Func::call for others");

 public:
  R call(Store& store, const Args&... args) const {
    static_assert(!abi::typed::holds_view_v<R>,
                  "a typed call's result outlives the call (post-return frees the guest's copy): read views with "
                  "call_viewing instead");
    const auto refs = std::forward_as_tuple(args..., handles_);
    const auto lower = lowerer(refs);
    if constexpr (std::is_void_v<R>) {
      func_.call_lowering(store, lower, [](const abi::typed::CallResult&) {});
    } else {
      std::optional<R> out;  // R need not be default-constructible
      func_.call_lowering(store, lower, [&out](const abi::typed::CallResult& r) {
        if constexpr (abi::typed::is_flat_liftable_v<R>) {
          if (!r.spilled) {
            out.emplace(abi::typed::FlatLift<R>::lift(r.cx, r.core.data()));
            return;
          }
        }
        abi::typed::Reader reader(r.cx);
        out.emplace(abi::typed::load_result<R>(reader, r));
      });
      return std::move(*out);
    }
  }

  // Calls, and hands `read` the result as a `const R&` read in place: its
  // views (std::string_view, ListView) point into the callee's memory and
  // are valid until `read` returns, when post-return runs.
  template <class Read>
  void call_viewing(Store& store, const Args&... args, Read&& read) const {
    static_assert(!std::is_void_v<R>, "a function without a result has nothing to read");
    const auto refs = std::forward_as_tuple(args..., handles_);
    const auto lower = lowerer(refs);
    func_.call_lowering(store, lower, [&read](const abi::typed::CallResult& r) {
      abi::typed::Reader reader(r.cx);
      if constexpr (abi::typed::is_flat_liftable_v<R>) {
        if (!r.spilled) {
          read(static_cast<const R&>(abi::typed::FlatLift<R>::lift(r.cx, r.core.data())));
          return;
        }
      }
      read(static_cast<const R&>(abi::typed::load_result<R>(reader, r)));
    });
  }
  const Func& func() const { return func_; }

 private:
  friend class Instance;
  template <class Typed>
  friend class TypedExport;
  TypedFunc(Func func, std::shared_ptr<const abi::typed::HandleTypes> handles)
      : func_(std::move(func)), handles_(std::move(handles)) {}
  // The same checked signature, for another instance's export of the same type.
  TypedFunc with(Func func) const { return TypedFunc(std::move(func), handles_); }

  // Why the export's type and the C++ signature differ, or empty; fills
  // `handles` with what the signature's handle tags stand for.
  static std::string mismatch(const FuncType& type, bool results_spilled, abi::typed::HandleTypes& handles) {
    const auto fit = abi::typed::fit_signature<R, Args...>(type.params, type.result.get(), &handles);
    if (!fit.fits()) return detail::describe_misfit(fit, type, "export", "C++ signature");
    if constexpr (!std::is_void_v<R>) {
      if (!abi::typed::is_flat_liftable_v<R> && !results_spilled)
        return "the result " + type.result->to_wit() + " is passed as a core value, which the C++ type cannot hold";
    }
    return "";
  }

  // Lowers the arguments (`refs`: the arguments, then handles_) into the
  // callee's context, every one checked before any is written.
  template <class Refs>
  static auto lowerer(const Refs& refs) {
    return [&refs](abi::AbiContext& cx, std::vector<uint64_t>& flat) {
      cx.set_typed_handles(std::get<sizeof...(Args)>(refs).get());  // the results are read in this context too
      [&]<size_t... I>(std::index_sequence<I...>) {
        (abi::typed::check_arg(cx, std::get<I>(refs)), ...);  // all first: a refused value lowers nothing
        (abi::typed::lower_arg(cx, std::get<I>(refs), flat), ...);
      }(std::index_sequence_for<Args...>{});
    };
  }

  Func func_;
  std::shared_ptr<const abi::typed::HandleTypes> handles_;  // null: no handles
};

// What an async export's typed call converts with: a bridge per
// parameter and for the result, and the handle tags the signature bound.
struct TypedCallBridges {
  std::vector<abi::typed::ValBridge> params;
  std::optional<abi::typed::ValBridge> result;
  std::shared_ptr<const FuncType> type;  // the bindings point into it
  abi::typed::HandleTypes handles;
};

// An async call started by TypedAsyncFunc::call_async: PendingCall with the
// result as a C++ value.
template <class R>
class TypedPendingCall {
 public:
  TypedPendingCall(PendingCall call, std::shared_ptr<const TypedCallBridges> bridges)
      : call_(std::move(call)), bridges_(std::move(bridges)) {}
  bool done() const { return call_.done(); }
  // Runs the store's event loop until the call is done; its result.
  R wait(Store& store) { return convert(call_.wait(store)); }
  // The result once done (Error Usage before, or when taken already).
  R result() { return convert(call_.results()); }
  void on_done(Store& store, std::function<void()> done) { call_.on_done(store, std::move(done)); }
  // As PendingCall::cancel.
  void cancel(Store& store) { call_.cancel(store); }
  // Whether the callee cancelled rather than returned (once done).
  bool cancelled() const { return call_.cancelled(); }

 private:
  R convert(std::vector<Val> results) const {
    if constexpr (std::is_void_v<R>)
      return;
    else
      return bridges_->result->template from_val<R>(results.at(0), &bridges_->handles);
  }
  PendingCall call_;
  std::shared_ptr<const TypedCallBridges> bridges_;
};

// An async export called with C++ values (Instance::typed_async_func): the
// signature is checked once, when it is looked up. call_async starts the
// call and returns, as Func::call_async; call runs the event loop until
// the export's task returns.
template <class Signature>
class TypedAsyncFunc;

template <class R, class... Args>
class TypedAsyncFunc<R(Args...)> {
  static_assert((abi::typed::is_lowerable_arg_v<std::remove_cvref_t<Args>> && ...),
                "typed calls take the value types of abi::typed: call Func::call_async for others");
  static_assert(!abi::typed::holds_view_v<R>, "an async call's result outlives the call: it owns its values");

 public:
  TypedPendingCall<R> call_async(Store& store, const Args&... args) const {
    return TypedPendingCall<R>(func_.call_async(store, vals(args...)), bridges_);
  }
  R call(Store& store, const Args&... args) const { return call_async(store, args...).wait(store); }
  const Func& func() const { return func_; }

  // Why `type` does not fit R(Args...), or empty; fills `bridges`.
  static std::string mismatch(const std::shared_ptr<const FuncType>& type, TypedCallBridges& bridges) {
    const auto fit = abi::typed::fit_signature<R, std::remove_cvref_t<Args>...>(type->params, type->result.get(),
                                                                                &bridges.handles);
    if (!fit.fits()) return detail::describe_misfit(fit, *type, "export", "C++ signature");
    bridges.type = type;
    for (const abi::TypeRef& p : type->params) bridges.params.emplace_back(p);
    if constexpr (!std::is_void_v<R>) bridges.result.emplace(type->result);
    return "";
  }

 private:
  friend class Instance;
  template <class Typed>
  friend class TypedExport;
  TypedAsyncFunc(Func func, std::shared_ptr<const TypedCallBridges> bridges)
      : func_(std::move(func)), bridges_(std::move(bridges)) {}
  // The same checked signature, for another instance's export of the same type.
  TypedAsyncFunc with(Func func) const { return TypedAsyncFunc(std::move(func), bridges_); }

  std::vector<Val> vals(const Args&... args) const {
    std::vector<Val> out;
    out.reserve(sizeof...(Args));
    size_t i = 0;
    ((out.push_back(bridges_->params[i++].to_val(args, &bridges_->handles))), ...);
    return out;
  }

  Func func_;
  std::shared_ptr<const TypedCallBridges> bridges_;
};

// An instance of a component. Copies refer to the same instance.
class Instance {
 public:
  // A root export (`run`) or an interface function (`ns:pkg/iface@1.0.0#run`,
  // the version may be left out when only one version is exported). Throws
  // Error (Usage) naming the exports when there is no such function.
  Func func(std::string_view name) const;
  // Every exported function, with its full name.
  std::vector<Func> funcs() const;
  // The export `name` to be called with C++ values, e.g.
  //   auto add = instance.typed_func<uint32_t(uint32_t, uint32_t)>("add");
  //   uint32_t sum = add.call(store, 2, 40);
  // Error (Usage) naming both types when the signature does not match the
  // export's type.
  template <class Signature>
  TypedFunc<Signature> typed_func(std::string_view name) const {
    Func f = func(name);
    auto handles = std::make_shared<abi::typed::HandleTypes>();
    check_typed(f, typeid(Signature), *handles, &TypedFunc<Signature>::mismatch);
    if (handles->empty()) handles.reset();
    return TypedFunc<Signature>(std::move(f), std::move(handles));
  }
  // An async export to be called with C++ values (TypedAsyncFunc), e.g.
  //   auto run = instance.typed_async_func<abi::typed::Result<void, void>()>("wasi:cli/run@0.3.0#run");
  // Error (Usage) naming both types when the signature does not match, or
  // when the export is not async (typed_func calls those).
  template <class Signature>
  TypedAsyncFunc<Signature> typed_async_func(std::string_view name) const {
    Func f = func(name);
    auto bridges = std::make_shared<TypedCallBridges>();
    check_typed_async(f, typeid(Signature), [&](const std::shared_ptr<const FuncType>& type) {
      return TypedAsyncFunc<Signature>::mismatch(type, *bridges);
    });
    return TypedAsyncFunc<Signature>(std::move(f), std::move(bridges));
  }
  // The validated type of the instance's component.
  const ComponentType& type() const;

  class Impl;

 private:
  friend class Linker;
  friend class InstancePre;
  template <class Typed>
  friend class TypedExport;
  explicit Instance(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  // Whether the InstancePre behind `pre` made it.
  bool made_by(const void* pre) const;
  // Throws Error (Usage) naming both types when `f` cannot be called with
  // `signature`: the checks common to every signature, then `mismatch`'s.
  using Mismatch = std::string (*)(const FuncType& type, bool results_spilled, abi::typed::HandleTypes& handles);
  static void check_typed(const Func& f, const std::type_info& signature, abi::typed::HandleTypes& handles,
                          Mismatch mismatch);
  static void check_typed_async(const Func& f, const std::type_info& signature,
                                FunctionRef<std::string(const std::shared_ptr<const FuncType>&)> mismatch);

  std::shared_ptr<const Impl> impl_;
};

namespace wrap {

// The C++ types a wrapped host function (Linker::func_wrap) takes and
// returns: those of abi::typed (cmhost/abi/typed.hpp), and std::string_view
// for a parameter (valid during the call).
template <class T>
inline constexpr bool is_param_v =
    abi::typed::is_flat_liftable_v<T> && (!abi::typed::holds_view_v<T> || std::is_same_v<T, std::string_view>);
// What a parameter is lifted as: a std::string_view views a string lifted
// for the call (the caller's memory may move while the function runs, and
// its strings need not be UTF-8).
template <class T>
using lifted_t = std::conditional_t<std::is_same_v<T, std::string_view>, std::string, T>;
template <class T>
inline constexpr bool is_result_v = std::is_void_v<T> || abi::typed::is_lowerable_arg_v<T>;

// An async callable's last parameter: TypedCompletion<R> names the result.
template <class T>
struct CompletionResult {
  static constexpr bool value = false;
};
template <class R>
struct CompletionResult<TypedCompletion<R>> {
  static constexpr bool value = true;
  using type = R;
};

// Whether a callable's parameters start with `Caller&`.
template <class... A>
inline constexpr bool takes_caller_v = false;
template <class First, class... Rest>
inline constexpr bool takes_caller_v<First, Rest...> = std::is_same_v<First, Caller&>;

// The call signature of a callable (a lambda, a function pointer, ...).
template <class F>
struct Signature : Signature<decltype(&F::operator())> {};
template <class R, class... A>
struct Signature<R (*)(A...)> {
  using result = R;
  using params = std::tuple<A...>;
  using type = R(A...);
};
template <class R, class C, class... A>
struct Signature<R (C::*)(A...) const> : Signature<R (*)(A...)> {};
template <class R, class C, class... A>
struct Signature<R (C::*)(A...)> : Signature<R (*)(A...)> {};

}  // namespace wrap

namespace detail {
template <class Typed>
struct TypedLookup;
template <class Signature>
struct TypedLookup<TypedFunc<Signature>> {
  static TypedFunc<Signature> in(const Instance& instance, std::string_view name) {
    return instance.typed_func<Signature>(name);
  }
};
template <class Signature>
struct TypedLookup<TypedAsyncFunc<Signature>> {
  static TypedAsyncFunc<Signature> in(const Instance& instance, std::string_view name) {
    return instance.typed_async_func<Signature>(name);
  }
};
}  // namespace detail

// An export of an InstancePre's instances with its C++ signature checked
// once for them all (InstancePre::typed_func, typed_async_func): in()
// gives an instance's TypedFunc or TypedAsyncFunc, checked on the first
// instance it is used with and only looked up on the others. An instance
// the InstancePre did not make is checked as Instance::typed_func checks
// it. Copies share the check; threads may use one at once.
template <class Typed>
class TypedExport {
 public:
  // Error (Usage) as Instance::typed_func: no such export, or one whose
  // type the signature does not fit (said again on every use).
  Typed in(const Instance& instance) const {
    if (!instance.made_by(pre_.get())) return detail::TypedLookup<Typed>::in(instance, name_);
    State& state = *state_;
    std::call_once(state.checked, [&] {
      try {
        state.first.emplace(detail::TypedLookup<Typed>::in(instance, name_));
      } catch (const Error& e) {
        if (e.kind() != ErrorKind::Usage) throw;
        state.misfit = e.what();
      }
    });
    if (!state.first) throw Error(ErrorKind::Usage, state.misfit);
    return state.first->with(instance.func(name_));
  }
  const std::string& name() const { return name_; }

 private:
  friend class InstancePre;
  struct State {
    std::once_flag checked;
    std::optional<Typed> first;  // the first instance's, checked
    std::string misfit;          // or why it does not fit
  };
  TypedExport(std::shared_ptr<const void> pre, std::string_view name)
      : pre_(std::move(pre)), name_(name), state_(std::make_shared<State>()) {}
  std::shared_ptr<const void> pre_;  // kept: its address names it
  std::string name_;
  std::shared_ptr<State> state_;
};

// A component with its imports resolved against a Linker's definitions and
// checked, once (Linker::instantiate_pre), to make instances of it without
// linking again, as wasmtime's InstancePre. It keeps what it resolved:
// definitions the linker changes afterwards do not reach it. Copies share
// it; threads may instantiate from one InstancePre at once, each into a
// store of its own.
class InstancePre {
 public:
  // A new instance in `store`: Error (Link) when an instance it links to
  // (Linker::define_instance) lives in another store; a trap from the
  // component's start.
  Instance instantiate(Store& store) const;
  const Component& component() const;
  // An export of its instances to call with C++ values, the signature
  // checked once for them all (TypedExport), e.g.
  //   auto handle = pre.typed_func<void(Own<Request>)>("wasi:http/incoming-handler@0.2.0#handle");
  //   handle.in(pre.instantiate(store)).call(store, request);
  template <class Signature>
  TypedExport<TypedFunc<Signature>> typed_func(std::string_view name) const {
    return TypedExport<TypedFunc<Signature>>(impl_, name);
  }
  template <class Signature>
  TypedExport<TypedAsyncFunc<Signature>> typed_async_func(std::string_view name) const {
    return TypedExport<TypedAsyncFunc<Signature>>(impl_, name);
  }

  class Impl;

 private:
  friend class Linker;
  explicit InstancePre(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Supplies a component's imports: host functions by name, either a root
// import (`log`) or a function of an imported interface
// (`wasi:cli/stdout@0.2.0#get-stdout`), host resource types, and other
// instances. Types are checked at instantiation, by the check validation
// makes of a component's instantiation arguments: a mismatch names the
// import, the expected and the supplied type.
//
// A name is defined once, whatever its kind (function, wrapped callable,
// resource type, instance): defining it again throws Error (Usage) naming
// it, unless allow_shadowing(true) was called, when the later definition
// replaces the earlier one.
class Linker {
 public:
  Linker();
  Linker(const Linker& other);
  Linker& operator=(const Linker& other);
  Linker(Linker&& other) noexcept;
  Linker& operator=(Linker&& other) noexcept;
  ~Linker();

  void define_func(std::string name, FuncType type, HostFunction function);
  // The same for a function that needs nothing of its call but the arguments.
  void define_func(std::string name, FuncType type, std::function<std::vector<Val>(std::span<const Val>)> function);
  // A host function that may complete after it returns (see Completion):
  // a guest calling it through an async lower gets a subtask and goes on
  // running; a synchronous lower waits for the completion while other
  // guest threads run.
  void define_async_func(std::string name, FuncType type, AsyncHostFunction function);
  // A host function from a C++ callable: its parameters and result are C++
  // types of abi::typed (see wrap::is_param_v), optionally after a first
  // `Caller&` parameter. Its type is the import's: the C++ signature is
  // checked against it at instantiation, and a mismatch is a link error
  // naming both. A guest's call reaches it with no Val: its arguments are
  // lifted from the core values and its result lowered into them.
  //   linker.func_wrap("double", [](uint32_t x) { return 2 * x; });
  //   linker.func_wrap("ns:pkg/log#write", [](Caller& c, std::string_view s) { c.data<Log>().add(s); });
  template <class F>
  void func_wrap(std::string name, F callable) {
    using S = wrap::Signature<F>;
    add_wrapped(std::move(name), typeid(typename S::type),
                make_wrapped(std::move(callable), static_cast<typename S::params*>(nullptr)));
  }
  // An async host function from a C++ callable taking `Caller&`, its
  // arguments as C++ types, and a TypedCompletion<R> it completes with the
  // result (now, from the event loop, or from any thread), as
  // define_async_func does with Vals:
  //   linker.func_wrap_async("ns:pkg/clock#sleep", [](Caller& c, uint64_t ns, TypedCompletion<void> done) {
  //     c.store().when_time(deadline(ns), [done]() mutable { done.complete(); });
  //   });
  // Its type is the import's, checked at instantiation as func_wrap's.
  template <class F>
  void func_wrap_async(std::string name, F callable) {
    using S = wrap::Signature<F>;
    add_wrapped_async(std::move(name), typeid(typename S::type),
                      make_wrapped_async(std::move(callable), static_cast<typename S::params*>(nullptr)));
  }
  // A host resource type for the import `name` (`ns:pkg/iface@1.0.0#file`
  // or a root `file`) whose values are C++ objects of type T (see
  // HostResource).
  template <class T>
  HostResource<T> define_resource(std::string name) {
    return HostResource<T>(define_host_resource(std::move(name)));
  }
  // Supplies the import `name` with a resource type defined before, as an
  // interface that `use`s another's resource imports it under its own name
  // (`wasi:cli/stdin@0.2.12#input-stream` is `wasi:io/streams@0.2.12#input-stream`).
  void define_resource(std::string name, const HostResourceBase& same);
  // The host resource type defined under `name`; Error (Usage) when there is none.
  template <class T>
  HostResource<T> resource(std::string_view name) const {
    return HostResource<T>(find_host_resource(name));
  }
  // Supplies the instance import `name` with another instance's exports
  // (functions, resource and value types, nested instances), so components
  // link to each other as a parent component would link them. Both instances
  // must live in the same Store. At instantiation the instance's type, with
  // the run-time identities of its resources, goes through the one link
  // check like any other supply.
  void define_instance(std::string name, const Instance& instance);
  // The same with the instance `instance` exports as `export_name` (an
  // interface it exports, e.g. a handler another component imports):
  // Error (Usage) when it exports no instance of that name.
  void define_instance(std::string name, const Instance& instance, std::string_view export_name);
  // With stubs, imported functions the linker lacks are supplied by
  // functions that trap when called, so a component runs until it uses one.
  void allow_stub_imports(bool allow);
  // With shadowing, defining a name again replaces its definition (of any
  // kind) instead of throwing Error (Usage), as wasmtime's
  // Linker::allow_shadowing. Off by default.
  void allow_shadowing(bool allow);

  // Throws Error (Link) listing every missing import by name.
  Instance instantiate(Store& store, const Component& component) const;
  // The component's imports resolved against these definitions and
  // checked, once, for many instantiations (InstancePre). The same errors
  // as instantiate, but the store's.
  InstancePre instantiate_pre(const Component& component) const;

  class Impl;

 private:
  // Makes the host function of a wrapped callable for the import's type, or
  // says why the callable's signature does not fit it (and returns none).
  using WrappedMaker = std::function<FlatHostFunction(const FuncType& type, std::string& why)>;
  void add_wrapped(std::string name, const std::type_info& signature, WrappedMaker make);
  using AsyncWrappedMaker = std::function<AsyncHostFunction(const std::shared_ptr<const FuncType>& type, std::string& why)>;
  void add_wrapped_async(std::string name, const std::type_info& signature, AsyncWrappedMaker make);

  template <class F, class... A>
  static AsyncWrappedMaker make_wrapped_async(F callable, std::tuple<A...>*) {
    static_assert(wrap::takes_caller_v<A...>, "func_wrap_async callables take Caller& first");
    return make_wrapped_async_args(std::move(callable), static_cast<std::tuple<A...>*>(nullptr));
  }
  template <class F, class... A>
  static AsyncWrappedMaker make_wrapped_async_args(F callable, std::tuple<Caller&, A...>*) {
    using Last = std::remove_cvref_t<std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>>;
    static_assert(wrap::CompletionResult<Last>::value, "func_wrap_async callables take a TypedCompletion<R> last");
    using R = typename wrap::CompletionResult<Last>::type;
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return make_async_plain<R, std::remove_cvref_t<std::tuple_element_t<I, std::tuple<A...>>>...>(
          std::make_shared<F>(std::move(callable)));
    }(std::make_index_sequence<sizeof...(A) - 1>{});
  }
  template <class R, class... A, class F>
  static AsyncWrappedMaker make_async_plain(std::shared_ptr<F> shared) {
    static_assert((wrap::is_param_v<A> && ...),
                  "func_wrap_async parameters are the owning value types of abi::typed, or std::string_view");
    static_assert(wrap::is_result_v<R> && !abi::typed::holds_view_v<R>,
                  "func_wrap_async results are void or an owning value type of abi::typed");
    return [shared](const std::shared_ptr<const FuncType>& type, std::string& why) -> AsyncHostFunction {
      auto handles = std::make_shared<abi::typed::HandleTypes>();
      const auto fit = abi::typed::fit_signature<R, A...>(type->params, type->result.get(), handles.get());
      if (!fit.fits()) {
        why = detail::describe_misfit(fit, *type, "import", "C++ function");
        return nullptr;
      }
      auto bridge = std::make_shared<wrap::ResultBridge>();
      if constexpr (!std::is_void_v<R>) bridge->result.emplace(type->result);
      bridge->handles = handles->empty() ? nullptr : handles;
      auto params = std::make_shared<std::vector<abi::typed::ValBridge>>();
      for (const abi::TypeRef& p : type->params) params->emplace_back(p);
      // The bindings point into `type`, which the bridge keeps alive.
      return [shared, type, params, bridge = std::shared_ptr<const wrap::ResultBridge>(bridge)](
                 Caller& caller, std::span<const Val> args, Completion completion) {
        const abi::typed::HandleTypes* h = bridge->handles.get();
        auto lifted = [&]<size_t... I>(std::index_sequence<I...>) {
          return std::tuple<wrap::lifted_t<A>...>((*params)[I].template from_val<wrap::lifted_t<A>>(args[I], h)...);
        }(std::index_sequence_for<A...>{});
        std::apply([&](auto&... a) { (*shared)(caller, std::move(a)..., TypedCompletion<R>(std::move(completion), bridge)); },
                   lifted);
      };
    };
  }
  HostResourceBase define_host_resource(std::string name);
  HostResourceBase find_host_resource(std::string_view name) const;

  template <class F, class... A>
  static WrappedMaker make_wrapped(F callable, std::tuple<A...>*) {
    using R = typename wrap::Signature<F>::result;
    if constexpr (wrap::takes_caller_v<A...>) {
      return make_wrapped_with_caller<R>(std::move(callable), static_cast<std::tuple<A...>*>(nullptr));
    } else {
      return make_wrapped_plain<R, A...>(
          [callable = std::move(callable)](Caller&, A... args) mutable { return callable(std::forward<A>(args)...); });
    }
  }
  template <class R, class F, class... A>
  static WrappedMaker make_wrapped_with_caller(F callable, std::tuple<Caller&, A...>*) {
    return make_wrapped_plain<R, A...>(std::move(callable));
  }
  template <class R, class... A, class G>
  static WrappedMaker make_wrapped_plain(G call) {
    static_assert((wrap::is_param_v<std::remove_cvref_t<A>> && ...),
                  "func_wrap parameters are the owning value types of abi::typed, or std::string_view");
    static_assert(wrap::is_result_v<R>, "func_wrap results are void or a value type of abi::typed");
    static_assert(!abi::typed::holds_view_v<R>,
                  "func_wrap results own their values: a view may point into the memory lowering moves");
    // One callable for every instance made from this definition, as with define_func.
    auto shared = std::make_shared<G>(std::move(call));
    return [shared](const FuncType& type, std::string& why) -> FlatHostFunction {
      auto handles = std::make_shared<abi::typed::HandleTypes>();
      why = mismatch<R, std::remove_cvref_t<A>...>(type, *handles);
      if (!why.empty()) return nullptr;
      const bool has_handles = !handles->empty();
      return [shared, has_handles](Caller& caller, abi::AbiContext& cx, const abi::FunctionAbi& abi,
                                   std::span<const uint64_t> params, std::span<uint64_t> results) {
        // Handle tags stand for the resource types of the lowering site
        // (a nested component's own identities), bound for this call.
        abi::typed::HandleTypes site;
        if (has_handles) {
          bind_site<R, std::remove_cvref_t<A>...>(abi, site);
          cx.set_typed_handles(&site);
        } else {
          cx.set_typed_handles(nullptr);
        }
        auto args = abi::typed::lift_args<wrap::lifted_t<std::remove_cvref_t<A>>...>(cx, abi, params);
        if constexpr (std::is_void_v<R>) {
          std::apply([&](auto&... a) { (*shared)(caller, std::move(a)...); }, args);
        } else {
          const R result = std::apply([&](auto&... a) { return (*shared)(caller, std::move(a)...); }, args);
          cx.refresh();  // the host function may have called into the guest
          abi::typed::lower_result(cx, abi, params, result, results);
        }
      };
    };
  }
  // Binds the handle tags of A... and R to the types of the lowered call.
  template <class R, class... A>
  static void bind_site(const abi::FunctionAbi& abi, abi::typed::HandleTypes& handles) {
    const abi::Type* result = abi.results().empty() ? nullptr : abi.results()[0].get();
    (void)abi::typed::fit_signature<R, A...>(abi.params(), result, &handles);  // it fit the import's type
  }
  // Why a callable taking A... and returning R cannot implement `type`, or
  // empty; fills `handles` with what the signature's handle tags stand for.
  template <class R, class... A>
  static std::string mismatch(const FuncType& type, abi::typed::HandleTypes& handles) {
    if (type.async) return "the import is async";
    const auto fit = abi::typed::fit_signature<R, A...>(type.params, type.result.get(), &handles);
    return fit.fits() ? "" : detail::describe_misfit(fit, type, "import", "C++ function");
  }

  std::unique_ptr<Impl> impl_;
};

}  // namespace cmhost
