#include <sandbox_host/host/broker/worker_pool.hpp>

namespace sandbox_host::broker {

WorkerPool::WorkerPool(std::size_t max_threads)
    : max_threads_(max_threads == 0 ? 1 : max_threads) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto &thread : threads_) thread.join();
}

void WorkerPool::submit(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  tasks_.push_back(std::move(task));
  if (idle_ >= tasks_.size()) {
    wake_.notify_one();
  } else if (threads_.size() < max_threads_) {
    threads_.emplace_back([this] { work(); });
  }
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (tasks_.empty()) {
      if (stopping_) return;
      ++idle_;
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      --idle_;
      continue;
    }
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
  }
}

}  // namespace sandbox_host::broker
