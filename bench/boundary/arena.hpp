// The typed and floor lanes' allocation: a batch's objects come from a
// monotonic arena over a buffer kept between batches, as a frame arena in a
// UI host would, and is freed by releasing the arena, with no destructor
// walk. A batch that outgrows the buffer takes the rest from the heap, and
// the buffer grows to fit the next one.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>

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

}  // namespace cmhost::bench::boundary
