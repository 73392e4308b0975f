// `canon lower` of a function that is not a synchronous call into another
// component's synchronous lifted export (those are fused copies, made by the
// instantiator): host functions, calls within one memory, async lowers and
// async-typed callees (CanonicalABI.md "canon lower").
#pragma once

#include <memory>
#include <optional>

#include "cmhost/abi.hpp"
#include "cmhost/engine.hpp"
#include "cmhost/runtime.hpp"

namespace cmhost::runtime {

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
  static engine::HostFunc make(LowerSite site, FuncRef target);
  // Traps unless `caller` may call out (the spec's may_leave).
  static void check_may_leave(const ComponentInstance& caller);

 private:
  static void call_host(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                        std::span<uint64_t> results);
  static void call_sync(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                        std::span<uint64_t> results);
  static void call_async(const LowerSite& site, const Func& target, std::span<const uint64_t> params,
                         std::span<uint64_t> results);
};

}  // namespace cmhost::runtime
