// Typed values to and from Vals of one component type, for the places
// where the runtime hands over Vals but the embedder works in C++ types:
// async host functions (Linker::func_wrap_async) and async calls of exports
// with typed arguments. The value goes through a scratch memory of the
// host's, stored by one side's compiled program and loaded by the other's,
// so the conversion is the lift and lower cmhost already checks against the
// reference, with no second implementation per shape. Handles pass through
// as the host's handles: no hooks map them in the scratch memory.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cmhost/abi/canon.hpp"
#include "cmhost/abi/host_memory.hpp"
#include "cmhost/abi/typed/core.hpp"
#include "cmhost/abi/typed/handle.hpp"

namespace cmhost::abi::typed {

class ValBridge {
 public:
  // `type` is the value's component type; T's shape must fit it (the
  // caller checked, fit_signature or fits<T>).
  explicit ValBridge(TypeRef type) : abi_(std::move(type), AddrWidth::I32) {}

  // `handles` binds the handle tags T holds (null when it holds none).
  template <class T>
  Val to_val(const T& value, const HandleTypes* handles) const {
    Scratch scratch(abi_);
    scratch.cx.set_typed_handles(handles);
    Lower<T, AddrWidth::I32>::store(scratch.cx, scratch.ptr, value);
    return abi_.load(scratch.cx, scratch.ptr);
  }
  template <class T>
  T from_val(const Val& value, const HandleTypes* handles) const {
    Scratch scratch(abi_);
    abi_.store(scratch.cx, value, scratch.ptr);
    scratch.cx.set_typed_handles(handles);
    const Reader reader(scratch.cx);
    return Lift<T, AddrWidth::I32>::load(reader, scratch.ptr);
  }

 private:
  // A memory that grows as strings and lists need, with the value's slot.
  struct Scratch {
    explicit Scratch(const ValueAbi& abi)
        : memory(std::max<size_t>(256, abi.layout().size + abi.layout().align + 1)), cx(&memory, CanonOptions{}) {
      memory.set_grow_on_demand(true);
      memory.set_log_allocations(false);
      ptr = cx.realloc(0, 0, abi.layout().align, std::max<uint64_t>(abi.layout().size, 1));
    }
    HostMemory memory;
    AbiContext cx;
    uint64_t ptr = 0;
  };

  ValueAbi abi_;
};

}  // namespace cmhost::abi::typed
