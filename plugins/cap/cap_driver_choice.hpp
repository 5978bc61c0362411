// Which way cap-slot and scope cap memory on this host (their `driver`): systemd over
// D-Bus, cgroup v2 or cgroup v1, chosen when the op module is created, from the facts of
// the host the choice rests on.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::cap {

enum class DriverKind { systemd, cgroup2, cgroup1 };

std::string_view to_string(DriverKind kind);
// The kind a `driver` setting names; nullopt for "auto". Throws std::invalid_argument for
// any other word, naming the words it takes.
std::optional<DriverKind> driver_named(std::string_view setting);

// What the operator wrote in [ops.cap-slot] / [ops.scope] that the choice depends on.
struct DriverSettings {
  std::optional<DriverKind> forced;             // nullopt: auto
  std::optional<std::string> bus;               // a D-Bus address, "system" or "user"
  std::optional<std::filesystem::path> parent;  // for the cgroup drivers: a cgroup directory
};

// Where this host's cgroup hierarchies are (from /proc/self/mountinfo) and whether systemd
// runs (/run/systemd/system is a directory, as sd_booted() tells it).
struct HostCgroups {
  bool systemd_runs = false;
  std::optional<std::filesystem::path> unified;    // the cgroup2 mount
  std::optional<std::filesystem::path> memory_v1;  // the cgroup v1 hierarchy with memory
  bool unified_has_memory = false;                 // "memory" in its cgroup.controllers

  static HostCgroups of_this_host();
};

struct DriverChoice {
  DriverKind kind;
  std::string why;  // for people: "systemd runs (/run/systemd/system exists)"
};

// The driver for these settings on this host: the forced one, else the first that fits of
// systemd (a bus is configured, or systemd runs), the filesystem the parent is on, and the
// hierarchy that offers the memory controller. Throws std::runtime_error, saying what it
// looked at, when auto finds none.
DriverChoice choose_driver(const DriverSettings &settings, const HostCgroups &host);

// The cgroup filesystem directory is on: "cgroup2", "cgroup1" (a v1 hierarchy, whatever its
// controllers) or "" (none, or it cannot be examined).
std::string cgroup_filesystem(const std::filesystem::path &directory);

}  // namespace sandbox_host::cap
