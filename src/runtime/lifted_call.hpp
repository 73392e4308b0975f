// The caller's half of a call into a lifted function (the reference's
// on_start and on_resolve), supplied by the caller: from host Vals, or
// copied straight from another component.
#pragma once

#include <span>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::runtime {

class LiftedCallSteps {
 public:
  virtual ~LiftedCallSteps() = default;
  // on_start: writes the callee's core arguments (callee: the lifted side's
  // context). Runs when the callee's task starts, which for an async callee
  // may be after backpressure held it back.
  virtual void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) = 0;
  // on_resolve with a result: consumes the callee's core results (or, for an
  // async lift, the arguments of its task.return); runs before post-return.
  virtual void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) = 0;
  // on_resolve without one: the callee's task was cancelled.
  virtual void cancelled() {}
};

}  // namespace cmhost::runtime
