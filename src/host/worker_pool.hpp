// A small, bounded pool of threads for host work that can only block (a
// read of a regular file, fsync, a name lookup): a store's event loop hands
// such work here and goes on; the work's continuation is posted back to the
// loop when it is done. Process-wide and started on first use.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cmhost::host {

class WorkerPool {
 public:
  // The process's pool: at most kMaxThreads threads, started as work comes.
  static WorkerPool& shared();
  static constexpr size_t kMaxThreads = 4;

  explicit WorkerPool(size_t max_threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `work` on one of the pool's threads, in the order given when
  // threads are busy.
  void run(std::function<void()> work);
  // Threads started so far (at most the pool's bound).
  size_t threads() const;

 private:
  void serve();

  const size_t max_threads_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace cmhost::host
