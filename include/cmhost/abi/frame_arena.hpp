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
#include <cstdint>
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
// The open scope's arena and, for a windowed scope, the block of it that
// frame containers bump through inline, instead of making a virtual call
// into the arena per allocation.
struct FrameWindow {
  std::pmr::monotonic_buffer_resource* arena = nullptr;
  char* next = nullptr;
  char* end = nullptr;       // 16-aligned, so an aligned `next` never passes it
  std::size_t refill = 64;  // the next block's size, doubling up to kMaxFrameBlock
  bool windowed = false;
};
inline constexpr std::size_t kMaxFrameBlock = 8192;
inline constexpr std::size_t kFrameAlign = alignof(std::max_align_t);
inline constinit thread_local FrameWindow frame_window{};

// A request the window cannot serve: memory straight from the arena (no
// window, or a large or over-aligned request), or a new window.
inline void* frame_allocate_slow(std::size_t bytes, std::size_t align) {
  FrameWindow& w = frame_window;
  if (!w.arena) throw NoFrameArena();
  if (!w.windowed || bytes > kMaxFrameBlock / 2 || align > kFrameAlign) return w.arena->allocate(bytes, align);
  std::size_t block = w.refill;
  while (block < bytes) block *= 2;
  char* start;
  try {
    start = static_cast<char*>(w.arena->allocate(block, kFrameAlign));
  } catch (const std::bad_alloc&) {
    // A bounded arena near its end: exact requests from here on, so that
    // what fitted without a window still fits.
    w.windowed = false;
    return w.arena->allocate(bytes, align);
  }
  w.refill = block < kMaxFrameBlock ? block * 2 : kMaxFrameBlock;
  w.next = start + bytes;
  w.end = start + block;
  return start;
}
}  // namespace detail

// Makes `arena` the thread's frame arena while the scope lives; the
// previous one (if any) is current again after it.
//
// A windowed scope (FrameScope(arena, FrameScope::windowed)) is faster:
// it takes blocks of up to 8 KiB from the arena and hands them out inline.
// The arena must then not be released while the scope is open (the block
// would dangle), and what is left of the last block when it closes stays
// unused until the arena is released. Once a block no longer fits in a
// bounded arena (one whose upstream refuses), the scope asks for exact
// sizes again. cmhost's own loads into an arena
// (load_result_into, StreamReader::read_into) open one for their duration.
class FrameScope {
 public:
  struct Windowed {};
  static constexpr Windowed windowed{};

  explicit FrameScope(std::pmr::monotonic_buffer_resource& arena) noexcept : FrameScope(arena, false) {}
  FrameScope(std::pmr::monotonic_buffer_resource& arena, Windowed) noexcept : FrameScope(arena, true) {}
  ~FrameScope() {
    assert(detail::frame_window.arena == arena_ && "frame scopes closed out of order");
    detail::frame_window = previous_;
  }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  FrameScope(std::pmr::monotonic_buffer_resource& arena, bool windowed) noexcept
      : arena_(&arena), previous_(detail::frame_window) {
    detail::frame_window = detail::FrameWindow{&arena, nullptr, nullptr, 64, windowed};
  }
  std::pmr::monotonic_buffer_resource* arena_;
  detail::FrameWindow previous_;
};

// The thread's current frame arena, or null.
inline std::pmr::monotonic_buffer_resource* current_frame_arena() noexcept { return detail::frame_window.arena; }

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
    const std::size_t bytes = n * sizeof(T);  // n is at most max_size(): no overflow
    if constexpr (alignof(T) <= detail::kFrameAlign) {
      detail::FrameWindow& w = detail::frame_window;
      constexpr auto mask = static_cast<std::uintptr_t>(alignof(T) - 1);
      char* at = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(w.next) + mask) & ~mask);
      // bytes - 1 wraps for 0, which goes the slow way (no null from an empty window).
      if (bytes - 1 < static_cast<std::size_t>(w.end - at)) {
        w.next = at + bytes;
        return reinterpret_cast<T*>(at);
      }
    }
    return static_cast<T*>(detail::frame_allocate_slow(bytes, alignof(T)));
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
