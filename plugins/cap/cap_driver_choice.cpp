// The driver choice of cap-slot and scope (cap_driver_choice.hpp): reads the host's mount
// table and /run/systemd/system, never a bus, so probe can ask it cheaply.
#include "cap_driver_choice.hpp"

#include <sys/statfs.h>
#include <sys/vfs.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace sandbox_host::cap {
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

bool has_word(const std::string &list, char separator, const std::string &word) {
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, separator);) {
    if (item == word) return true;
  }
  return false;
}

}  // namespace

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
    if (type == "cgroup2" && !host.unified) host.unified = mount_point;
    if (type == "cgroup" && !host.memory_v1 && has_word(super_options, ',', "memory")) {
      host.memory_v1 = mount_point;
    }
  }
  if (host.unified) {
    std::ifstream controllers(*host.unified / "cgroup.controllers");
    std::string list;
    std::getline(controllers, list);
    host.unified_has_memory = has_word(list, ' ', "memory");
  }
  return host;
}

std::string cgroup_filesystem(const fs::path &directory) {
  struct statfs info {};
  if (::statfs(directory.c_str(), &info) != 0) return "";
  if (static_cast<long>(info.f_type) == kCgroupV2Magic) return "cgroup2";
  if (static_cast<long>(info.f_type) == kCgroupV1Magic) return "cgroup1";
  return "";
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
