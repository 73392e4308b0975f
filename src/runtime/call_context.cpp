#include "call_context.hpp"

namespace cmhost::runtime {

std::optional<CoreGuestMemory> GuestContext::make_memory(Store& store, ComponentInstance& inst,
                                                         const std::optional<engine::Extern>& memory,
                                                         const std::optional<engine::Extern>& realloc) {
  if (!memory) return std::nullopt;
  return std::optional<CoreGuestMemory>(std::in_place, store.core(), *memory, realloc, &inst.may_leave_);
}

void CoreCall::post_return(Store& store, ComponentInstance& inst, engine::Extern post_return,
                           std::span<const uint64_t> results) {
  // Post-return may not call out of the instance (the spec clears may_leave).
  inst.may_leave_ = false;
  store.core().call(post_return, results, {});
  inst.may_leave_ = true;
}

}  // namespace cmhost::runtime
