// A launch's own cgroup: memory (swap included), processes and CPU bounded by the kernel for
// the plugin and everything it starts, which rlimits cannot do. The host makes it before the
// launch, stage 1 joins it before anything of the sandbox exists (kEnvCgroup), and the
// launch's Child removes it when the plugin ended, after killing whatever the plugin left in
// it, with one audit record for each bound the plugin ran into.
//
// Where the cgroups go is the operator's [limits] cgroup, found once per Host
// (CgroupPlacement): cgroup v2 where a delegated cgroup offers the controllers, else the
// cgroup v1 hierarchies of memory, pids and cpu, else none, with the reason and the fix.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

class PluginCgroup;

// One controller a launch's cgroup bounds with, and how it fares on this host.
struct CgroupController {
  std::string name;              // "memory", "pids", "cpu"
  std::filesystem::path parent;  // where launches' cgroups are made; empty when unusable
  std::string why_not;           // when unusable: what was found
};

class CgroupPlacement {
 public:
  enum class Version { none, v1, v2 };

  // Reads this host's hierarchies and sandbox-host's own cgroups for the [limits] cgroup
  // setting ("auto", "off" or a cgroup path).
  static CgroupPlacement find(const std::string &setting);

  Version version() const noexcept { return version_; }
  // memory, pids and cpu, each with its parent or why it is not used.
  const std::vector<CgroupController> &controllers() const noexcept { return controllers_; }
  bool bounds(const std::string &controller) const;
  // For people: "cgroup v1 (memory under /sys/fs/cgroup/memory/x, ...)" or why none.
  const std::string &description() const noexcept { return description_; }
  // What would give launches cgroups (or the missing controllers); "" when all are used.
  const std::string &hint() const noexcept { return hint_; }

  // A new cgroup for one launch, named for name (a plugin, or "prepared"), its bounds
  // unlimited until PluginCgroup::bound. Throws with the directory and the kernel's reason.
  std::shared_ptr<PluginCgroup> make(const std::string &name,
                                     std::shared_ptr<AuditSink> audit) const;

 private:
  Version version_ = Version::none;
  std::vector<CgroupController> controllers_;
  std::string description_;
  std::string hint_;
};

// A bound the plugin ran into, read from the cgroup's counters when it ended.
struct LimitHit {
  std::string rule;       // "memory-limit", "pids-limit"
  std::string attempted;  // "memory.max 256M reached: the kernel's OOM killer stopped 1 process"
  std::string hint;
};

class PluginCgroup {
 public:
  // The cgroup of each controller; one directory for all on cgroup v2.
  PluginCgroup(CgroupPlacement::Version version,
               std::vector<std::pair<std::string, std::filesystem::path>> dirs,
               std::shared_ptr<AuditSink> audit);
  // Once a Child holds it (spawn()): kills what is still in it, reads what it hit into the
  // audit and removes it. Otherwise the caller spawns the command itself, maybe after this,
  // and the cgroup stays for sweep() to remove once it is empty.
  ~PluginCgroup();
  PluginCgroup(const PluginCgroup &) = delete;
  PluginCgroup &operator=(const PluginCgroup &) = delete;

  // Sets the launch's bounds: memory and swap together, pids.max, the CPU quota. plugin
  // names the launch in the audit records.
  void bound(const std::string &plugin, const LaunchLimits &limits);
  // The cgroup.procs files stage 1 writes itself into, one per line (kEnvCgroup's value).
  std::string join_list() const;
  // Removes the empty cgroups under parent that no PluginCgroup holds: those a host process
  // that is gone made, and this process's own once a minute has passed since they were made
  // (a caller that spawned its command itself had that long for stage 1 to join).
  static void sweep(const std::filesystem::path &parent);
  // The launch's Child holds it now: its end ends every process in the cgroup.
  void held_by_child() noexcept { held_by_child_ = true; }
  // The processes in it now.
  std::vector<pid_t> processes() const;
  // What the plugin ran into so far.
  std::vector<LimitHit> hits() const;
  // The launch's death report (death_report.hpp) recorded hits(): the end records them no
  // more.
  void hits_recorded() noexcept { hits_recorded_ = true; }
  // SIGKILL to every process in it, until none is left. Throws when some stay.
  void kill_all() const;

 private:
  CgroupPlacement::Version version_;
  std::vector<std::pair<std::string, std::filesystem::path>> dirs_;
  std::shared_ptr<AuditSink> audit_;
  std::string plugin_;
  LaunchLimits limits_;
  bool held_by_child_ = false;
  bool hits_recorded_ = false;
};

// Stage 1's side: writes this process into every cgroup.procs file of list (join_list()).
// Throws with the file and the kernel's reason.
void join_cgroups(const std::string &list);

// What the name of every launch's cgroup starts with: sandbox-host-<plugin>.<pid>.<n>.
inline constexpr std::string_view kCgroupPrefix = "sandbox-host-";

// The number of tasks of a sandbox's own beside the plugin's (the namespaces backend's stage
// 1, its init and the init's relay thread), which the cgroup's pids.max allows on top of
// [limits] processes.
inline constexpr std::uint64_t kSandboxOwnTasks = 3;

}  // namespace sandbox_host
