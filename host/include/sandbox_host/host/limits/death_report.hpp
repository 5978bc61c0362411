// Why a plugin died, when a bound of the host's killed it: the one place that reads a launch's
// end (its exit status, its backend, its bounds, its cgroup's counters and, for
// RLIMIT_NPROC under a backend that counts every process of the uid, a count of the uid's
// tasks) and says which bound it ran into, how that was told, and the key that raises it.
// Each such death leaves one audit record; `run` (and `run --via`, through the launch
// service's reply) prints it as one line on stderr. docs/why-denied.md, "Why did my plugin
// die?", lists them.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {

class PluginCgroup;
struct LimitHit;

// What a launch's end is read against; the host makes one for each launch it starts
// (Host::death_order).
struct DeathOrder {
  std::string plugin;
  std::string backend;  // the backend's name: "namespaces", "landlock", "off", ...
  LaunchLimits limits;
  std::shared_ptr<AuditSink> audit;
};

// What is known of the launch's end. Gathered by report_death(); a test fills it by hand.
struct DeathEvidence {
  int code = 0;    // exit code, when it exited
  int signal = 0;  // terminating signal, when killed
  // The cgroup's counters (PluginCgroup::hits), when the launch had one.
  std::vector<LimitHit> cgroup_hits;
  // The tasks (processes and threads) of the plugin's real uid in /proc when it ended,
  // counted only where RLIMIT_NPROC could explain the end (see needs_task_count()).
  std::optional<std::uint64_t> uid_tasks;
  uid_t uid = 0;
  // The record the host's watch wrote when it killed the launch at a bound (lifetime,
  // scratch_size, ...), if it did.
  std::optional<AuditRecord> host_stop;
};

// A bound's death: its audit record, and whether it explains the plugin's own exit status
// (only then does `run` print it).
struct Death {
  AuditRecord record;
  bool explains_exit = false;
  // Written already, by the host's watch that made the kill: not recorded again.
  bool recorded = false;
  // "sandbox-host: plugin <name> died: <what> (<hint>)", one line, no newline.
  std::string line() const;
};

// Every bound the evidence shows the launch ran into, the one that explains its exit first.
// Pure: reads nothing but its arguments.
std::vector<Death> explain_death(const DeathOrder &order, const DeathEvidence &evidence);

// Whether a count of the uid's tasks could change what explain_death() says: the plugin
// ended abnormally, under a backend where RLIMIT_NPROC counts every process of the uid on
// the host, with a finite bound, and a uid that RLIMIT_NPROC binds (not 0).
bool needs_task_count(const DeathOrder &order, const DeathEvidence &evidence);

// The tasks of real uid uid that proc shows: the sum of Threads of each process whose real
// uid is uid, which is what the kernel holds against RLIMIT_NPROC at a clone. Processes that
// proc does not show (another pid namespace's) are not counted.
std::uint64_t count_uid_tasks(uid_t uid, const std::filesystem::path &proc = "/proc");

// Gathers the evidence of a launch that ended with code or signal (its cgroup's counters,
// the uid's tasks where they matter), records each death in order.audit, tells cgroup that
// its hits are recorded, and returns the death that explains the exit, if any. host_stop:
// the watch's record of its kill (LaunchWatch::stop_record).
std::optional<Death> report_death(const DeathOrder &order, int code, int signal,
                                  PluginCgroup *cgroup,
                                  const std::optional<AuditRecord> &host_stop) noexcept;

}  // namespace sandbox_host
