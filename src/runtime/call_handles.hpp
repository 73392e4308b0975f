// Moves handles across one call boundary: between an instance's handle
// table and the host's, with the spec's checks (resources: types, lends,
// borrow scopes; stream and future ends: only idle readable ends outside
// waitable sets move, their shared state travels; error-contexts are
// shared).
#pragma once

#include <vector>

#include "cmhost/abi.hpp"
#include "runtime/runtime.hpp"
#include "handles.hpp"

namespace cmhost::runtime {

class CallHandles final : public abi::HandleHooks {
 public:
  // `inst` is the instance whose table the guest side of the call uses;
  // `call_id` scopes borrows lent into it.
  CallHandles(Store& store, ComponentInstance& inst, uint64_t call_id)
      : store_(store), inst_(inst), call_id_(call_id) {}
  ~CallHandles() override { release(); }
  CallHandles(const CallHandles&) = delete;
  CallHandles& operator=(const CallHandles&) = delete;

  uint32_t lift_handle(const abi::Type& type, uint32_t index) override;
  uint32_t lower_handle(const abi::Type& type, uint32_t host_index) override;

  // After a call into `inst`: traps unless it dropped every borrow lent to it.
  void check_borrows_dropped() {
    if (!inst_.state().borrows_by_call.empty()) check_borrows_of_call();  // most instances hold no borrows
  }
  // Ends the lends of this call (the destructor does it too). Most calls
  // lend nothing: that case stays inline.
  void release() {
    if (!lent_.empty() || !host_borrows_.empty()) release_lends();
  }
  // Forgets them without touching any table (the tables are going away).
  void forget() {
    lent_.clear();
    host_borrows_.clear();
  }

  // Core functions for resource.new, resource.drop and resource.rep.
  static engine::Extern resource_builtin(Store& store, ComponentInstance& inst, binary::CanonKind kind,
                                         ResourceTypeRef type);

 private:
  ResourceTypeRef runtime_type(const abi::Type& type) const;
  void release_lends();
  void check_borrows_of_call();

  Store& store_;
  ComponentInstance& inst_;
  uint64_t call_id_;
  std::vector<uint32_t> lent_;          // inst handles lent for this call
  std::vector<uint32_t> host_borrows_;  // host entries that live for this call
};

}  // namespace cmhost::runtime
