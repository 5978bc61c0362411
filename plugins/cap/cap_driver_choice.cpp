// The driver choice of cap-slot and scope (cap_driver_choice.hpp): reads the host's mount
// table and /run/systemd/system; the systemd driver itself opens the bus afterwards.
#include "cap_driver_choice.hpp"

#include <sandbox_host/cgroup_mounts.hpp>

#include <stdexcept>
#include <system_error>

namespace sandbox_host::cap {
namespace fs = std::filesystem;

std::string_view to_string(DriverKind kind) {
  switch (kind) {
    case DriverKind::systemd:
      return "systemd";
    case DriverKind::cgroup2:
      return "cgroup2";
    case DriverKind::cgroup1:
      return "cgroup1";
  }
  return "unknown";
}

std::optional<DriverKind> driver_named(std::string_view setting) {
  if (setting == "auto") return std::nullopt;
  for (DriverKind kind : {DriverKind::systemd, DriverKind::cgroup2, DriverKind::cgroup1}) {
    if (setting == to_string(kind)) return kind;
  }
  throw std::invalid_argument("\"" + std::string(setting) +
                              "\" is no driver; drivers: auto, systemd, cgroup2, cgroup1");
}

HostCgroups HostCgroups::of_this_host() {
  HostCgroups host;
  std::error_code ec;
  host.systemd_runs = fs::is_directory("/run/systemd/system", ec);
  const cgroup::CgroupMounts mounts = cgroup::CgroupMounts::of_this_host();
  host.unified = mounts.unified;
  if (const auto memory = mounts.v1.find("memory"); memory != mounts.v1.end()) {
    host.memory_v1 = memory->second;
  }
  host.unified_has_memory = cgroup::lists(mounts.unified_controllers, "memory");
  return host;
}

std::string cgroup_filesystem(const fs::path &directory) {
  return cgroup::cgroup_filesystem(directory);
}

DriverChoice choose_driver(const DriverSettings &settings, const HostCgroups &host) {
  if (settings.forced) return {*settings.forced, "the config's driver"};
  if (settings.bus) return {DriverKind::systemd, "auto: the config names a bus"};
  if (host.systemd_runs) {
    return {DriverKind::systemd, "auto: systemd runs (/run/systemd/system exists)"};
  }
  if (settings.parent) {
    const std::string filesystem = cgroup_filesystem(*settings.parent);
    if (filesystem == "cgroup2") {
      return {DriverKind::cgroup2,
              "auto: no systemd; parent " + settings.parent->string() + " is on cgroup v2"};
    }
    if (filesystem == "cgroup1") {
      return {DriverKind::cgroup1, "auto: no systemd; parent " + settings.parent->string() +
                                       " is on a cgroup v1 hierarchy"};
    }
    throw std::runtime_error(
        "no driver: systemd does not run (no /run/systemd/system) and parent " +
        settings.parent->string() + " is on no cgroup filesystem");
  }
  if (host.unified && host.unified_has_memory) {
    return {DriverKind::cgroup2,
            "auto: no systemd; the memory controller is on cgroup v2 at " + host.unified->string()};
  }
  if (host.memory_v1) {
    return {DriverKind::cgroup1, "auto: no systemd; the memory controller is on cgroup v1 at " +
                                     host.memory_v1->string()};
  }
  throw std::runtime_error(
      "no driver: systemd does not run (no /run/systemd/system) and no cgroup hierarchy offers "
      "the memory controller");
}

}  // namespace sandbox_host::cap
