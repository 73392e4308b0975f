// The two value-passing steps of a call into a lifted function, supplied by
// the caller: from host Vals, or copied straight from another component.
#pragma once

#include <span>
#include <vector>

#include "cmhost/abi.hpp"

namespace cmhost::runtime {

class LiftedCallSteps {
 public:
  virtual ~LiftedCallSteps() = default;
  // Writes the callee's core arguments (callee: the lifted side's context).
  virtual void lower_args(abi::AbiContext& callee, std::vector<uint64_t>& flat) = 0;
  // Consumes the callee's core results; runs before post-return.
  virtual void lift_results(abi::AbiContext& callee, std::span<const uint64_t> flat) = 0;
};

}  // namespace cmhost::runtime
