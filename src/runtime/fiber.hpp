// Fibers: native stacks that a thread of the Component Model runs on, so a
// task can block in the middle of core wasm (a synchronous lower of an async
// function, waitable-set.wait, thread.yield...) while other tasks run.
//
// A fiber is an asymmetric coroutine: resume() runs it until it calls
// suspend() or its body returns, then control is back in the resumer. Built
// on Boost.Context's fcontext; under AddressSanitizer every switch is
// announced so ASan keeps track of which stack is live.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace cmhost::runtime {

// Stacks are mapped once and reused: an async call should not cost an mmap.
class StackPool {
 public:
  struct Stack {
    void* base = nullptr;  // lowest address (the guard page)
    size_t size = 0;       // mapping size, guard page included
  };
  StackPool() = default;
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  Stack take();
  void give_back(Stack stack);

 private:
  std::vector<Stack> free_;
};

class Fiber {
 public:
  using Body = void (*)(void* argument);

  // The body must not throw: it runs at the bottom of its own stack.
  Fiber(StackPool& pool, Body body, void* argument);
  // A fiber is destroyed only before its first resume or after its body
  // returned (never while suspended in the middle of it).
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the fiber until it suspends or its body returns.
  void resume();
  // On the fiber: back to whoever resumed it, until the next resume().
  void suspend();

  bool started() const { return started_; }
  // The usable part of the fiber's stack (its guard page excluded).
  const void* stack_low() const;
  size_t stack_size() const;
  bool finished() const { return finished_; }

 private:
  static void entry(void* transfer_context, void* fiber);
  [[noreturn]] void finish();

  StackPool& pool_;
  StackPool::Stack stack_;
  Body body_;
  void* argument_;
  void* context_ = nullptr;  // the fiber's saved context while it is not running
  void* resumer_ = nullptr;  // the resumer's saved context while the fiber runs
  bool started_ = false;
  bool finished_ = false;
  // AddressSanitizer's view of the resumer's stack, announced when switching back.
  const void* resumer_stack_bottom_ = nullptr;
  size_t resumer_stack_size_ = 0;
};

}  // namespace cmhost::runtime
