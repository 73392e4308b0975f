// The bounded pool of threads for blocking host work (worker_pool.hpp).
#include "worker_pool.hpp"

namespace cmhost::host {

WorkerPool& WorkerPool::shared() {
  // Never destroyed: joining at exit would wait for work that may block for
  // ever (a read of a FIFO), or run it while other statics are gone.
  static WorkerPool& pool = *new WorkerPool(kMaxThreads);
  return pool;
}

WorkerPool::WorkerPool(size_t max_threads) : max_threads_(max_threads == 0 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::run(std::function<void()> work) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    // A thread more only when the idle ones cannot take all that waits and
    // the bound allows; started before the work is queued, so a thread that
    // cannot start (std::system_error) leaves nothing queued behind.
    if (queue_.size() + 1 > idle_ && threads_.size() < max_threads_) threads_.emplace_back([this] { serve(); });
    queue_.push_back(std::move(work));
  }
  cv_.notify_one();
}

size_t WorkerPool::threads() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

void WorkerPool::serve() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      work();
    } catch (...) {
      // Store::run_blocking hands a work's exception to its continuation;
      // nothing else runs here, and a thread must not end the process.
    }
    lock.lock();
  }
}

}  // namespace cmhost::host
