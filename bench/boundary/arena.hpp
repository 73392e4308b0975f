// The typed and floor lanes' allocation: a batch's objects come from a
// monotonic arena over a buffer kept between batches, as a frame arena in a
// UI host would, and is freed by releasing the arena, with no destructor
// walk. A batch that outgrows the buffer takes the rest from the heap, and
// the buffer grows to fit the next one.
#pragma once

#include <array>
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
  // Runs f(monotonic_buffer_resource&); what f allocates is released when
  // f returns.
  template <class F>
  void run(F&& f) {
    CountingUpstream upstream;
    {
      std::pmr::monotonic_buffer_resource arena(buffer_.get(), size_, &upstream);
      f(arena);
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

// Copies a typed-lane value into `out` with its containers in `mem`, built
// in place as the typed lift builds them: the floor lane's allocations
// without any canonical ABI.
template <class T>
void copy_into(const T& v, T& out, std::pmr::memory_resource* mem) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    out = v;
  } else if constexpr (std::is_same_v<T, std::pmr::string>) {
    std::destroy_at(&out);
    std::construct_at(&out, v.data(), v.size(), mem);
  } else if constexpr (requires { typename T::allocator_type; }) {  // std::pmr::vector
    std::destroy_at(&out);
    std::construct_at(&out, mem);
    if constexpr (std::is_trivially_copyable_v<typename T::value_type>) {
      out.assign(v.begin(), v.end());
    } else {
      out.reserve(v.size());
      for (const auto& e : v) copy_into(e, out.emplace_back(), mem);
    }
  } else if constexpr (requires { abi::typed::Record<T>::fields; }) {
    std::apply([&](const auto&... f) { (copy_into(v.*f.member, out.*f.member, mem), ...); },
               abi::typed::Record<T>::fields);
  } else if constexpr (requires { std::variant_size<T>::value; }) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      ((v.index() == I ? (copy_into(*std::get_if<I>(&v), out.template emplace<I>(), mem), true) : false) || ...);
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  } else {  // std::optional
    if (!v) {
      out.reset();
    } else {
      if (!out) out.emplace();
      copy_into(*v, *out, mem);
    }
  }
}

// A batch of the typed lane's objects copied into `mem`, each operation's
// case built in its slot as the typed lift does.
template <class T>
std::pmr::vector<T> copy_batch(const std::pmr::vector<T>& batch, std::pmr::memory_resource* mem) {
  std::pmr::vector<T> out(mem);
  out.reserve(batch.size());
  static constexpr auto cases = []<size_t... I>(std::index_sequence<I...>) {
    return std::array<void (*)(const T&, std::pmr::vector<T>&, std::pmr::memory_resource*), sizeof...(I)>{
        [](const T& op, std::pmr::vector<T>& out, std::pmr::memory_resource* mem) {
          copy_into(*std::get_if<I>(&op), std::get<I>(out.emplace_back(std::in_place_index<I>)), mem);
        }...};
  }(std::make_index_sequence<std::variant_size_v<T>>{});
  for (const T& op : batch) cases[op.index()](op, out, mem);
  return out;
}

}  // namespace cmhost::bench::boundary
