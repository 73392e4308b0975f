// The typed and floor lanes' allocation: a batch's objects come from a
// monotonic arena over a buffer kept between batches, as a frame arena in a
// UI host would. A batch that outgrows the buffer takes the rest from the
// heap, and the buffer grows to fit the next one.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <optional>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "cmhost/abi/typed.hpp"

namespace cmhost::bench::boundary {

class BatchArena {
 public:
  // Runs f(memory_resource*); what f allocates is released when f returns.
  template <class F>
  void run(F&& f) {
    CountingUpstream upstream;
    {
      std::pmr::monotonic_buffer_resource arena(buffer_.get(), size_, &upstream);
      f(static_cast<std::pmr::memory_resource*>(&arena));
    }
    if (upstream.bytes) {
      size_ += 2 * upstream.bytes;
      buffer_ = std::make_unique_for_overwrite<std::byte[]>(size_);
    }
  }

 private:
  // The heap, counting what the buffer lacked.
  struct CountingUpstream final : std::pmr::memory_resource {
    size_t bytes = 0;
    void* do_allocate(size_t n, size_t align) override {
      bytes += n;
      return std::pmr::new_delete_resource()->allocate(n, align);
    }
    void do_deallocate(void* p, size_t n, size_t align) override {
      std::pmr::new_delete_resource()->deallocate(p, n, align);
    }
    bool do_is_equal(const memory_resource& other) const noexcept override { return this == &other; }
  };
  std::unique_ptr<std::byte[]> buffer_;
  size_t size_ = 0;
};

// A deep copy of a typed-lane value into `mem`: the floor lane's
// allocations without any canonical ABI.
template <class T>
T clone(const T& v, std::pmr::memory_resource* mem) {
  if constexpr (std::is_same_v<T, std::pmr::string>) {
    return T(v, mem);
  } else if constexpr (requires { typename T::allocator_type; }) {  // std::pmr::vector
    T out(mem);
    out.reserve(v.size());
    for (const auto& e : v) out.push_back(clone(e, mem));
    return out;
  } else if constexpr (requires { abi::typed::Record<T>::fields; }) {
    T out{};
    std::apply([&](const auto&... f) { ((std::destroy_at(&(out.*f.member)),
                                         std::construct_at(&(out.*f.member), clone(v.*f.member, mem))), ...); },
               abi::typed::Record<T>::fields);
    return out;
  } else if constexpr (requires { std::variant_size<T>::value; }) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      std::optional<T> out;
      ((v.index() == I ? (out.emplace(std::in_place_index<I>, clone(std::get<I>(v), mem)), true) : false) || ...);
      return std::move(*out);
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (requires { v.has_value(); }) {  // std::optional
    return v ? T(clone(*v, mem)) : T();
  } else {
    return v;
  }
}

// A batch of the typed lane's objects copied into `mem`, element by element
// in place, as the typed lift builds them.
template <class T>
std::pmr::vector<T> clone_batch(const std::pmr::vector<T>& batch, std::pmr::memory_resource* mem) {
  std::pmr::vector<T> out(mem);
  out.reserve(batch.size());
  for (const T& op : batch)
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((op.index() == I ? (out.emplace_back(std::in_place_index<I>, clone(std::get<I>(op), mem)), true) : false) || ...);
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  return out;
}

}  // namespace cmhost::bench::boundary
