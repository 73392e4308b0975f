#include "fiber.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/detail/fcontext.hpp>

#include "cmhost/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define CMHOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CMHOST_ASAN 1
#endif
#endif

#ifdef CMHOST_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old, size_t* size_old);
}
#endif

namespace cmhost::runtime {

namespace ctx = boost::context::detail;

namespace {

// Interpreter nesting costs about 2 KiB of native stack a level (5 KiB
// under AddressSanitizer) and the engine allows 128 levels; pages are only
// committed when touched.
#ifdef CMHOST_ASAN
constexpr size_t kStackSize = size_t{4} << 20;
#else
constexpr size_t kStackSize = size_t{1} << 20;
#endif

void start_switch(void** fake_stack_save, const void* bottom, size_t size) {
#ifdef CMHOST_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#else
  (void)fake_stack_save, (void)bottom, (void)size;
#endif
}

void finish_switch(void* fake_stack_save, const void** bottom_old, size_t* size_old) {
#ifdef CMHOST_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, size_old);
#else
  (void)fake_stack_save, (void)bottom_old, (void)size_old;
#endif
}

size_t page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

StackPool::~StackPool() {
  for (const Stack& s : free_) munmap(s.base, s.size);
}

StackPool::Stack StackPool::take() {
  if (!free_.empty()) {
    Stack s = free_.back();
    free_.pop_back();
    return s;
  }
  const size_t size = kStackSize + page_size();
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) throw Error(ErrorKind::Trap, "out of memory for a fiber stack");
  // The lowest page catches an overflow instead of corrupting memory below.
  mprotect(base, page_size(), PROT_NONE);
  return {base, size};
}

void StackPool::give_back(Stack stack) {
  // A few spare stacks are enough; more are returned to the system.
  constexpr size_t kKept = 16;
  if (free_.size() >= kKept) {
    munmap(stack.base, stack.size);
    return;
  }
  free_.push_back(stack);
}

Fiber::Fiber(StackPool& pool, Body body, void* argument)
    : pool_(pool), stack_(pool.take()), body_(body), argument_(argument) {
  void* top = static_cast<char*>(stack_.base) + stack_.size;
  context_ = ctx::make_fcontext(top, stack_.size - page_size(), [](ctx::transfer_t t) { entry(t.fctx, t.data); });
}

Fiber::~Fiber() { pool_.give_back(stack_); }

const void* Fiber::stack_low() const { return static_cast<const char*>(stack_.base) + page_size(); }
size_t Fiber::stack_size() const { return stack_.size - page_size(); }

void Fiber::entry(void* transfer_context, void* fiber) {
  auto* self = static_cast<Fiber*>(fiber);
  finish_switch(nullptr, &self->resumer_stack_bottom_, &self->resumer_stack_size_);
  self->resumer_ = transfer_context;
  self->body_(self->argument_);
  self->finish();
}

void Fiber::finish() {
  finished_ = true;
  // Null: this stack's fake frames are gone for good.
  start_switch(nullptr, resumer_stack_bottom_, resumer_stack_size_);
  ctx::jump_fcontext(resumer_, nullptr);
  __builtin_unreachable();
}

void Fiber::resume() {
  started_ = true;
  void* fake_stack = nullptr;
  start_switch(&fake_stack, static_cast<char*>(stack_.base) + page_size(), stack_.size - page_size());
  const ctx::transfer_t back = ctx::jump_fcontext(context_, this);
  finish_switch(fake_stack, nullptr, nullptr);
  context_ = back.fctx;
}

void Fiber::suspend() {
  void* fake_stack = nullptr;
  start_switch(&fake_stack, resumer_stack_bottom_, resumer_stack_size_);
  const ctx::transfer_t next = ctx::jump_fcontext(resumer_, nullptr);
  // The next resumer may be another stack than the last one.
  finish_switch(fake_stack, &resumer_stack_bottom_, &resumer_stack_size_);
  resumer_ = next.fctx;
}

}  // namespace cmhost::runtime
