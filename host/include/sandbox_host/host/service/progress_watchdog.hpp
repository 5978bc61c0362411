// serve's answer to the service manager's watchdog (WatchdogSec=): WATCHDOG=1 once every
// half interval, sent only when each serving loop has turned since the last one. A loop that
// hangs (a deadlock, a blocking call that never returns) stops the pings, and the manager
// restarts serve; a timer that pinged regardless of the loops would prove only that one
// thread of serve is alive.
#pragma once

#include <sandbox_host/host/service/loop_progress.hpp>
#include <sandbox_host/host/service/service_manager.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host {

struct WatchedLoop {
  std::string name;  // for the status text: "the launch service", say
  const LoopProgress *progress;
};

class ProgressWatchdog {
 public:
  // Pings through manager, which must outlive the watchdog. interval is the manager's
  // WATCHDOG_USEC; it must be more than twice kLoopTurnBound, or an idle loop would miss
  // pings (refused with std::invalid_argument naming WatchdogSec=). serving_status is the
  // status text put back when stalled loops turn again.
  ProgressWatchdog(const ServiceManager &manager, std::chrono::microseconds interval,
                   std::vector<WatchedLoop> loops, std::string serving_status);
  ~ProgressWatchdog() = default;  // the jthread stops and joins
  ProgressWatchdog(const ProgressWatchdog &) = delete;
  ProgressWatchdog &operator=(const ProgressWatchdog &) = delete;

 private:
  void watch(std::stop_token stop);

  const ServiceManager &manager_;
  std::chrono::microseconds interval_;
  std::vector<WatchedLoop> loops_;
  std::string serving_status_;
  std::jthread thread_;
};

}  // namespace sandbox_host
