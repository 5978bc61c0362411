// The proxy's session threads (session_pool.hpp): a thread is kept and used again, no more
// than the maximum are started and a session past it waits for a free one, an idle thread
// ends after its linger, and destruction waits for the sessions still running.
#include <sandbox_host/host/egress/session_pool.hpp>

#include <fixtures.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace sandbox_host::egress {
namespace {

using namespace std::chrono_literals;
using test::eventually;

TEST(SessionPool, SessionsOneAfterAnotherShareOneThread) {
  SessionPool pool(8, 10s);
  std::set<std::thread::id> ran_on;
  for (int i = 0; i < 20; ++i) {
    std::promise<std::thread::id> ran;
    ASSERT_TRUE(pool.run([&] { ran.set_value(std::this_thread::get_id()); }));
    ran_on.insert(ran.get_future().get());
    // The thread is free again only once it waits for the next session, after the
    // session returned: a run() before that starts a second thread, as it should.
    ASSERT_TRUE(eventually([&] { return pool.idle() == 1; }));
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(ran_on.size(), 1U) << "every session should have reused the one idle thread";
  EXPECT_EQ(pool.threads(), 1U);
}

TEST(SessionPool, ASessionPastTheMaximumWaitsForTheFirstThreadToBeFree) {
  SessionPool pool(2, 10s);
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
  ASSERT_TRUE(pool.run(blocking));
  ASSERT_TRUE(pool.run(blocking));
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 5s, [&] { return running == 2; }));
  }
  std::atomic<bool> third_ran = false;
  ASSERT_TRUE(pool.run([&] { third_ran = true; }));
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

TEST(SessionPool, AnIdleThreadEndsAfterItsLinger) {
  SessionPool pool(4, 50ms);
  std::promise<void> ran;
  ASSERT_TRUE(pool.run([&] { ran.set_value(); }));
  ran.get_future().get();
  EXPECT_TRUE(eventually([&] { return pool.threads() == 0; }))
      << pool.threads() << " threads left after their linger";
  std::promise<void> again;
  ASSERT_TRUE(pool.run([&] { again.set_value(); }));
  EXPECT_EQ(again.get_future().wait_for(5s), std::future_status::ready);
}

TEST(SessionPool, DestructionWaitsForTheRunningSessions) {
  std::atomic<int> finished = 0;
  {
    SessionPool pool(4, 10s);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(pool.run([&] {
        std::this_thread::sleep_for(100ms);
        ++finished;
      }));
    }
  }
  EXPECT_EQ(finished.load(), 3);
}

}  // namespace
}  // namespace sandbox_host::egress
