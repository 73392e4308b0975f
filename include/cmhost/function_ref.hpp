// A non-owning reference to a callable, for parameters that are called
// during the call that receives them and never kept: constructing one is two
// stores and calling it one indirect call (std::function would also manage
// and destroy a copy). The callable must outlive the FunctionRef.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace cmhost {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): binds lambdas at call sites
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object), std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace cmhost
