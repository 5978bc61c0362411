// How a serving loop shows that it still turns: it counts its turns, and serve's watchdog
// (service/progress_watchdog.hpp) pings the service manager only while every loop's count
// goes up. A loop that waits must wake at least every kLoopTurnBound to count a turn.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sandbox_host {

// The longest a serving loop may wait between two turns when nothing happens.
inline constexpr std::chrono::seconds kLoopTurnBound{1};

class LoopProgress {
 public:
  void turned() noexcept { turns_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t turns() const noexcept { return turns_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> turns_{0};
};

}  // namespace sandbox_host
