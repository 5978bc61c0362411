// The host's thread pool (worker_pool.hpp): tasks side by side up to the cap, queued beyond
// it, each requester held to its share and its bound, and the destructor that runs what was
// queued before it joins; and as the egress proxy uses it (WorkerLimits::one_queue), a
// thread kept and used again, a task past the cap waiting for a free one, an idle thread
// ending after its linger.
#include <sandbox_host/host/worker_pool.hpp>

#include <fixtures.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace sandbox_host {
namespace {

using namespace std::chrono_literals;
using test::eventually;

// The broker's three bounds ([broker] max_concurrent, max_per_requester, max_queued).
WorkerLimits bounded(std::size_t threads, std::size_t per_requester, std::size_t queued) {
  WorkerLimits limits;
  limits.threads = threads;
  limits.per_requester = per_requester;
  limits.queued = queued;
  return limits;
}

// A pool of `threads` whose per-requester and queue bounds do not come into it.
WorkerLimits threads_only(std::size_t threads) {
  return bounded(threads, 1000000, 1000000);
}

// A requester of its own for each task, so that no requester's share comes into it.
std::string someone() {
  static std::atomic<int> next = 0;
  return "requester " + std::to_string(next++);
}

// Tasks that count themselves in and wait (bounded) until `needed` of them are in at once.
class Meeting {
 public:
  explicit Meeting(int needed) : needed_(needed) {}
  // True when needed tasks were there together within timeout.
  bool arrive(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    return changed_.wait_for(lock, timeout, [&] { return arrived_ >= needed_; });
  }
  void finished() {
    std::lock_guard lock(mutex_);
    ++finished_;
    changed_.notify_all();
  }
  bool all_finished_within(int count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return finished_ >= count; });
  }

 private:
  const int needed_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0, finished_ = 0;
};

TEST(WorkerPool, RunsAsManyTasksAtOnceAsItsCap) {
  for (int cap : {1, 2, 4, 8}) {
    Meeting meeting(cap);
    std::atomic<int> met = 0;
    WorkerPool pool(threads_only(static_cast<std::size_t>(cap)));
    for (int i = 0; i < cap; ++i) {
      pool.submit(someone(), [&] {
        if (meeting.arrive(10s)) ++met;
        meeting.finished();
      });
    }
    ASSERT_TRUE(meeting.all_finished_within(cap, 20s)) << "cap " << cap;
    EXPECT_EQ(met.load(), cap) << "cap " << cap << ": the tasks did not all run at once";
  }
}

TEST(WorkerPool, QueuesTasksBeyondTheCapAndRunsThemAll) {
  constexpr int kCap = 3, kTasks = 40;
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> running = 0, most = 0, done = 0;
  Meeting meeting(0);
  {
    WorkerPool pool(threads_only(kCap));
    for (int i = 0; i < kTasks; ++i) {
      pool.submit(someone(), [&] {
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        {
          std::lock_guard lock(mutex);
          threads.insert(std::this_thread::get_id());
        }
        std::this_thread::sleep_for(5ms);
        --running;
        ++done;
        meeting.finished();
      });
    }
    EXPECT_TRUE(meeting.all_finished_within(kTasks, 30s));
  }
  EXPECT_EQ(done.load(), kTasks);
  EXPECT_LE(most.load(), kCap);
  EXPECT_GE(most.load(), 1);
  EXPECT_LE(threads.size(), static_cast<std::size_t>(kCap));
}

TEST(WorkerPool, ATaskBeyondTheCapStartsOnlyWhenAThreadComesFree) {
  constexpr int kCap = 2;
  std::mutex mutex;
  std::condition_variable changed;
  int running = 0, started = 0, finished = 0;
  bool open = false;
  WorkerPool pool(threads_only(kCap));
  for (int i = 0; i < kCap + 1; ++i) {
    pool.submit(someone(), [&] {
      std::unique_lock lock(mutex);
      ++running;
      ++started;
      changed.notify_all();
      changed.wait_for(lock, 10s, [&] { return open; });
      --running;
      ++finished;
      changed.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return started == kCap; }));
  // However long the gate stays shut, the third task does not start.
  EXPECT_FALSE(changed.wait_for(lock, 300ms, [&] { return started > kCap; }));
  EXPECT_EQ(running, kCap);
  open = true;
  changed.notify_all();
  EXPECT_TRUE(changed.wait_for(lock, 10s, [&] { return finished == kCap + 1; }));
}

TEST(WorkerPool, TheDestructorRunsQueuedTasksAndJoins) {
  std::atomic<int> done = 0;
  std::atomic<bool> after_join_ran = false;
  {
    WorkerPool pool(threads_only(1));
    pool.submit(someone(), [&] {
      std::this_thread::sleep_for(200ms);
      ++done;
    });
    for (int i = 0; i < 10; ++i) {
      pool.submit(someone(), [&] {
        std::this_thread::sleep_for(1ms);
        ++done;
      });
    }
    pool.submit(someone(), [&] { after_join_ran = true; });
  }
  EXPECT_EQ(done.load(), 11);
  EXPECT_TRUE(after_join_ran.load());
}

TEST(WorkerPool, ACapOfZeroStillRunsTasks) {
  Meeting meeting(0);
  WorkerPool pool(threads_only(0));
  for (int i = 0; i < 3; ++i) pool.submit(someone(), [&] { meeting.finished(); });
  EXPECT_TRUE(meeting.all_finished_within(3, 10s));
}

TEST(WorkerPool, AnIdlePoolIsDestroyedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  { WorkerPool pool(threads_only(4)); }
  {
    Meeting meeting(0);
    WorkerPool pool(threads_only(4));
    pool.submit(someone(), [&] { meeting.finished(); });
    ASSERT_TRUE(meeting.all_finished_within(1, 10s));
    // Its thread now waits for work; the destructor must wake it.
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(WorkerPool, AFloodingRequesterWaitsBehindItsOwnRequestsNotInFrontOfOthers) {
  // 8 threads: the flooder runs 2 (a quarter) at once, whatever it queues.
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int flooding = 0, most_flooding = 0;
  std::atomic<bool> other_ran = false;
  WorkerPool pool(bounded(8, 64, 256));
  EXPECT_EQ(pool.limits().running_per_requester(), 2u);
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(pool.submit("flooder",
                          [&] {
                            std::unique_lock lock(mutex);
                            most_flooding = std::max(most_flooding, ++flooding);
                            changed.notify_all();
                            changed.wait_for(lock, 20s, [&] { return open; });
                            --flooding;
                          }),
              Admission::taken);
  }
  ASSERT_EQ(pool.submit("other",
                        [&] {
                          other_ran = true;
                          changed.notify_all();
                        }),
            Admission::taken);
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(changed.wait_for(lock, 10s, [&] { return other_ran.load(); }))
        << "the other requester's task waited behind the flood";
    // The other task may run before the flooder's second thread has started.
    EXPECT_TRUE(changed.wait_for(lock, 10s, [&] { return flooding == 2; }));
    EXPECT_EQ(most_flooding, 2);
    open = true;
  }
  changed.notify_all();
}

TEST(WorkerPool, ARequesterPastItsBoundAndAFullQueueAreRefused) {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  auto blocked = [&] {
    std::unique_lock lock(mutex);
    changed.wait_for(lock, 20s, [&] { return open; });
  };
  {
    WorkerPool pool(bounded(4, 3, 100));
    for (int i = 0; i < 3; ++i) EXPECT_EQ(pool.submit("a", blocked), Admission::taken);
    EXPECT_EQ(pool.submit("a", blocked), Admission::requester_full);
    EXPECT_EQ(pool.submit("b", [] {}), Admission::taken);
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    changed.notify_all();
  }
  open = false;
  {
    // One thread, held; two may wait; the third to wait is refused, whoever asks.
    WorkerPool pool(bounded(1, 100, 2));
    bool started = false;
    EXPECT_EQ(pool.submit("a",
                          [&] {
                            {
                              std::lock_guard lock(mutex);
                              started = true;
                            }
                            changed.notify_all();
                            blocked();
                          }),
              Admission::taken);
    {
      // The thread takes it, so the queue is empty again.
      std::unique_lock lock(mutex);
      ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return started; }));
    }
    EXPECT_EQ(pool.submit("b", [] {}), Admission::taken);
    EXPECT_EQ(pool.submit("c", [] {}), Admission::taken);
    EXPECT_EQ(pool.submit("d", [] {}), Admission::pool_full);
    {
      std::lock_guard lock(mutex);
      open = true;
    }
    changed.notify_all();
  }
}

// ---- one queue: the egress proxy's sessions ------------------------------------------

TEST(OneQueueWorkerPool, SessionsOneAfterAnotherShareOneThread) {
  WorkerPool pool(WorkerLimits::one_queue(8, 10s));
  std::set<std::thread::id> ran_on;
  for (int i = 0; i < 20; ++i) {
    std::promise<std::thread::id> ran;
    ASSERT_EQ(Admission::taken,
              pool.submit("", [&] { ran.set_value(std::this_thread::get_id()); }));
    ran_on.insert(ran.get_future().get());
    // The thread is free again only once it waits for the next session, after the
    // session returned: a run() before that starts a second thread, as it should.
    ASSERT_TRUE(eventually([&] { return pool.idle() == 1; }));
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(ran_on.size(), 1U) << "every session should have reused the one idle thread";
  EXPECT_EQ(pool.threads(), 1U);
}

TEST(OneQueueWorkerPool, ASessionPastTheMaximumWaitsForTheFirstThreadToBeFree) {
  WorkerPool pool(WorkerLimits::one_queue(2, 10s));
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  int running = 0;
  auto blocking = [&] {
    std::unique_lock lock(mutex);
    ++running;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
    --running;
  };
  ASSERT_EQ(Admission::taken, pool.submit("", blocking));
  ASSERT_EQ(Admission::taken, pool.submit("", blocking));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 5s, [&] { return running == 2; }));
  }
  std::atomic<bool> third_ran = false;
  ASSERT_EQ(Admission::taken, pool.submit("", [&] { third_ran = true; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(third_ran.load()) << "a third session ran beside two that hold both threads";
  EXPECT_EQ(pool.threads(), 2U);
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  EXPECT_TRUE(eventually([&] { return third_ran.load(); }));
  EXPECT_EQ(pool.threads(), 2U);
}

TEST(OneQueueWorkerPool, AnIdleThreadEndsAfterItsLinger) {
  WorkerPool pool(WorkerLimits::one_queue(4, 50ms));
  std::promise<void> ran;
  ASSERT_EQ(Admission::taken, pool.submit("", [&] { ran.set_value(); }));
  ran.get_future().get();
  EXPECT_TRUE(eventually([&] { return pool.threads() == 0; }))
      << pool.threads() << " threads left after their linger";
  std::promise<void> again;
  ASSERT_EQ(Admission::taken, pool.submit("", [&] { again.set_value(); }));
  EXPECT_EQ(again.get_future().wait_for(5s), std::future_status::ready);
}

TEST(OneQueueWorkerPool, DestructionWaitsForTheRunningSessions) {
  std::atomic<int> finished = 0;
  {
    WorkerPool pool(WorkerLimits::one_queue(4, 10s));
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(Admission::taken, pool.submit("", [&] {
        std::this_thread::sleep_for(100ms);
        ++finished;
      }));
    }
  }
  EXPECT_EQ(finished.load(), 3);
}

}  // namespace
}  // namespace sandbox_host
