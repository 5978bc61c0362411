// What the host holds a running launch to beyond what the kernel bounds by itself:
// - the bytes and names the plugin leaves in its writable directories on the host's disk
//   (SocketDir, TmpDir), which stay the host's own directories (the gateway dials the socket
//   there) and which no quota an unprivileged host may set can bound;
// - a wall-clock lifetime.
// One thread per host process watches every launch, with one inotify instance, so that a
// gateway's many plugins do not use up the user's inotify instances (128 by default). A
// launch over a bound is stopped, with one audit record: SIGKILL to everything in its cgroup,
// or without one to its process and every process below it. The directories are counted
// again on every change inotify reports and every 250 ms without one, paced by what a count
// costs, so a plugin that churns its files slows its own watch rather than the host.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {

class PluginCgroup;

struct WatchOrder {
  std::string plugin;
  std::vector<std::filesystem::path> dirs;  // SocketDir and TmpDir; one inside the other is fine
  WatchLimits limits;
  std::shared_ptr<AuditSink> audit;

  // Whether any bound is set, so that a watch has something to hold.
  bool bounds_anything() const noexcept;
};

// A launch's watch, from watch_launch() until this is destroyed: once the destructor
// returns, the warden no longer touches the launch's process or cgroup.
class LaunchWatch {
 public:
  struct Watched;
  explicit LaunchWatch(std::shared_ptr<Watched> watched);
  ~LaunchWatch();
  LaunchWatch(const LaunchWatch &) = delete;
  LaunchWatch &operator=(const LaunchWatch &) = delete;

  // The record the warden wrote when it stopped the launch at a bound; nullopt while it has
  // not.
  std::optional<AuditRecord> stop_record() const;

 private:
  std::shared_ptr<Watched> watched_;
};

// Starts the thread that watches launches, which the first watch_launch() does otherwise: a
// long-running host calls it at start-up, so that what it holds at rest includes the thread
// and its descriptors from the start, and a host that cannot have them fails then rather than
// at a launch.
void start_launch_watches();

// Starts holding the launch whose process is pid (the launch's Child, alive and not yet
// reaped) to order's bounds; cgroup, where the launch has one, outlives the watch. The
// lifetime counts from now. Throws when pid is gone.
std::unique_ptr<LaunchWatch> watch_launch(WatchOrder order, pid_t pid, PluginCgroup *cgroup);

}  // namespace sandbox_host
