// Where a launch's cgroup goes on this host (plugin_cgroup.hpp's CgroupPlacement): read off
// the mount table and /proc/self/cgroup once per Host, so that probe can tell an operator
// without making anything.
#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include <sandbox_host/cgroup_control.hpp>
#include <sandbox_host/cgroup_mounts.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;

namespace {

const char *const kControllers[] = {"memory", "pids", "cpu"};

std::string user_words() {
  return "uid " + std::to_string(::geteuid());
}

// The directory of cgroup path ("/a/b", as /proc/self/cgroup names it) below a hierarchy's
// mount point, which shows the hierarchy from cgroup shown down ("/" on a host; a
// container's own cgroup where it has no cgroup namespace); nullopt when the path is not
// below what the mount shows.
std::optional<fs::path> below(const cgroup::CgroupMounts &mounts, const fs::path &mount,
                              const std::string &cgroup_path) {
  const auto it = mounts.shown.find(mount);
  const fs::path shown = it == mounts.shown.end() ? fs::path("/") : fs::path(it->second);
  const fs::path relative = fs::path(cgroup_path).lexically_relative(shown);
  if (relative.empty() || *relative.begin() == "..") return std::nullopt;
  return relative == "." ? mount : mount / relative;
}

std::string outside_words(const cgroup::CgroupMounts &mounts, const fs::path &mount,
                          const std::string &cgroup_path) {
  const auto it = mounts.shown.find(mount);
  return "cgroup " + cgroup_path + " is not below what " + mount.string() + " shows (" +
         (it == mounts.shown.end() ? std::string("/") : it->second) + ")";
}

bool holds_processes(const fs::path &dir) {
  try {
    return !cgroup::read_control(dir / "cgroup.procs").empty();
  } catch (const std::exception &) {
    return true;
  }
}

// The cgroup v2 directory's controllers this host can bound launches with, or why not.
std::vector<CgroupController> v2_controllers(const fs::path &dir, bool is_root) {
  std::vector<CgroupController> out;
  std::error_code ec;
  std::string offered, enabled;
  std::string unusable;
  if (!fs::is_directory(dir, ec)) {
    unusable = "cgroup v2 has no " + dir.string();
  } else {
    try {
      offered = cgroup::read_control(dir / "cgroup.controllers");
      enabled = cgroup::read_control(dir / "cgroup.subtree_control");
    } catch (const std::exception &e) {
      unusable = e.what();
    }
    if (unusable.empty() &&
        (::access(dir.c_str(), W_OK) != 0 || ::access((dir / "cgroup.procs").c_str(), W_OK) != 0)) {
      unusable = "cgroup v2's " + dir.string() + " is not delegated to " + user_words() +
                 " (it cannot write there)";
    }
  }
  for (const char *name : kControllers) {
    CgroupController controller{name, {}, unusable};
    if (unusable.empty()) {
      if (!cgroup::lists(offered, name)) {
        controller.why_not = "cgroup v2's " + dir.string() + " is not offered " + name +
                             " (its cgroup.controllers: " + (offered.empty() ? "none" : offered) +
                             ")";
      } else if (!cgroup::lists(enabled, name) && !is_root && holds_processes(dir)) {
        controller.why_not = "cgroup v2's " + dir.string() +
                             " holds processes, and cgroup v2 gives no child of such a cgroup a "
                             "controller (the no-internal-process rule)";
      } else {
        controller.parent = dir;
      }
    }
    out.push_back(std::move(controller));
  }
  return out;
}

std::vector<CgroupController> v1_controllers(const cgroup::CgroupMounts &mounts,
                                             const std::map<std::string, std::string> &own,
                                             const std::string &setting) {
  std::vector<CgroupController> out;
  for (const char *name : kControllers) {
    CgroupController controller{name, {}, {}};
    const auto mount = mounts.v1.find(name);
    const auto mine = own.find(name);
    std::error_code ec;
    if (mount == mounts.v1.end()) {
      controller.why_not = std::string("no cgroup v1 hierarchy has ") + name;
    } else if (setting == "auto" && mine == own.end()) {
      controller.why_not = std::string("/proc/self/cgroup names no cgroup of ") + name;
    } else {
      const std::string path = setting == "auto" ? mine->second : setting;
      const std::optional<fs::path> found = below(mounts, mount->second, path);
      const fs::path dir = found.value_or(fs::path());
      if (!found) {
        controller.why_not = outside_words(mounts, mount->second, path);
      } else if (!fs::is_directory(dir, ec)) {
        controller.why_not = "cgroup v1 has no " + dir.string();
      } else if (::access(dir.c_str(), W_OK) != 0) {
        controller.why_not = "cgroup v1's " + dir.string() + " is not delegated to " +
                             user_words() + " (it cannot make cgroups there)";
      } else {
        controller.parent = dir;
      }
    }
    out.push_back(std::move(controller));
  }
  return out;
}

bool any_usable(const std::vector<CgroupController> &controllers) {
  for (const auto &controller : controllers) {
    if (!controller.parent.empty()) return true;
  }
  return false;
}

// "sandbox-host-git.1234.7" for the 7th launch of plugin git by pid 1234: the prefix marks
// it as ours (PluginCgroup::sweep removes no other), the rest is what a cgroup's name may
// hold of the plugin's.
std::string leaf_name(const std::string &name) {
  std::string leaf(kCgroupPrefix);
  for (char c : name.substr(0, 64)) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    leaf += plain ? c : '_';
  }
  if (leaf == kCgroupPrefix) leaf += "plugin";
  static std::atomic<unsigned long> launches{0};
  return leaf + "." + std::to_string(::getpid()) + "." + std::to_string(++launches);
}

void make_cgroup(const fs::path &dir) {
  if (::mkdir(dir.c_str(), 0755) != 0) {
    throw std::runtime_error("cannot make cgroup " + dir.string() + ": " +
                             std::generic_category().message(errno));
  }
}

}  // namespace

CgroupPlacement CgroupPlacement::find(const std::string &setting) {
  CgroupPlacement placement;
  if (setting == "off") {
    for (const char *name : kControllers) {
      placement.controllers_.push_back({name, {}, "[limits] cgroup is \"off\""});
    }
    placement.description_ = "none: [limits] cgroup is \"off\"";
    placement.hint_ = "set [limits] cgroup = \"auto\" or to a cgroup delegated to sandbox-host";
    return placement;
  }
  const cgroup::CgroupMounts mounts = cgroup::CgroupMounts::of_this_host();
  const std::map<std::string, std::string> own = cgroup::own_cgroups();
  std::vector<CgroupController> v2;
  if (mounts.unified && (setting != "auto" || own.contains(""))) {
    const std::string path = setting == "auto" ? own.at("") : setting;
    if (const std::optional<fs::path> dir = below(mounts, *mounts.unified, path)) {
      v2 = v2_controllers(*dir, path == "/");
    } else {
      for (const char *name : kControllers) {
        v2.push_back({name, {}, outside_words(mounts, *mounts.unified, path)});
      }
    }
  }
  std::vector<CgroupController> v1 = v1_controllers(mounts, own, setting);
  if (any_usable(v2)) {
    placement.version_ = Version::v2;
    placement.controllers_ = std::move(v2);
  } else if (any_usable(v1)) {
    placement.version_ = Version::v1;
    placement.controllers_ = std::move(v1);
  } else {
    // The reasons of the version the host runs its controllers on.
    const bool v1_host = !mounts.v1.empty();
    placement.controllers_ = v1_host || v2.empty() ? std::move(v1) : std::move(v2);
  }
  std::string used, missing;
  for (const auto &controller : placement.controllers_) {
    if (!controller.parent.empty()) {
      used += (used.empty() ? "" : ", ") + controller.name + " under " + controller.parent.string();
    } else {
      missing += (missing.empty() ? "" : "; ") + controller.why_not;
    }
  }
  const std::string where = setting == "auto" ? "sandbox-host's own cgroup" : setting;
  switch (placement.version_) {
    case Version::v2:
      placement.description_ = "cgroup v2 (" + used + ")";
      break;
    case Version::v1:
      placement.description_ = "cgroup v1 (" + used + ")";
      break;
    case Version::none:
      placement.description_ = "none: " + missing;
      break;
  }
  if (!missing.empty()) {
    if (placement.version_ != Version::none) placement.description_ += "; not: " + missing;
    placement.hint_ =
        "make a cgroup for " + user_words() +
        " (cgroup v2: one that holds no process, with the controllers enabled above it, as "
        "systemd's Delegate=yes gives a service; cgroup v1: a directory it owns in each "
        "hierarchy) and name it in [limits] cgroup; it is " +
        where + " now" +
        (!mounts.read_only.empty()
             ? "; in a container, whose runtime mounts the cgroups read-only, the container's "
               "own limits bound its plugins together"
             : "");
  }
  return placement;
}

bool CgroupPlacement::bounds(const std::string &name) const {
  for (const auto &controller : controllers_) {
    if (controller.name == name) return !controller.parent.empty();
  }
  return false;
}

std::shared_ptr<PluginCgroup> CgroupPlacement::make(const std::string &name,
                                                    std::shared_ptr<AuditSink> audit) const {
  if (version_ == Version::none) throw std::logic_error("CgroupPlacement::make without cgroups");
  const std::string leaf = leaf_name(name);
  std::vector<std::pair<std::string, fs::path>> dirs;
  std::vector<fs::path> parents, made;
  for (const auto &controller : controllers_) {
    if (controller.parent.empty()) continue;
    const fs::path dir = controller.parent / leaf;
    if (std::find(parents.begin(), parents.end(), controller.parent) == parents.end()) {
      parents.push_back(controller.parent);
      PluginCgroup::sweep(controller.parent);
    }
    // cgroup v2 gives a child the controllers its parent enables for its children.
    if (version_ == Version::v2 &&
        !cgroup::lists(cgroup::read_control(controller.parent / "cgroup.subtree_control"),
                       controller.name)) {
      cgroup::write_control(controller.parent / "cgroup.subtree_control", "+" + controller.name);
    }
    dirs.emplace_back(controller.name, dir);
  }
  try {
    for (const auto &[controller, dir] : dirs) {
      if (std::find(made.begin(), made.end(), dir) != made.end()) continue;
      make_cgroup(dir);
      made.push_back(dir);
    }
  } catch (...) {
    for (const auto &dir : made) ::rmdir(dir.c_str());
    throw;
  }
  return std::make_shared<PluginCgroup>(version_, std::move(dirs), std::move(audit));
}

}  // namespace sandbox_host
