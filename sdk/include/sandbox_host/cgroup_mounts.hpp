// Where this host's cgroup hierarchies are mounted (/proc/self/mountinfo) and where this
// process sits in each (/proc/self/cgroup): the facts every cgroup user here, the host or a
// module, starts from.
#pragma once

#include <sys/statfs.h>
#include <sys/vfs.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::cgroup {

struct CgroupMounts {
  std::optional<std::filesystem::path> unified;  // the cgroup2 mount
  // Each cgroup v1 controller ("memory", "pids", ...) and the hierarchy it is mounted on.
  std::map<std::string, std::filesystem::path> v1;
  // The controllers cgroup v2 offers at its root (its cgroup.controllers).
  std::string unified_controllers;
  // Each mount point above and the cgroup it shows at its top (its mountinfo root): "/" on
  // a host; in a container without a cgroup namespace, the container's own cgroup, which
  // /proc/self/cgroup names in full.
  std::map<std::filesystem::path, std::string> shown;
  // Those of them mounted read-only, as container runtimes mount them.
  std::set<std::filesystem::path> read_only;

  static CgroupMounts of_this_host();
};

namespace detail {

// linux/magic.h's CGROUP_SUPER_MAGIC and CGROUP2_SUPER_MAGIC.
inline constexpr long kCgroupV1Magic = 0x27e0eb;
inline constexpr long kCgroupV2Magic = 0x63677270;

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
inline std::string unescape_mount_path(const std::string &escaped) {
  std::string path;
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] == '\\' && i + 3 < escaped.size()) {
      const std::string octal = escaped.substr(i + 1, 3);
      if (octal.find_first_not_of("01234567") == std::string::npos) {
        path += static_cast<char>(std::stoi(octal, nullptr, 8));
        i += 3;
        continue;
      }
    }
    path += escaped[i];
  }
  return path;
}

inline std::vector<std::string> split(const std::string &list, char separator) {
  std::vector<std::string> items;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, separator);) items.push_back(item);
  return items;
}

// The options of a v1 mount that are not controllers.
inline bool is_mount_option(const std::string &option) {
  return option == "rw" || option == "ro" || option.find('=') != std::string::npos ||
         option == "noprefix" || option == "clone_children" || option == "xattr" ||
         option == "cpuset_v2_mode" || option == "favordynmods";
}

}  // namespace detail

inline CgroupMounts CgroupMounts::of_this_host() {
  CgroupMounts mounts;
  std::ifstream mountinfo("/proc/self/mountinfo");
  // id parent major:minor root mount-point options [optional...] - type source super-options
  for (std::string line; std::getline(mountinfo, line);) {
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    std::size_t dash = 0;
    while (dash < words.size() && words[dash] != "-") ++dash;
    if (words.size() < 5 || dash + 3 >= words.size()) continue;
    const std::string &type = words[dash + 1], &super_options = words[dash + 3];
    const std::filesystem::path mount_point = detail::unescape_mount_path(words[4]);
    if (type == "cgroup2" && !mounts.unified) mounts.unified = mount_point;
    if (type != "cgroup2" && type != "cgroup") continue;
    // The last mount at a mount point is the one seen there.
    mounts.shown.insert_or_assign(mount_point, detail::unescape_mount_path(words[3]));
    const std::vector<std::string> options = detail::split(words[5], ',');
    if (std::find(options.begin(), options.end(), "ro") != options.end()) {
      mounts.read_only.insert(mount_point);
    } else {
      mounts.read_only.erase(mount_point);
    }
    if (type != "cgroup") continue;
    for (const std::string &option : detail::split(super_options, ',')) {
      if (!detail::is_mount_option(option)) mounts.v1.try_emplace(option, mount_point);
    }
  }
  if (mounts.unified) {
    std::ifstream controllers(*mounts.unified / "cgroup.controllers");
    std::getline(controllers, mounts.unified_controllers);
  }
  return mounts;
}

// This process's cgroup in each hierarchy, from /proc/self/cgroup: "" for cgroup v2
// ("0::/path"), and each v1 controller by name ("memory" for "4:memory:/path").
inline std::map<std::string, std::string> own_cgroups() {
  std::map<std::string, std::string> own;
  std::ifstream in("/proc/self/cgroup");
  // hierarchy-id:controller-list:path
  for (std::string line; std::getline(in, line);) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      own[""] = path;
      continue;
    }
    for (const std::string &controller : detail::split(controllers, ',')) own[controller] = path;
  }
  return own;
}

// The cgroup filesystem directory is on: "cgroup2", "cgroup1" (a v1 hierarchy, whatever its
// controllers) or "" (none, or it cannot be examined).
inline std::string cgroup_filesystem(const std::filesystem::path &directory) {
  struct statfs info {};
  if (::statfs(directory.c_str(), &info) != 0) return "";
  if (static_cast<long>(info.f_type) == detail::kCgroupV2Magic) return "cgroup2";
  if (static_cast<long>(info.f_type) == detail::kCgroupV1Magic) return "cgroup1";
  return "";
}

// Whether a space-separated list (cgroup.controllers) holds word.
inline bool lists(const std::string &words, const std::string &word) {
  std::istringstream in(words);
  for (std::string item; in >> item;) {
    if (item == word) return true;
  }
  return false;
}

}  // namespace sandbox_host::cgroup
