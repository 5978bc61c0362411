// Why a plugin died (death_report.hpp).
#include <sandbox_host/host/limits/death_report.hpp>

#include <sandbox_host/host/limits/limit_report.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;

namespace {

// Only these backends set the [limits] rlimits and load the seccomp filter in stage 1; a
// plugin under "off" or seatbelt that dies of SIGXFSZ or SIGSYS met a bound of its own.
bool confines(const std::string &backend) {
  return backend == "namespaces" || backend == "landlock";
}

// Under Landlock the plugin keeps the launching uid in the host's user namespace, where
// RLIMIT_NPROC counts every task of that uid on the host; the namespaces backend's count is
// the sandbox's own user namespace's, whose tasks all end with the plugin.
bool counts_uid_on_host(const std::string &backend) {
  return backend == "landlock";
}

// How near the limit the uid's count, taken once the plugin ended, must be for its end to
// be put down to RLIMIT_NPROC: the plugin's own threads ended with it, so the count is below
// the one its failed clone met by as many; a node process has a dozen or two.
std::uint64_t nproc_margin(std::uint64_t limit) {
  return std::max<std::uint64_t>(32, limit / 16);
}

// The signal that ended the plugin: its own, or under namespaces one the sandbox reported as
// 128 + the signal (its init exits so, and a prepared sandbox reports so, when the plugin was
// killed). Under Landlock the plugin is the launch's own process, whose status is its own: a
// plugin that exits 153 there was not killed.
int ending_signal(const std::string &backend, const DeathEvidence &evidence) {
  if (evidence.signal != 0) return evidence.signal;
  const bool reported_as_code = backend == "namespaces";
  if (reported_as_code && evidence.code > 128 && evidence.code < 128 + 65) {
    return evidence.code - 128;
  }
  return 0;
}

std::string status_words(int signal, const DeathEvidence &evidence) {
  const int shown = evidence.signal != 0 ? 128 + evidence.signal : evidence.code;
  if (signal == 0) return "exit status " + std::to_string(shown);
  const char *abbrev = ::sigabbrev_np(signal);
  return std::string(abbrev != nullptr ? "SIG" + std::string(abbrev)
                                       : "signal " + std::to_string(signal)) +
         " (exit status " + std::to_string(shown) + ")";
}

std::string limits_table(const std::string &plugin) {
  return "[limits]" + (plugin.empty() ? std::string() : " or [plugins." + plugin + ".limits]");
}

}  // namespace

std::string Death::line() const {
  std::string line = "sandbox-host: plugin " + (record.plugin.empty() ? "?" : record.plugin) +
                     " died: " + record.attempted;
  if (!record.hint.empty()) line += " (" + record.hint + ")";
  // The plugin's name is the caller's text: shown as the audit shows it.
  return escape_text(line);
}

bool needs_task_count(const DeathOrder &order, const DeathEvidence &evidence) {
  const bool abnormal = evidence.signal != 0 || evidence.code != 0;
  return abnormal && counts_uid_on_host(order.backend) && evidence.uid != 0 &&
         order.limits.process.processes != Limits::kUnlimited;
}

std::vector<Death> explain_death(const DeathOrder &order, const DeathEvidence &evidence) {
  std::vector<Death> deaths;
  const int signal = ending_signal(order.backend, evidence);
  const std::string status = status_words(signal, evidence);

  // The cgroup's counters are the kernel's own word: each one is recorded, whatever the
  // exit. The OOM killer's SIGKILL, or a fork refused by pids.max, explains an abnormal end.
  for (const LimitHit &hit : evidence.cgroup_hits) {
    Death death{{"limits", order.plugin, hit.rule, hit.attempted, hit.hint, true}, false, false};
    if (hit.rule == "memory-limit") death.explains_exit = signal == SIGKILL;
    if (hit.rule == "pids-limit") death.explains_exit = signal != 0 || evidence.code != 0;
    deaths.push_back(std::move(death));
  }
  // The host's own kill (lifetime, scratch_size, ...), recorded by the watch that made it.
  if (evidence.host_stop && signal == SIGKILL) {
    for (Death &death : deaths) death.explains_exit = false;
    deaths.insert(deaths.begin(), Death{*evidence.host_stop, true, true});
  }
  const bool told =
      std::any_of(deaths.begin(), deaths.end(), [](const Death &d) { return d.explains_exit; });
  if (told || !confines(order.backend)) return deaths;

  const Limits &process = order.limits.process;
  if (signal == SIGSYS) {
    deaths.push_back(
        {{order.backend, order.plugin, "seccomp-kill",
          "killed by the seccomp filter, " + status +
              ": it made a system call of another architecture or ABI than the host's (a "
              "32-bit int 0x80 or sysenter on x86_64, an x32 call), which the filter cannot "
              "check against its rules and so kills",
          "no config key allows it: build the plugin for the host's native 64-bit ABI "
          "(docs/security-model.md, \"Seccomp filter\")",
          true},
         true,
         false});
  } else if (signal == SIGXFSZ && process.file_size != Limits::kUnlimited) {
    deaths.push_back(
        {{"limits", order.plugin, "limit-file-size",
          "killed by the kernel, " + status + ": it wrote a file past file_size " +
              size_words(process.file_size) +
              " (RLIMIT_FSIZE); the file keeps what fit below the bound",
          "raise file_size in " + limits_table(order.plugin) + ", e.g. file_size = \"" +
              size_words(process.file_size * 4) + "\", or \"unlimited\"",
          true},
         true,
         false});
  } else if (evidence.uid_tasks && needs_task_count(order, evidence) &&
             *evidence.uid_tasks + nproc_margin(process.processes) >= process.processes) {
    deaths.push_back(
        {{"limits", order.plugin, "limit-processes",
          "likely RLIMIT_NPROC: it ended with " + status + " while uid " +
              std::to_string(evidence.uid) + " had " + std::to_string(*evidence.uid_tasks) +
              " processes and threads on the host, counted by the host when the plugin "
              "ended (its own threads no longer among them), of the " +
              std::to_string(process.processes) + " that processes allows; under " + order.backend +
              " RLIMIT_NPROC counts every process and thread of the uid on the host, so a "
              "thread or process the plugin could not create (EAGAIN) would end it so (node "
              "aborts with SIGABRT)",
          "raise processes in " + limits_table(order.plugin) +
              ", e.g. processes = " + std::to_string(process.processes * 4) +
              ", or run fewer processes as uid " + std::to_string(evidence.uid) +
              "; the namespaces backend counts only the sandbox's own",
          true},
         true,
         false});
  }
  return deaths;
}

std::uint64_t count_uid_tasks(uid_t uid, const fs::path &proc) {
  std::uint64_t tasks = 0;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(proc, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process that ended since the listing has no status any more: it counts no longer.
    std::ifstream status(entry.path() / "status");
    bool ours = false;
    std::uint64_t threads = 0;
    for (std::string line; std::getline(status, line);) {
      std::istringstream fields(line);
      std::string key;
      fields >> key;
      if (key == "Uid:") {
        long real = -1;
        fields >> real;
        ours = real == static_cast<long>(uid);
        if (!ours) break;
      } else if (key == "Threads:") {
        fields >> threads;
      }
    }
    if (ours) tasks += threads;
  }
  return tasks;
}

namespace {
std::optional<Death> gather_and_record(const DeathOrder &order, int code, int signal,
                                       PluginCgroup *cgroup,
                                       const std::optional<AuditRecord> &host_stop) {
  DeathEvidence evidence;
  evidence.host_stop = host_stop;
  evidence.code = code;
  evidence.signal = signal;
  evidence.uid = ::getuid();
  if (cgroup != nullptr) {
    try {
      evidence.cgroup_hits = cgroup->hits();
    } catch (const std::exception &) {
      // Unreadable counters: the cgroup's end tries again and records them itself.
    }
  }
  // Counted at once: the tasks of the uid's other processes change by the moment.
  if (needs_task_count(order, evidence)) evidence.uid_tasks = count_uid_tasks(evidence.uid);
  std::optional<Death> explaining;
  for (const Death &death : explain_death(order, evidence)) {
    if (order.audit && !death.recorded) order.audit->record(death.record);
    if (death.explains_exit && !explaining) explaining = death;
  }
  if (cgroup != nullptr && !evidence.cgroup_hits.empty()) cgroup->hits_recorded();
  return explaining;
}
}  // namespace

std::optional<Death> report_death(const DeathOrder &order, int code, int signal,
                                  PluginCgroup *cgroup,
                                  const std::optional<AuditRecord> &host_stop) noexcept {
  try {
    return gather_and_record(order, code, signal, cgroup, host_stop);
  } catch (const std::exception &) {
    // Out of memory, or an audit sink that cannot write: the exit status still stands, and
    // the cgroup's end records its own counters.
    return std::nullopt;
  }
}

}  // namespace sandbox_host
