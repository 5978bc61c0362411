// What probe says of the limits: for one backend, each bound of [limits] with its value here,
// whether it holds and by what, or why not and what would make it hold. Put together from
// the backend's own report (ProbeReport::bounds) and the host's cgroups (CgroupPlacement),
// never claiming a bound that neither holds.
#pragma once

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>
#include <sandbox_host/host/probe.hpp>

#include <string>
#include <vector>

namespace sandbox_host {

struct LimitRow {
  std::string limit;  // as [limits] names it
  std::string value;  // "1024", "2G", "1.5 CPUs", "unlimited"
  bool enforced = false;
  // enforced: each mechanism that holds it; else why not, with what would.
  std::vector<std::string> how;
};

std::vector<LimitRow> limit_rows(const BackendStatus &backend, const LaunchLimits &limits,
                                 const CgroupPlacement &cgroups);

// 268435456 -> "256M"; kUnlimited -> "unlimited".
std::string size_words(std::uint64_t bytes);
// 5400 -> "90m"; kUnlimited -> "unlimited".
std::string duration_words(std::uint64_t seconds);

}  // namespace sandbox_host
