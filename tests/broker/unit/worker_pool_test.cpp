// The worker pool (worker_pool.hpp): tasks side by side up to the cap, queued beyond it,
// and the destructor that runs what was queued before it joins.
#include <sandbox_host/host/broker/worker_pool.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace sandbox_host::broker {
namespace {

using namespace std::chrono_literals;

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
    WorkerPool pool(static_cast<std::size_t>(cap));
    for (int i = 0; i < cap; ++i) {
      pool.submit([&] {
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
    WorkerPool pool(kCap);
    for (int i = 0; i < kTasks; ++i) {
      pool.submit([&] {
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
  WorkerPool pool(kCap);
  for (int i = 0; i < kCap + 1; ++i) {
    pool.submit([&] {
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
    WorkerPool pool(1);
    pool.submit([&] {
      std::this_thread::sleep_for(200ms);
      ++done;
    });
    for (int i = 0; i < 10; ++i) {
      pool.submit([&] {
        std::this_thread::sleep_for(1ms);
        ++done;
      });
    }
    pool.submit([&] { after_join_ran = true; });
  }
  EXPECT_EQ(done.load(), 11);
  EXPECT_TRUE(after_join_ran.load());
}

TEST(WorkerPool, ACapOfZeroStillRunsTasks) {
  Meeting meeting(0);
  WorkerPool pool(0);
  for (int i = 0; i < 3; ++i) pool.submit([&] { meeting.finished(); });
  EXPECT_TRUE(meeting.all_finished_within(3, 10s));
}

TEST(WorkerPool, AnIdlePoolIsDestroyedAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  { WorkerPool pool(4); }
  {
    Meeting meeting(0);
    WorkerPool pool(4);
    pool.submit([&] { meeting.finished(); });
    ASSERT_TRUE(meeting.all_finished_within(1, 10s));
    // Its thread now waits for work; the destructor must wake it.
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

}  // namespace
}  // namespace sandbox_host::broker
