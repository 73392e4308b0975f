#include "call_context.hpp"

namespace cmhost::runtime {

void CoreCall::post_return(Store& store, ComponentInstance& inst, engine::Extern post_return,
                           std::span<const uint64_t> results) {
  // Post-return may not call out of the instance (the spec clears may_leave).
  inst.state().may_leave = false;
  store.core().call(post_return, results, {});
  inst.state().may_leave = true;
}

}  // namespace cmhost::runtime
