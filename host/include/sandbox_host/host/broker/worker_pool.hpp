// Threads for requests, shared fairly among requesters. A requester (a sandbox: its pid
// namespace or its broker socket) may have only so many requests running and waiting, and
// free threads take the requesters in turn, so one that floods the broker waits behind its
// own requests, never in front of another's.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::broker {

struct WorkerLimits {
  std::size_t threads = 64;  // [broker] max_concurrent: requests running at once, in all
  std::size_t per_requester =
      64;                    // [broker] max_per_requester: one requester's, running and waiting
  std::size_t queued = 256;  // [broker] max_queued: requests waiting for a thread, in all
  // One requester's running at once: a quarter of the threads (at least one), so that a
  // requester whose calls hang leaves the other three quarters to everyone else.
  std::size_t running_per_requester() const;
};

// Why submit did not take a task.
enum class Admission { taken, requester_full, pool_full };

class WorkerPool {
 public:
  explicit WorkerPool(WorkerLimits limits);
  // Runs what was queued, then joins every thread.
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Queues task for requester, or says which bound refused it (the task is then dropped).
  Admission submit(const std::string &requester, std::function<void()> task);

  const WorkerLimits &limits() const noexcept { return limits_; }

 private:
  struct Requester {
    std::size_t running = 0;
    std::deque<std::function<void()>> waiting;
    bool in_turn = false;  // listed in turns_
  };

  void work();
  // Wakes a thread that waits for work and was not woken already; false when there is none.
  bool wake_idle_thread();
  // A thread for a task that may start now: an idle one, or a new one below the cap.
  void start_work();
  // Lists requester for a thread's turn if it has a task it may start now.
  void offer_turn(const std::string &name, Requester &requester);

  const WorkerLimits limits_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Requester> requesters_;
  std::deque<std::string> turns_;  // requesters with a task they may start, oldest first
  std::size_t waiting_ = 0;        // tasks waiting, all requesters
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;     // threads waiting for work
  std::size_t wakeups_ = 0;  // of them, woken and not yet up: each wakes one thread only
  bool stopping_ = false;
};

}  // namespace sandbox_host::broker
