// Cross-component copies: values moved from one component's memory and core
// values straight into another's, each side with its own canonical options,
// as when a lowered import calls another component's lifted export. The
// result is what lifting on one side and lowering on the other would give
// (the same checks, traps and realloc sequences, strings transcoded between
// the two encodings), compiled once per pair of types and never building a
// Val.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cmhost/abi/canon.hpp"

namespace cmhost::abi {

namespace detail {
struct CopyProgram;
}

class ValueCopy {
 public:
  // `from` and `to` are the two sides' views of one value type (equal but for
  // the identity of resource types). Throws Error (Usage) if their shapes
  // differ. The two sides' memories must be distinct.
  ValueCopy(TypeRef from, AddrWidth from_width, TypeRef to, AddrWidth to_width);
  ~ValueCopy();
  ValueCopy(ValueCopy&&) noexcept;
  ValueCopy& operator=(ValueCopy&&) noexcept;

  uint32_t flat_count() const;

  // flat_count() core values of the source into as many of the destination.
  void copy_flat(AbiContext& from, const uint64_t* in, AbiContext& to, uint64_t* out) const;
  // The value stored at `from_ptr` into the destination at `to_ptr`; both are
  // checked for alignment and bounds.
  void copy(AbiContext& from, uint64_t from_ptr, AbiContext& to, uint64_t to_ptr) const;
  // The value at `from_ptr` into memory the destination's realloc allocates
  // for it (as spilled arguments are passed); returns that address.
  uint64_t copy_to_new(AbiContext& from, uint64_t from_ptr, AbiContext& to) const;

 private:
  std::unique_ptr<detail::CopyProgram> program_;
};

// Argument and result passing between a synchronous lowered import (the
// caller) and the synchronous lifted export it calls (the callee).
class CallCopy {
 public:
  CallCopy(const FunctionAbi& caller, const FunctionAbi& callee);
  ~CallCopy();

  // The caller's core arguments to the callee's: flat, or spilled into
  // memory the callee's realloc allocates.
  void copy_args(AbiContext& caller, std::span<const uint64_t> caller_args, AbiContext& callee,
                 std::vector<uint64_t>& callee_args) const;
  // The callee's core results to the caller's: the flat result, or through
  // the caller's out pointer (the core parameter after its arguments).
  void copy_results(AbiContext& callee, std::span<const uint64_t> callee_results, AbiContext& caller,
                    std::span<const uint64_t> caller_args, std::vector<uint64_t>& caller_results) const;

 private:
  std::unique_ptr<ValueCopy> params_;   // tuple of the parameters; null without any
  std::unique_ptr<ValueCopy> results_;  // tuple of the results; null without any
  bool params_spilled_;
  bool results_spilled_;
  uint32_t caller_param_slots_;  // core parameters before the caller's out pointer
};

}  // namespace cmhost::abi
