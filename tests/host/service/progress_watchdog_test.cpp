// serve's watchdog pings the service manager only while every serving loop turns: a loop
// that stalls stops the pings (and says so in the status), one that turns again resumes
// them.
#include <sandbox_host/host/service/progress_watchdog.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "notify_listener.hpp"

#include <atomic>
#include <thread>

namespace sandbox_host {
namespace {
using namespace std::chrono_literals;
using test::has_line;
using test::NotifyListener;
using test::ScopedEnv;
using test::TempFile;

// A loop that turns every 50 ms while it is not held.
class TurningLoop {
 public:
  TurningLoop()
      : thread_([this](std::stop_token stop) {
          while (!stop.stop_requested()) {
            if (!held_) progress_.turned();
            std::this_thread::sleep_for(50ms);
          }
        }) {}
  void hold(bool held) { held_ = held; }
  const LoopProgress *progress() const { return &progress_; }

 private:
  LoopProgress progress_;
  std::atomic<bool> held_{false};
  std::jthread thread_;
};

// The test's notify socket, given to the ServiceManager the way systemd gives it to serve.
class WithManager : public ::testing::Test {
 protected:
  TempFile dir_{"", "unused"};
  NotifyListener manager_side{dir_.dir()};
  ScopedEnv notify_{"NOTIFY_SOCKET", manager_side.path().string()};
};

TEST_F(WithManager, PingsWhileTheLoopsTurnAndStopsWhileOneStalls) {
  const ServiceManager manager = ServiceManager::from_environment();
  TurningLoop broker;
  TurningLoop launcher;
  // Pings every 1.25 s.
  ProgressWatchdog watchdog(
      manager, 2500ms,
      {{"the broker", broker.progress()}, {"the launch service", launcher.progress()}},
      "serving: test");

  ASSERT_TRUE(manager_side.wait_for("WATCHDOG=1", 3s)) << "no ping while both loops turn";
  launcher.hold(true);
  // At most the ping of a check already under way may still come; then the stall is said.
  const auto stalled =
      manager_side.wait_for("STATUS=stalled: no progress in the launch service", 3s);
  ASSERT_TRUE(stalled) << "the stall was not reported";
  EXPECT_FALSE(has_line(*stalled, "WATCHDOG=1"));
  // Two more checks pass, neither pinging.
  EXPECT_FALSE(manager_side.wait_for("WATCHDOG=1", 3s)) << "pinged while a loop stalled";
  launcher.hold(false);
  const auto resumed = manager_side.wait_for("WATCHDOG=1", 3s);
  ASSERT_TRUE(resumed) << "no ping once the loop turned again";
  EXPECT_TRUE(has_line(*resumed, "STATUS=serving: test")) << *resumed;
}

TEST_F(WithManager, AnIntervalIdleLoopsCouldMissIsRefusedByName) {
  const ServiceManager manager = ServiceManager::from_environment();
  LoopProgress progress;
  try {
    ProgressWatchdog watchdog(manager, 2s, {{"the broker", &progress}}, "serving");
    FAIL() << "a 2 s watchdog was taken";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("WatchdogSec=2000ms"), std::string::npos) << e.what();
  }
}

TEST_F(WithManager, TakesItsVariablesOutOfTheEnvironment) {
  ScopedEnv usec("WATCHDOG_USEC", "30000000");
  ScopedEnv pid("WATCHDOG_PID", std::to_string(::getpid()));
  const ServiceManager manager = ServiceManager::from_environment();
  EXPECT_TRUE(manager.notifies());
  EXPECT_EQ(manager.watchdog_interval(), std::chrono::microseconds(30000000));
  for (const char *name : {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"}) {
    EXPECT_EQ(::getenv(name), nullptr) << name << " is still in the environment";
  }
  manager.notify("READY=1");
  EXPECT_EQ(manager_side.next(1s), "READY=1");
}

TEST_F(WithManager, AWatchdogMeantForAnotherProcessIsNotServes) {
  ScopedEnv usec("WATCHDOG_USEC", "30000000");
  ScopedEnv pid("WATCHDOG_PID", std::to_string(::getpid() + 1));
  const ServiceManager manager = ServiceManager::from_environment();
  EXPECT_FALSE(manager.watchdog_interval());
  EXPECT_EQ(::getenv("WATCHDOG_USEC"), nullptr);
}

}  // namespace
}  // namespace sandbox_host
