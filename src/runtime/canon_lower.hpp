// `canon lower` (CanonicalABI.md): host functions, synchronous calls into
// another component's synchronous lifted export (fused copies, memory to
// memory), calls within one memory, async lowers and async-typed callees.
#pragma once

#include <memory>
#include <optional>

#include "cmhost/abi.hpp"
#include "cmhost/engine/backend.hpp"
#include "runtime/runtime.hpp"

namespace cmhost::runtime {

class Subtask;

// The caller's side of a lowered function.
struct LowerSite {
  Store* store = nullptr;
  ComponentInstance* inst = nullptr;
  std::shared_ptr<const abi::FunctionAbi> abi;  // with the lower's options (async ABI when `async`)
  std::optional<engine::Extern> memory;
  std::optional<engine::Extern> realloc;
  bool async = false;
};

class Lowering {
 public:
  // The core function of the lowered `target`, picking how values cross.
  static engine::HostFunc make(LowerSite site, FuncRef target);
  // Traps unless `caller` may call out (the spec's may_leave).
  static void check_may_leave(const ComponentInstance& caller);

 private:
  static bool can_fuse(const LowerSite& site, const Func& target);
  static engine::HostFunc fused(const LowerSite& site, FuncRef target);
  static void call_host(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                        std::span<uint64_t> results);
  static uint32_t hand_to_async_caller(ComponentInstance& caller, const std::shared_ptr<Subtask>& subtask);
  static void call_async_host(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                              std::span<uint64_t> results);
  static void call_sync(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                        std::span<uint64_t> results);
  static void call_async(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                         std::span<uint64_t> results);
};

}  // namespace cmhost::runtime
