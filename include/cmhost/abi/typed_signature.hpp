// Whether a C++ signature fits a component function's type, or a C++ type a
// value type: the one check behind typed calls (Instance::typed_func),
// wrapped host functions (Linker::func_wrap) and the host's typed stream and
// future ends (cmhost/streams.hpp). Handle tags are not bound as a side
// effect: a check given a HandleTypes fills it with the bindings it found,
// and the caller applies them (AbiContext::set_typed_handles) where the
// handles move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "cmhost/abi/type.hpp"
#include "cmhost/abi/typed.hpp"
#include "cmhost/abi/val.hpp"

namespace cmhost::abi::typed {

// Whether values of the C++ type T stand for values of `type`: T's shape as
// a typed argument (a std::span<const E> is a list of E), or any type for a
// Val. With `found`, the handle tags T holds are bound there.
template <class T>
bool fits(const Type& type, HandleTypes* found = nullptr) {
  if constexpr (std::is_same_v<T, Val>)
    return true;
  else
    return arg_matches<T>(type, found);
}

// Where a C++ signature first differs from a function's type.
struct SignatureFit {
  enum class Part : uint8_t {
    None,              // it fits
    ParamCount,        // the function takes another number of parameters than `param`, the signature's
    Param,             // parameter `param` (from 0) has another shape
    ResultMissing,     // the C++ signature returns a value, the function nothing
    ResultUnexpected,  // the function returns a value, the C++ signature nothing
    Result,            // the result has another shape
  };
  Part part = Part::None;
  size_t param = 0;
  bool fits() const { return part == Part::None; }
};

// Compares R(A...) with a function's parameter types and result (null:
// none), parameters first, in order; with `found`, binds the handle tags it
// meets there up to where it stopped.
template <class R, class... A>
SignatureFit fit_signature(std::span<const TypeRef> params, const Type* result, HandleTypes* found) {
  using Part = SignatureFit::Part;
  if (params.size() != sizeof...(A)) return {Part::ParamCount, sizeof...(A)};
  size_t i = 0;  // on a mismatch: the parameter that differs
  const bool params_fit = ((fits<std::remove_cvref_t<A>>(*params[i], found) && (++i, true)) && ...);
  if (!params_fit) return {Part::Param, i};
  if constexpr (std::is_void_v<R>) {
    if (result) return {Part::ResultUnexpected, 0};
  } else {
    if (!result) return {Part::ResultMissing, 0};
    if (!fits<R>(*result, found)) return {Part::Result, 0};
  }
  return {};
}

}  // namespace cmhost::abi::typed
