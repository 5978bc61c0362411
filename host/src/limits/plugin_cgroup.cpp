// A launch's cgroup (plugin_cgroup.hpp): its bounds, its end, and stage 1's join.
#include <sandbox_host/host/limits/limit_report.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include <sandbox_host/unique_fd.hpp>

#include <sandbox_host/cgroup_control.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

namespace sandbox_host {
namespace fs = std::filesystem;

namespace {

using cgroup::read_control;
using cgroup::read_counter;
using cgroup::write_control;

constexpr std::uint64_t kCpuPeriodMicros = 100000;
// How long the end of a launch waits for what it killed to leave the cgroup.
constexpr auto kEmptyingTime = std::chrono::seconds(5);

std::string plural(std::uint64_t count, const std::string &one, const std::string &many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// The names of the cgroups this process's PluginCgroups hold, which sweep() leaves alone.
std::mutex live_mutex;
std::multiset<std::string> live_names;

}  // namespace

PluginCgroup::PluginCgroup(CgroupPlacement::Version version,
                           std::vector<std::pair<std::string, fs::path>> dirs,
                           std::shared_ptr<AuditSink> audit)
    : version_(version), dirs_(std::move(dirs)), audit_(std::move(audit)) {
  std::lock_guard lock(live_mutex);
  for (const auto &[controller, dir] : dirs_) live_names.insert(dir.filename().string());
}

void PluginCgroup::sweep(const fs::path &parent) {
  constexpr auto kGrace = std::chrono::minutes(1);
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(parent, ec)) {
    // sandbox-host-<name>.<pid>.<n>, as CgroupPlacement::make names them.
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kCgroupPrefix)) continue;
    const std::size_t last = name.rfind('.');
    if (last == std::string::npos || last == 0) continue;
    const std::size_t before = name.rfind('.', last - 1);
    if (before == std::string::npos) continue;
    const std::string pid_text = name.substr(before + 1, last - before - 1);
    const std::string seq_text = name.substr(last + 1);
    const auto digits = [](const std::string &t) {
      return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(pid_text) || !digits(seq_text)) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid()) {
      {
        std::lock_guard lock(live_mutex);
        if (live_names.contains(name)) continue;
      }
      const auto made = fs::last_write_time(entry.path(), ec);
      if (ec || fs::file_time_type::clock::now() - made < kGrace) continue;
    } else if (::kill(pid, 0) == 0 || errno != ESRCH) {
      continue;
    }
    ::rmdir(entry.path().c_str());  // fails, and it stays, while it holds processes
  }
}

void PluginCgroup::bound(const std::string &plugin, const LaunchLimits &limits) {
  plugin_ = plugin;
  limits_ = limits;
  const bool v2 = version_ == CgroupPlacement::Version::v2;
  std::error_code ec;
  for (const auto &[controller, dir] : dirs_) {
    if (controller == "memory") {
      const std::uint64_t memory = limits.cgroup.memory;
      const bool limited = memory != CgroupLimits::kUnlimited;
      if (v2) {
        write_control(dir / "memory.max", limited ? std::to_string(memory) : "max");
        // Swap is bounded with the memory: none beyond it.
        if (fs::exists(dir / "memory.swap.max", ec)) {
          write_control(dir / "memory.swap.max", limited ? "0" : "max");
        }
      } else {
        // v1 bounds memory + swap as memsw, which must never be below the memory limit.
        const std::string value = limited ? std::to_string(memory) : "-1";
        const bool memsw = fs::exists(dir / "memory.memsw.limit_in_bytes", ec);
        if (!limited && memsw) write_control(dir / "memory.memsw.limit_in_bytes", value);
        write_control(dir / "memory.limit_in_bytes", value);
        if (limited && memsw) write_control(dir / "memory.memsw.limit_in_bytes", value);
      }
    } else if (controller == "pids") {
      const std::uint64_t processes = limits.process.processes;
      write_control(dir / "pids.max", processes == Limits::kUnlimited
                                          ? "max"
                                          : std::to_string(processes + kSandboxOwnTasks));
    } else if (controller == "cpu") {
      const std::uint64_t millis = limits.cgroup.cpu_millis;
      const bool limited = millis != CgroupLimits::kUnlimited;
      const std::string quota = std::to_string(millis * kCpuPeriodMicros / 1000);
      if (v2) {
        write_control(dir / "cpu.max",
                      (limited ? quota : "max") + " " + std::to_string(kCpuPeriodMicros));
      } else {
        write_control(dir / "cpu.cfs_period_us", std::to_string(kCpuPeriodMicros));
        write_control(dir / "cpu.cfs_quota_us", limited ? quota : "-1");
      }
    }
  }
}

std::string PluginCgroup::join_list() const {
  std::set<fs::path> seen;
  std::string list;
  for (const auto &[controller, dir] : dirs_) {
    if (!seen.insert(dir).second) continue;
    list += (list.empty() ? "" : "\n") + (dir / "cgroup.procs").string();
  }
  return list;
}

std::vector<pid_t> PluginCgroup::processes() const {
  std::set<pid_t> pids;
  for (const auto &[controller, dir] : dirs_) {
    std::istringstream in;
    try {
      in.str(read_control(dir / "cgroup.procs"));
    } catch (const std::exception &) {
      continue;
    }
    for (pid_t pid = 0; in >> pid;) pids.insert(pid);
  }
  return {pids.begin(), pids.end()};
}

std::vector<LimitHit> PluginCgroup::hits() const {
  std::vector<LimitHit> hits;
  const bool v2 = version_ == CgroupPlacement::Version::v2;
  const std::string where = plugin_.empty() ? "[limits]" : "[plugins." + plugin_ + ".limits]";
  for (const auto &[controller, dir] : dirs_) {
    if (controller == "memory") {
      const std::uint64_t kills =
          read_counter(dir / (v2 ? "memory.events" : "memory.oom_control"), "oom_kill");
      if (kills == 0) continue;
      hits.push_back({"memory-limit",
                      std::string(v2 ? "memory.max " : "memory.limit_in_bytes ") +
                          size_words(limits_.cgroup.memory) +
                          " (swap included) reached: the kernel's OOM " + "killer stopped " +
                          plural(kills, "process", "processes"),
                      "raise " + where + " memory if the plugin needs more"});
    } else if (controller == "pids") {
      const std::uint64_t refused = read_counter(dir / "pids.events", "max");
      if (refused == 0) continue;
      hits.push_back(
          {"pids-limit",
           "pids.max " + std::to_string(limits_.process.processes + kSandboxOwnTasks) +
               " reached ([limits] processes " + std::to_string(limits_.process.processes) +
               " and " + std::to_string(kSandboxOwnTasks) + " of the sandbox's own): " +
               plural(refused, "fork or clone", "forks or clones") + " failed with EAGAIN",
           "raise " + where + " processes if the plugin needs more"});
    }
  }
  return hits;
}

void PluginCgroup::kill_all() const {
  std::error_code ec;
  if (version_ == CgroupPlacement::Version::v2 && !dirs_.empty() &&
      fs::exists(dirs_.front().second / "cgroup.kill", ec)) {
    write_control(dirs_.front().second / "cgroup.kill", "1");
  }
  const auto deadline = std::chrono::steady_clock::now() + kEmptyingTime;
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    const std::vector<pid_t> listed = processes();
    if (listed.empty()) return;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(plural(listed.size(), "process", "processes") + " stayed in " +
                               dirs_.front().second.string() + " after SIGKILL");
    }
    // A pid read from cgroup.procs may have exited since; its pidfd, opened before the list
    // is read again, is signalled only where that list still has it, so that a pid taken by
    // another process meanwhile is never signalled.
    std::vector<std::pair<pid_t, UniqueFd>> opened;
    for (pid_t pid : listed) {
      UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
      if (fd) opened.emplace_back(pid, std::move(fd));
    }
    const std::vector<pid_t> again = processes();
    for (const auto &[pid, fd] : opened) {
      if (std::binary_search(again.begin(), again.end(), pid)) {
        ::syscall(SYS_pidfd_send_signal, fd.get(), SIGKILL, nullptr, 0);
      }
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

PluginCgroup::~PluginCgroup() {
  {
    std::lock_guard lock(live_mutex);
    for (const auto &[controller, dir] : dirs_) {
      const auto held = live_names.find(dir.filename().string());
      if (held != live_names.end()) live_names.erase(held);
    }
  }
  if (!held_by_child_) return;
  try {
    kill_all();
  } catch (const std::exception &e) {
    audit_->record({"limits", plugin_, "cgroup-left", e.what(),
                    "kill them by hand; a sandbox-host that starts after this one removes the "
                    "cgroup once it is empty",
                    true});
    return;
  }
  try {
    for (const LimitHit &hit : hits_recorded_ ? std::vector<LimitHit>{} : hits()) {
      audit_->record({"limits", plugin_, hit.rule, hit.attempted, hit.hint, true});
    }
  } catch (const std::exception &) {
    // The records are best effort; the removal below is not.
  }
  std::set<fs::path> removed;
  for (const auto &[controller, dir] : dirs_) {
    if (!removed.insert(dir).second) continue;
    // A process that was just killed may still be leaving.
    for (int attempt = 0; ::rmdir(dir.c_str()) != 0 && errno == EBUSY && attempt < 100; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

void join_cgroups(const std::string &list) {
  std::istringstream files(list);
  for (std::string file; std::getline(files, file);) {
    UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd || ::write(fd.get(), "0", 1) != 1) {
      throw std::runtime_error("join " + file + ": " + std::generic_category().message(errno));
    }
  }
}

}  // namespace sandbox_host
