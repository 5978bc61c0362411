// Probe's account of the limits (limit_report.hpp).
#include <sandbox_host/host/limits/limit_report.hpp>

#include <algorithm>
#include <sstream>

namespace sandbox_host {

std::string size_words(std::uint64_t bytes) {
  if (bytes == Limits::kUnlimited) return "unlimited";
  const char *units[] = {"", "K", "M", "G", "T"};
  unsigned unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + units[unit];
}

std::string duration_words(std::uint64_t seconds) {
  if (seconds == WatchLimits::kUnlimited) return "unlimited";
  const std::pair<std::uint64_t, const char *> units[] = {{86400, "d"}, {3600, "h"}, {60, "m"}};
  for (const auto &[length, unit] : units) {
    if (seconds % length == 0) return std::to_string(seconds / length) + unit;
  }
  return std::to_string(seconds) + "s";
}

namespace {

std::string count_words(std::uint64_t count) {
  return count == Limits::kUnlimited ? "unlimited" : std::to_string(count);
}

std::string cpu_words(std::uint64_t millis) {
  if (millis == CgroupLimits::kUnlimited) return "unlimited";
  std::ostringstream out;
  out << static_cast<double>(millis) / 1000.0 << (millis == 1000 ? " CPU" : " CPUs");
  return out.str();
}

// The cgroup file that holds controller's bound, for people.
std::string cgroup_file(const CgroupPlacement &cgroups, const std::string &controller) {
  const bool v2 = cgroups.version() == CgroupPlacement::Version::v2;
  if (controller == "memory") {
    return v2 ? "cgroup v2 memory.max, memory.swap.max 0"
              : "cgroup v1 memory.limit_in_bytes and memory.memsw.limit_in_bytes";
  }
  if (controller == "pids") return v2 ? "cgroup v2 pids.max" : "cgroup v1 pids.max";
  return v2 ? "cgroup v2 cpu.max" : "cgroup v1 cpu.cfs_quota_us";
}

std::string why_no_cgroup(const BackendStatus &backend, const CgroupPlacement &cgroups,
                          const std::string &controller) {
  if (!backend.reexecs_stage1) {
    return "its launches do not re-execute stage 1, which is what joins the launch's cgroup";
  }
  for (const auto &c : cgroups.controllers()) {
    if (c.name == controller) {
      return "no cgroup: " + c.why_not + (cgroups.hint().empty() ? "" : "; " + cgroups.hint());
    }
  }
  return "no cgroup";
}

}  // namespace

std::vector<LimitRow> limit_rows(const BackendStatus &backend, const LaunchLimits &limits,
                                 const CgroupPlacement &cgroups) {
  struct Field {
    const char *name;
    std::string value;
    bool unlimited;
    const char *controller;  // the cgroup controller that bounds it too, or nullptr
    bool watched = false;    // held by the host's watch where the backend confines writes
    // The backend's own bound stands in for the cgroup's: the host sends it only where no
    // cgroup holds this (Spec::process_memory).
    bool backend_without_cgroup = false;
  };
  const WatchLimits &w = limits.watch;
  const Limits &p = limits.process;
  const Field fields[] = {
      {"processes", count_words(p.processes), p.processes == Limits::kUnlimited, "pids"},
      {"memory", size_words(limits.cgroup.memory), limits.cgroup.memory == Limits::kUnlimited,
       "memory", false, true},
      {"cpu", cpu_words(limits.cgroup.cpu_millis),
       limits.cgroup.cpu_millis == CgroupLimits::kUnlimited, "cpu"},
      {"open_files", count_words(p.open_files), p.open_files == Limits::kUnlimited, nullptr},
      {"file_size", size_words(p.file_size), p.file_size == Limits::kUnlimited, nullptr},
      {"tmp_size", size_words(p.tmp_size), p.tmp_size == Limits::kUnlimited, nullptr},
      {"tmp_inodes", count_words(p.tmp_inodes), p.tmp_inodes == Limits::kUnlimited, nullptr},
      {"shm_size", size_words(p.shm_size), p.shm_size == Limits::kUnlimited, nullptr},
      {"scratch_size", size_words(w.scratch_size), w.scratch_size == WatchLimits::kUnlimited,
       nullptr, true},
      {"scratch_files", count_words(w.scratch_files), w.scratch_files == WatchLimits::kUnlimited,
       nullptr, true},
  };
  const bool cgroup_joined = backend.reexecs_stage1;
  std::vector<LimitRow> rows;
  for (const Field &field : fields) {
    LimitRow row{field.name, field.value, false, {}};
    if (field.unlimited) {
      row.how.push_back("unlimited in [limits]");
      rows.push_back(std::move(row));
      continue;
    }
    std::vector<std::string> not_held;
    if (field.controller != nullptr) {
      if (cgroup_joined && cgroups.bounds(field.controller)) {
        row.enforced = true;
        row.how.push_back(cgroup_file(cgroups, field.controller));
      } else {
        not_held.push_back(why_no_cgroup(backend, cgroups, field.controller));
      }
    }
    const auto own = std::find_if(backend.bounds.begin(), backend.bounds.end(),
                                  [&](const LimitBound &b) { return b.limit == field.name; });
    const bool held_by_cgroup_instead = field.backend_without_cgroup && row.enforced;
    if (own != backend.bounds.end() && !held_by_cgroup_instead) {
      (own->enforced ? row.how : not_held).push_back(own->how);
      row.enforced = row.enforced || own->enforced;
    } else if (field.controller == nullptr || std::string(field.controller) == "pids") {
      not_held.push_back(backend.abi_minor < 7 ? "the backend is built against module ABI 1." +
                                                     std::to_string(backend.abi_minor) +
                                                     ", which cannot say how it bounds it"
                                               : "the backend does not bound it");
    }
    if (field.watched && row.enforced) {
      row.how.push_back(
          "the host's watch of SocketDir and TmpDir (inotify, and a count every 250 ms), which "
          "stops the plugin past it");
    }
    if (!row.enforced) row.how = std::move(not_held);
    rows.push_back(std::move(row));
  }
  LimitRow lifetime{"lifetime", duration_words(w.lifetime_seconds), false, {}};
  if (w.lifetime_seconds == WatchLimits::kUnlimited) {
    lifetime.how.push_back("unlimited in [limits]");
  } else {
    lifetime.enforced = true;
    lifetime.how.push_back(
        cgroup_joined && cgroups.version() != CgroupPlacement::Version::none
            ? "the host's timer: SIGKILL to everything in the launch's cgroup"
            : "the host's timer: SIGKILL to the launch's process and every process below it "
              "(without a cgroup, one that left the tree, as a daemon does, outlives it)");
  }
  rows.push_back(std::move(lifetime));
  return rows;
}

}  // namespace sandbox_host
