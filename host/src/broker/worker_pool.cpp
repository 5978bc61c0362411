#include <sandbox_host/host/broker/worker_pool.hpp>

#include <algorithm>

namespace sandbox_host::broker {

std::size_t WorkerLimits::running_per_requester() const {
  return std::min(std::max<std::size_t>(per_requester, 1), std::max<std::size_t>(threads / 4, 1));
}

WorkerPool::WorkerPool(WorkerLimits limits) : limits_(limits) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto &thread : threads_) thread.join();
}

void WorkerPool::offer_turn(const std::string &name, Requester &requester) {
  if (!requester.in_turn && !requester.waiting.empty() &&
      requester.running < limits_.running_per_requester()) {
    requester.in_turn = true;
    turns_.push_back(name);
  }
}

bool WorkerPool::wake_idle_thread() {
  if (idle_ <= wakeups_) return false;
  ++wakeups_;
  wake_.notify_one();
  return true;
}

void WorkerPool::start_work() {
  if (!wake_idle_thread() && threads_.size() < std::max<std::size_t>(limits_.threads, 1)) {
    threads_.emplace_back([this] { work(); });
  }
}

Admission WorkerPool::submit(const std::string &requester, std::function<void()> task) {
  std::lock_guard lock(mutex_);
  auto &entry = requesters_[requester];
  if (entry.running + entry.waiting.size() >= std::max<std::size_t>(limits_.per_requester, 1)) {
    if (entry.running == 0 && entry.waiting.empty()) requesters_.erase(requester);
    return Admission::requester_full;
  }
  if (waiting_ >= std::max<std::size_t>(limits_.queued, 1)) {
    if (entry.running == 0 && entry.waiting.empty()) requesters_.erase(requester);
    return Admission::pool_full;
  }
  entry.waiting.push_back(std::move(task));
  ++waiting_;
  offer_turn(requester, entry);
  if (entry.in_turn) start_work();
  return Admission::taken;
}

void WorkerPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (turns_.empty()) {
      if (stopping_ && waiting_ == 0) return;
      ++idle_;
      wake_.wait(lock, [&] { return wakeups_ > 0 || (stopping_ && waiting_ == 0); });
      --idle_;
      if (wakeups_ > 0) --wakeups_;
      continue;
    }
    const std::string name = std::move(turns_.front());
    turns_.pop_front();
    auto found = requesters_.find(name);
    Requester &requester = found->second;
    requester.in_turn = false;
    auto task = std::move(requester.waiting.front());
    requester.waiting.pop_front();
    --waiting_;
    ++requester.running;
    // Back in line behind the others, if it has more it may start.
    offer_turn(name, requester);
    if (!turns_.empty()) start_work();
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
    --found->second.running;
    offer_turn(name, found->second);
    if (found->second.running == 0 && found->second.waiting.empty()) requesters_.erase(found);
    if (stopping_ && waiting_ == 0) wake_.notify_all();
  }
}

}  // namespace sandbox_host::broker
