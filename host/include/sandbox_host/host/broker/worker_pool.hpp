// Threads for requests: one per request in flight, up to a cap, kept once started, so a
// slow operation holds up no other and a burst does not pay a thread start each.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sandbox_host::broker {

class WorkerPool {
 public:
  explicit WorkerPool(std::size_t max_threads);
  // Runs what was queued, then joins every thread.
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Runs task on an idle thread, a new one below the cap, or the first to come free.
  void submit(std::function<void()> task);

 private:
  void work();

  const std::size_t max_threads_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stopping_ = false;
};

}  // namespace sandbox_host::broker
