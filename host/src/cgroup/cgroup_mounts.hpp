// Where this host's cgroup hierarchies are mounted (/proc/self/mountinfo) and where this
// process sits in each (/proc/self/cgroup): the facts every cgroup user here starts from.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace sandbox_host::cgroup {

struct CgroupMounts {
  std::optional<std::filesystem::path> unified;  // the cgroup2 mount
  // Each cgroup v1 controller ("memory", "pids", ...) and the hierarchy it is mounted on.
  std::map<std::string, std::filesystem::path> v1;
  // The controllers cgroup v2 offers at its root (its cgroup.controllers).
  std::string unified_controllers;

  static CgroupMounts of_this_host();
};

// This process's cgroup in each hierarchy, from /proc/self/cgroup: "" for cgroup v2
// ("0::/path"), and each v1 controller by name ("memory" for "4:memory:/path").
std::map<std::string, std::string> own_cgroups();

// The cgroup filesystem directory is on: "cgroup2", "cgroup1" (a v1 hierarchy, whatever its
// controllers) or "" (none, or it cannot be examined).
std::string cgroup_filesystem(const std::filesystem::path &directory);

// Whether a space-separated list (cgroup.controllers) holds word.
bool lists(const std::string &words, const std::string &word);

}  // namespace sandbox_host::cgroup
