// Frame containers: std::basic_string and std::vector whose memory comes
// from the thread's current frame arena, a std::pmr::monotonic_buffer_resource
// made current by a FrameScope, and is freed only with that arena, as a
// game or UI host frees a frame's data at once.
//
// Their allocator has no state, so a FrameString is as small as a
// std::string (32 bytes with libstdc++, 40 for std::pmr::string) and a
// FrameVector as a std::vector (24, against 32), and a default-constructed
// one needs no memory resource looked up. Typed lifts build them like
// their std counterparts (abi/typed.hpp):
//
//   std::pmr::monotonic_buffer_resource arena(buffer, sizeof buffer);
//   auto& ops = typed::load_result_into<typed::FrameVector<Op>>(arena, result);
//
// Every allocation (a load, push_back, reserve, a copy, a string outgrowing
// its inline buffer) takes the arena current at that moment; allocating
// with no FrameScope open throws NoFrameArena. So grow, copy or assign a
// frame container only under a scope whose arena outlives the container:
// memory from a shorter-lived arena would dangle. Moves and swaps carry
// memory across arenas, and memory a container leaves behind when it
// grows is reused only after its arena is released. Do not keep a scope
// open across a fiber switch: other work on the thread would allocate
// into it.
#pragma once

#include <cassert>
#include <cstddef>
#include <memory_resource>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace cmhost::abi::typed {

// Thrown when a frame container allocates with no FrameScope open.
class NoFrameArena : public std::bad_alloc {
 public:
  const char* what() const noexcept override {
    return "frame container allocated outside a typed::FrameScope";
  }
};

namespace detail {
inline constinit thread_local std::pmr::monotonic_buffer_resource* current_frame_arena = nullptr;
}

// Makes `arena` the thread's frame arena while the scope lives; the
// previous one (if any) is current again after it.
class FrameScope {
 public:
  explicit FrameScope(std::pmr::monotonic_buffer_resource& arena) noexcept
      : arena_(&arena), previous_(detail::current_frame_arena) {
    detail::current_frame_arena = &arena;
  }
  ~FrameScope() {
    assert(detail::current_frame_arena == arena_ && "frame scopes closed out of order");
    detail::current_frame_arena = previous_;
  }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  std::pmr::monotonic_buffer_resource* arena_;
  std::pmr::monotonic_buffer_resource* previous_;
};

// The thread's current frame arena, or null.
inline std::pmr::monotonic_buffer_resource* current_frame_arena() noexcept { return detail::current_frame_arena; }

// Allocates from the current frame arena; frees nothing (the arena is
// monotonic and frees all at once), so every instance is interchangeable.
template <class T>
struct FrameAllocator {
  using value_type = T;
  using is_always_equal = std::true_type;
  FrameAllocator() noexcept = default;
  template <class U>
  FrameAllocator(const FrameAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    std::pmr::monotonic_buffer_resource* arena = detail::current_frame_arena;
    if (!arena) throw NoFrameArena();
    return static_cast<T*>(arena->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T*, std::size_t) noexcept {}
};
template <class T, class U>
constexpr bool operator==(const FrameAllocator<T>&, const FrameAllocator<U>&) noexcept {
  return true;
}

using FrameString = std::basic_string<char, std::char_traits<char>, FrameAllocator<char>>;
template <class T>
using FrameVector = std::vector<T, FrameAllocator<T>>;

}  // namespace cmhost::abi::typed
