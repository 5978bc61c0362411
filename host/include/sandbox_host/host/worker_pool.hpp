// The host's one thread pool: the broker's requests and the egress proxy's sessions.
// Threads are started on demand up to a cap and kept for the next task; a requester (a
// sandbox: its pid namespace or its broker socket) may have only so many tasks running and
// waiting, and free threads take the requesters in turn, so one that floods the pool waits
// behind its own tasks, never in front of another's. A thread started for each task would
// cost more than a short one (the clone, and on exit the release of its stack, which
// flushes the TLB of every CPU the process ran on).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>

namespace sandbox_host {

struct WorkerLimits {
  std::size_t threads = 64;  // [broker] max_concurrent: tasks running at once, in all
  std::size_t per_requester =
      64;                    // [broker] max_per_requester: one requester's, running and waiting
  std::size_t queued = 256;  // [broker] max_queued: tasks waiting for a thread, in all
  // One requester's running at once; 0: a quarter of the threads (at least one), so that a
  // requester whose tasks hang leaves the other three quarters to everyone else.
  std::size_t running_per_requester_cap = 0;
  // How long a thread with nothing to do is kept; nullopt: as long as the pool.
  std::optional<std::chrono::milliseconds> linger;

  std::size_t running_per_requester() const;

  // For a caller that bounds its own tasks (the egress proxy counts its sessions): one
  // queue, every thread for it, no bound on what waits, and idle threads ending after
  // linger so that a burst does not hold its threads for the pool's lifetime.
  static WorkerLimits one_queue(std::size_t threads, std::chrono::milliseconds linger);
};

// Why submit did not take a task.
enum class Admission { taken, requester_full, pool_full, no_thread };

class WorkerPool {
 public:
  explicit WorkerPool(WorkerLimits limits);
  // Runs what was queued, then waits until every thread has ended.
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Queues task for requester, or says which bound refused it (the task is then dropped):
  // no_thread when no thread exists and none could be started.
  Admission submit(const std::string &requester, std::function<void()> task);

  const WorkerLimits &limits() const noexcept;
  std::size_t threads() const;  // started and not ended, idle or busy
  std::size_t idle() const;     // waiting for a task

 private:
  struct State;
  // A thread's life: tasks in turn, then waiting for more until linger passes or the pool
  // stops.
  static void work(const std::shared_ptr<State> &state);

  // Shared with the threads, which may outlive a wait: an ending thread's last notify may
  // come after the destructor saw the count reach zero.
  std::shared_ptr<State> state_;
};

}  // namespace sandbox_host
