#include <sandbox_host/host/service/progress_watchdog.hpp>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace sandbox_host {

ProgressWatchdog::ProgressWatchdog(const ServiceManager &manager,
                                   std::chrono::microseconds interval,
                                   std::vector<WatchedLoop> loops, std::string serving_status)
    : manager_(manager),
      interval_(interval),
      loops_(std::move(loops)),
      serving_status_(std::move(serving_status)) {
  // Pings go every half interval and a loop turns at least every kLoopTurnBound: below
  // twice that bound, an idle but healthy loop could let the interval pass unpinged.
  if (interval_ <= 2 * std::chrono::duration_cast<std::chrono::microseconds>(kLoopTurnBound)) {
    throw std::invalid_argument("WatchdogSec=" + std::to_string(interval_.count() / 1000) +
                                "ms: serve's loops turn at least every " +
                                std::to_string(kLoopTurnBound.count()) +
                                " s when idle; a watchdog needs more than twice that");
  }
  thread_ = std::jthread([this](std::stop_token stop) { watch(stop); });
}

void ProgressWatchdog::watch(std::stop_token stop) {
  std::vector<std::uint64_t> seen(loops_.size());
  for (std::size_t i = 0; i < loops_.size(); ++i) seen[i] = loops_[i].progress->turns();
  std::mutex mutex;
  std::condition_variable_any tick;
  std::unique_lock lock(mutex);
  bool stalled = false;
  while (!tick.wait_for(lock, stop, interval_ / 2, [&] { return stop.stop_requested(); })) {
    std::string still;
    for (std::size_t i = 0; i < loops_.size(); ++i) {
      const std::uint64_t turns = loops_[i].progress->turns();
      if (turns == seen[i]) still += (still.empty() ? "" : ", ") + loops_[i].name;
      seen[i] = turns;
    }
    if (still.empty()) {
      manager_.notify(stalled ? "WATCHDOG=1\nSTATUS=" + serving_status_ : "WATCHDOG=1");
      stalled = false;
    } else if (!stalled) {
      // No ping: the manager's watchdog runs out and restarts serve; the status says why.
      manager_.notify("STATUS=stalled: no progress in " + still);
      stalled = true;
    }
  }
}

}  // namespace sandbox_host
