#include <sandbox_host/host/egress/session_pool.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace sandbox_host::egress {

struct SessionPool::State {
  std::size_t max_threads;
  std::chrono::milliseconds linger;
  std::mutex mutex;
  std::condition_variable work, ended;
  std::deque<std::function<void()>> queue;
  std::size_t threads = 0, idle = 0;
  bool stopping = false;
};

SessionPool::SessionPool(std::size_t max_threads, std::chrono::milliseconds linger)
    : state_(std::make_shared<State>()) {
  state_->max_threads = max_threads;
  state_->linger = linger;
}

SessionPool::~SessionPool() {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->work.notify_all();
  state_->ended.wait(lock, [&] { return state_->threads == 0; });
}

bool SessionPool::run(std::function<void()> session) {
  std::unique_lock lock(state_->mutex);
  const bool thread_free = state_->idle > state_->queue.size();
  if (!thread_free && state_->threads < state_->max_threads) {
    try {
      // The state is the thread's too: the last notify of an ending thread may come after
      // the destructor has seen the count reach zero.
      std::thread([state = state_, first = std::move(session)]() mutable {
        first();
        first = nullptr;  // what the session held goes before the thread waits for more
        serve(state);
      }).detach();
      ++state_->threads;
      return true;
    } catch (const std::system_error &) {
      if (state_->threads == 0) return false;  // nobody would ever take it from the queue
    }
  }
  state_->queue.push_back(std::move(session));
  lock.unlock();  // the woken thread's first step is to take the lock
  state_->work.notify_one();
  return true;
}

std::size_t SessionPool::threads() const {
  std::lock_guard lock(state_->mutex);
  return state_->threads;
}

std::size_t SessionPool::idle() const {
  std::lock_guard lock(state_->mutex);
  return state_->idle;
}

void SessionPool::serve(const std::shared_ptr<State> &state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    ++state->idle;
    const bool woken = state->work.wait_for(
        lock, state->linger, [&] { return state->stopping || !state->queue.empty(); });
    --state->idle;
    if (!woken || state->queue.empty()) break;  // lingered long enough, or stopping
    std::function<void()> session = std::move(state->queue.front());
    state->queue.pop_front();
    lock.unlock();
    session();
    session = nullptr;
    lock.lock();
  }
  --state->threads;
  state->ended.notify_all();
}

}  // namespace sandbox_host::egress
