// The host's cgroup hierarchies (cgroup_mounts.hpp).
#include "cgroup_mounts.hpp"

#include <sys/statfs.h>
#include <sys/vfs.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace sandbox_host::cgroup {
namespace fs = std::filesystem;

namespace {

// linux/magic.h's CGROUP_SUPER_MAGIC and CGROUP2_SUPER_MAGIC.
constexpr long kCgroupV1Magic = 0x27e0eb;
constexpr long kCgroupV2Magic = 0x63677270;

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string unescape_mount_path(const std::string &escaped) {
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

std::vector<std::string> split(const std::string &list, char separator) {
  std::vector<std::string> items;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, separator);) items.push_back(item);
  return items;
}

// The options of a v1 mount that are not controllers.
bool is_mount_option(const std::string &option) {
  return option == "rw" || option == "ro" || option.find('=') != std::string::npos ||
         option == "noprefix" || option == "clone_children" || option == "xattr" ||
         option == "cpuset_v2_mode" || option == "favordynmods";
}

}  // namespace

CgroupMounts CgroupMounts::of_this_host() {
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
    const fs::path mount_point = unescape_mount_path(words[4]);
    if (type == "cgroup2" && !mounts.unified) mounts.unified = mount_point;
    if (type != "cgroup") continue;
    for (const std::string &option : split(super_options, ',')) {
      if (!is_mount_option(option)) mounts.v1.try_emplace(option, mount_point);
    }
  }
  if (mounts.unified) {
    std::ifstream controllers(*mounts.unified / "cgroup.controllers");
    std::getline(controllers, mounts.unified_controllers);
  }
  return mounts;
}

std::map<std::string, std::string> own_cgroups() {
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
    for (const std::string &controller : split(controllers, ',')) own[controller] = path;
  }
  return own;
}

std::string cgroup_filesystem(const fs::path &directory) {
  struct statfs info {};
  if (::statfs(directory.c_str(), &info) != 0) return "";
  if (static_cast<long>(info.f_type) == kCgroupV2Magic) return "cgroup2";
  if (static_cast<long>(info.f_type) == kCgroupV1Magic) return "cgroup1";
  return "";
}

bool lists(const std::string &words, const std::string &word) {
  std::istringstream in(words);
  for (std::string item; in >> item;) {
    if (item == word) return true;
  }
  return false;
}

}  // namespace sandbox_host::cgroup
