#include "policy_view_mounts.hpp"

#include "mount_calls.hpp"

#include <sandbox_host/backends/setup_error.hpp>

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>
#include <stdexcept>

namespace sandbox_host::namespaces {
namespace {

using backends::SetupError;
using backends::throw_errno;

constexpr const char *kStep = "view";

// What the sandbox mounts of its own over the host's root, before any rule but one on /.
constexpr std::array<std::string_view, 3> kPrivateDirs{"/dev", "/proc", "/tmp"};

// The empty, unreadable file bound over every file the view hides, in the base tmpfs.
constexpr const char *kHiddenFile = "/hidden";

// What a hidden path shows: nothing to read, write, run or find a device or setuid bit in.
constexpr uint64_t kHiddenAttributes =
    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;

// Whether path is dir or lies below it.
bool covers(std::string_view path, std::string_view dir) {
  if (dir == "/") return true;
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

std::string describe(const PathRule &rule) {
  return "rule " + std::string(to_string(rule.access)) + " " + rule.path;
}

// Whether the host has path as a directory (a file otherwise); nullopt where it has nothing.
std::optional<bool> host_directory(std::string_view path) {
  if (std::find(kPrivateDirs.begin(), kPrivateDirs.end(), path) != kPrivateDirs.end()) {
    return true;  // made by the sandbox, whatever the host has there
  }
  struct stat st {};
  const std::string source = host_view(std::string(path));
  if (::stat(source.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_errno(kStep, "stat " + std::string(path));
  }
  return S_ISDIR(st.st_mode);
}

class ViewTree {
 public:
  ViewTree(const std::vector<PathRule> &view, const std::vector<MountEntry> &grants)
      : rules_(view) {
    std::sort(rules_.begin(), rules_.end(),
              [](const PathRule &a, const PathRule &b) { return a.path < b.path; });
    for (auto dir : kPrivateDirs) mounted_later_.emplace_back(dir);
    for (const auto &rule : rules_) {
      if (rule.path != "/") mounted_later_.push_back(rule.path);
    }
    for (const auto &entry : grants) {
      if (entry.kind != MountEntry::Kind::symlink) mounted_later_.push_back(entry.target);
    }
  }

  void build() {
    // The base is the host's root, read-only, unless a rule names / itself.
    auto rule = rules_.begin();
    if (rule != rules_.end() && rule->path == "/") {
      apply(*rule, describe(*rule));
      ++rule;
    } else {
      apply({"/", PathAccess::read}, "the host's root");
    }
    mount_private_filesystems(root_);
    for (; rule != rules_.end(); ++rule) apply(*rule, describe(*rule));
  }

 private:
  // name: what a failure names, the rule.
  void apply(const PathRule &rule, const std::string &name) {
    const std::string target = root_ + (rule.path == "/" ? "" : rule.path);
    try {
      const std::optional<bool> directory = host_directory(rule.path);
      if (!directory) throw SetupError("mount tree", rule.path + " is not there on the host");
      // Below the private /tmp the host's path has no mount point yet.
      make_mount_point(target, *directory);
      if (rule.access == PathAccess::none) {
        *directory ? hide_directory(rule.path, target) : hide_file(target);
        return;
      }
      uint64_t attributes = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
      if (rule.access == PathAccess::read) attributes |= MOUNT_ATTR_RDONLY;
      bind(host_view(rule.path), target, attributes);
    } catch (const SetupError &e) {
      throw SetupError(kStep, name + ": " + e.what());
    }
  }

  // An empty tmpfs, holding only the mount points of what is mounted below it later, then
  // read-only: its listing shows the paths re-allowed inside it and nothing else.
  void hide_directory(const std::string &path, const std::string &target) {
    mount_fs("tmpfs", target, MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755");
    for (const auto &later : mounted_later_) {
      if (later == path || !covers(later, path) || mounted_between(path, later)) continue;
      const std::optional<bool> directory = host_directory(later);
      if (directory) make_mount_point(root_ + later, *directory);
    }
    set_attributes(target, kHiddenAttributes);
  }

  void hide_file(const std::string &target) {
    if (!hidden_file_made_) {
      const int fd = ::open(kHiddenFile, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0);
      if (fd < 0) throw_errno("mount tree", std::string("create ") + kHiddenFile);
      ::close(fd);
      hidden_file_made_ = true;
    }
    bind(kHiddenFile, target, kHiddenAttributes);
  }

  // Whether a rule or a private directory lies strictly between outer and inner: its own
  // mount then holds inner's mount point (the host's, or one made where it is missing).
  bool mounted_between(const std::string &outer, const std::string &inner) const {
    auto between = [&](std::string_view path) {
      return path != outer && path != inner && covers(path, outer) && covers(inner, path);
    };
    return std::any_of(kPrivateDirs.begin(), kPrivateDirs.end(), between) ||
           std::any_of(rules_.begin(), rules_.end(),
                       [&](const PathRule &rule) { return between(rule.path); });
  }

  const std::string root_{kViewRoot};
  std::vector<PathRule> rules_;  // sorted by path: parents first
  // Every path mounted after a rule: the private directories, the rules, the grants.
  std::vector<std::string> mounted_later_;
  bool hidden_file_made_ = false;
};

}  // namespace

void check_view(const std::vector<PathRule> &view) {
  for (const auto &rule : view) {
    if (covers(rule.path, "/proc") || covers(rule.path, "/dev")) {
      throw std::invalid_argument("view " + describe(rule) +
                                  ": the sandbox builds its own /proc and /dev");
    }
    if (rule.path == "/" && rule.access == PathAccess::write) {
      throw std::invalid_argument("view " + describe(rule) +
                                  ": the sandbox keeps / read-only; make the directories the "
                                  "command writes writable instead");
    }
  }
}

void build_view_root(const std::vector<PathRule> &view, const std::vector<MountEntry> &grants) {
  ViewTree(view, grants).build();
}

std::string command_directory(const Spec &spec, const std::string &cwd) {
  if (cwd.empty()) return spec.tmp_dir;
  // The Spec's own grants show what they hold, whatever the view says.
  if (covers(cwd, spec.tmp_dir) || covers(cwd, spec.socket_dir) ||
      std::any_of(spec.read_paths.begin(), spec.read_paths.end(),
                  [&](const std::string &path) { return covers(cwd, path); })) {
    return cwd;
  }
  // Otherwise the longest path deciding it: the sandbox's own directories hide the host's,
  // and a rule on the same path is mounted over them.
  std::string_view decided;
  bool shown = true;
  for (auto dir : kPrivateDirs) {
    if (covers(cwd, dir)) {
      decided = dir;
      shown = false;
    }
  }
  for (const auto &rule : spec.view) {
    if (covers(cwd, rule.path) && rule.path.size() >= decided.size()) {
      decided = rule.path;
      shown = rule.access != PathAccess::none;
    }
  }
  return shown ? cwd : spec.tmp_dir;
}

}  // namespace sandbox_host::namespaces
