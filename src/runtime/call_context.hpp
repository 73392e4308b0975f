// A guest's side of one call, as the canonical ABI sees it, and the core
// call of a lifted function. Every path that lifts from or lowers into a
// guest (host calls, lowered imports, fused calls, async tasks, stream
// copies, built-ins) builds its context here, and every synchronous core
// call with a post-return runs through CoreCall.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "call_handles.hpp"
#include "cmhost/abi.hpp"
#include "cmhost/engine/backend.hpp"
#include "runtime/runtime.hpp"
#include "guest_memory.hpp"

namespace cmhost::runtime {

class GuestContext {
 public:
  // The handles the call moves are this context's own, borrows lent into
  // `inst` scoped by `call_id`; a call whose type has no handles
  // (`moves_handles` false) needs no table of them.
  GuestContext(Store& store, ComponentInstance& inst, const std::optional<engine::Extern>& memory,
               const std::optional<engine::Extern>& realloc, const abi::CanonOptions& options, uint64_t call_id,
               bool moves_handles = true)
      : memory_(make_memory(store, inst, memory, realloc)),
        handles_(moves_handles ? std::optional<CallHandles>(std::in_place, store, inst, call_id) : std::nullopt),
        cx_(memory_ ? &*memory_ : nullptr, options, handles_ ? &*handles_ : nullptr) {
    cx_.set_lift_limit(store.limits().lift_bytes);
  }
  // The handles are moved by `hooks` (a subtask's lenders), or not at all.
  GuestContext(Store& store, ComponentInstance& inst, const std::optional<engine::Extern>& memory,
               const std::optional<engine::Extern>& realloc, const abi::CanonOptions& options,
               abi::HandleHooks* hooks)
      : memory_(make_memory(store, inst, memory, realloc)), cx_(memory_ ? &*memory_ : nullptr, options, hooks) {
    cx_.set_lift_limit(store.limits().lift_bytes);
  }
  GuestContext(const GuestContext&) = delete;
  GuestContext& operator=(const GuestContext&) = delete;

  abi::AbiContext& cx() { return cx_; }
  // The context's own handles (the first constructor, moving handles).
  CallHandles& handles() { return *handles_; }
  bool has_handles() const { return handles_.has_value(); }

 private:
  // realloc clears the instance's may_leave while it runs.
  static std::optional<CoreGuestMemory> make_memory(Store& store, ComponentInstance& inst,
                                                    const std::optional<engine::Extern>& memory,
                                                    const std::optional<engine::Extern>& realloc) {
    if (!memory) return std::nullopt;
    return std::optional<CoreGuestMemory>(std::in_place, store.core(), *memory, realloc, &inst.state().may_leave);
  }

  std::optional<CoreGuestMemory> memory_;
  std::optional<CallHandles> handles_;
  abi::AbiContext cx_;
};

// A lifted function's synchronous core call: the core function with `args`,
// `on_results` with its core results (the spec's task.return, and what the
// caller checks before it), then post-return with may_leave cleared.
class CoreCall {
 public:
  template <class OnResults>
  static void run(Store& store, ComponentInstance& inst, const Func& func, std::span<const uint64_t> args,
                  std::vector<uint64_t>& results, OnResults&& on_results) {
    results.resize(func.lifted().core_result_count);
    func.lifted().prepared->call(args, results);
    on_results(std::span<const uint64_t>(results));
    if (func.lifted().post_return) post_return(store, inst, *func.lifted().post_return, results);
  }

 private:
  static void post_return(Store& store, ComponentInstance& inst, engine::Extern post_return,
                          std::span<const uint64_t> results);
};

}  // namespace cmhost::runtime
