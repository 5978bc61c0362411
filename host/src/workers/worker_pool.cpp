#include <sandbox_host/host/worker_pool.hpp>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

namespace sandbox_host {

std::size_t WorkerLimits::running_per_requester() const {
  const std::size_t share = running_per_requester_cap != 0 ? running_per_requester_cap
                                                           : std::max<std::size_t>(threads / 4, 1);
  return std::min(std::max<std::size_t>(per_requester, 1), share);
}

WorkerLimits WorkerLimits::one_queue(std::size_t threads, std::chrono::milliseconds linger) {
  constexpr std::size_t kUnbounded = std::numeric_limits<std::size_t>::max();
  return {threads, kUnbounded, kUnbounded, std::max<std::size_t>(threads, 1), linger};
}

struct WorkerPool::State {
  explicit State(const WorkerLimits &limits) : limits(limits) {}

  struct Requester {
    std::size_t running = 0;
    std::deque<std::function<void()>> waiting;
    bool in_turn = false;  // listed in turns
  };

  // Lists requester for a thread's turn if it has a task it may start now.
  void offer_turn(const std::string &name, Requester &requester) {
    if (!requester.in_turn && !requester.waiting.empty() &&
        requester.running < limits.running_per_requester()) {
      requester.in_turn = true;
      turns.push_back(name);
    }
  }

  // Wakes a thread that waits for work and was not woken already; false when there is none.
  bool wake_idle_thread() {
    if (idle <= wakeups) return false;
    ++wakeups;
    wake.notify_one();
    return true;
  }

  const WorkerLimits limits;
  std::mutex mutex;
  std::condition_variable wake, ended;
  std::map<std::string, Requester> requesters;
  std::deque<std::string> turns;  // requesters with a task they may start, oldest first
  std::size_t waiting = 0;        // tasks waiting, all requesters
  std::size_t threads = 0;        // started and not ended
  std::size_t idle = 0;           // threads waiting for work
  std::size_t wakeups = 0;        // of them, woken and not yet up: each wakes one thread only
  bool stopping = false;
};

WorkerPool::WorkerPool(WorkerLimits limits) : state_(std::make_shared<State>(limits)) {}

const WorkerLimits &WorkerPool::limits() const noexcept {
  return state_->limits;
}

WorkerPool::~WorkerPool() {
  std::unique_lock lock(state_->mutex);
  state_->stopping = true;
  state_->wake.notify_all();
  state_->ended.wait(lock, [&] { return state_->threads == 0; });
}

std::size_t WorkerPool::threads() const {
  std::lock_guard lock(state_->mutex);
  return state_->threads;
}

std::size_t WorkerPool::idle() const {
  std::lock_guard lock(state_->mutex);
  return state_->idle;
}

Admission WorkerPool::submit(const std::string &requester, std::function<void()> task) {
  State &s = *state_;
  std::lock_guard lock(s.mutex);
  auto &entry = s.requesters[requester];
  auto refuse = [&](Admission why) {
    if (entry.running == 0 && entry.waiting.empty()) s.requesters.erase(requester);
    return why;
  };
  if (entry.running + entry.waiting.size() >= std::max<std::size_t>(s.limits.per_requester, 1)) {
    return refuse(Admission::requester_full);
  }
  if (s.waiting >= std::max<std::size_t>(s.limits.queued, 1)) return refuse(Admission::pool_full);
  entry.waiting.push_back(std::move(task));
  ++s.waiting;
  s.offer_turn(requester, entry);
  if (!entry.in_turn || s.wake_idle_thread() ||
      s.threads >= std::max<std::size_t>(s.limits.threads, 1)) {
    return Admission::taken;
  }
  try {
    std::thread([state = state_] { work(state); }).detach();
    ++s.threads;
  } catch (const std::system_error &) {
    // A thread that exists takes the task once it is free; with none, nothing ever would.
    if (s.threads == 0) {
      entry.waiting.pop_back();
      --s.waiting;
      if (entry.waiting.empty() && entry.in_turn) {
        entry.in_turn = false;
        std::erase(s.turns, requester);
      }
      return refuse(Admission::no_thread);
    }
  }
  return Admission::taken;
}

void WorkerPool::work(const std::shared_ptr<State> &state) {
  State &s = *state;
  std::unique_lock lock(s.mutex);
  for (;;) {
    if (s.turns.empty()) {
      if (s.stopping && s.waiting == 0) break;
      ++s.idle;
      const auto ready = [&] { return s.wakeups > 0 || (s.stopping && s.waiting == 0); };
      bool woken = true;
      if (s.limits.linger) {
        woken = s.wake.wait_for(lock, *s.limits.linger, ready);
      } else {
        s.wake.wait(lock, ready);
      }
      --s.idle;
      if (s.wakeups > 0) {
        --s.wakeups;
      } else if (!woken) {
        break;  // lingered long enough
      }
      continue;
    }
    const std::string name = std::move(s.turns.front());
    s.turns.pop_front();
    auto found = s.requesters.find(name);
    State::Requester &requester = found->second;
    requester.in_turn = false;
    auto task = std::move(requester.waiting.front());
    requester.waiting.pop_front();
    --s.waiting;
    ++requester.running;
    // Back in line behind the others, if it has more it may start.
    s.offer_turn(name, requester);
    if (!s.turns.empty() && !s.wake_idle_thread() &&
        s.threads < std::max<std::size_t>(s.limits.threads, 1)) {
      try {
        std::thread([state] { work(state); }).detach();
        ++s.threads;
      } catch (const std::system_error &) {
        // This thread takes the next turn once its task is done.
      }
    }
    lock.unlock();
    task();
    task = nullptr;  // what the task held goes before the thread waits for more
    lock.lock();
    --found->second.running;
    s.offer_turn(name, found->second);
    if (found->second.running == 0 && found->second.waiting.empty()) s.requesters.erase(found);
    if (s.stopping && s.waiting == 0) s.wake.notify_all();
  }
  --s.threads;
  s.ended.notify_all();
}

}  // namespace sandbox_host
