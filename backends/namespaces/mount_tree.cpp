#include "mount_tree.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/backends/system_paths.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace sandbox_host::namespaces {
namespace {

using backends::kDevices;
using backends::kEtcEntries;
using backends::kSystemDirs;
using backends::SetupError;
using backends::throw_errno;

constexpr const char *kStep = "mount tree";

// The base tmpfs and where the host root and the new root hang below it until pivot_root.
constexpr const char *kBase = "/tmp";
constexpr std::string_view kOldRoot = "/oldroot";
constexpr std::string_view kNewRoot = "/newroot";

std::string resolved(const std::string &path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : std::string();
}

void make_dirs(const std::string &path) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      throw_errno(kStep, "mkdir " + prefix);
    }
  }
}

// An empty file or directory to mount over, unless one is there already.
void make_mount_point(const std::string &path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return;
  make_dirs(path.substr(0, path.rfind('/')));
  if (directory) {
    if (::mkdir(path.c_str(), 0755) != 0) throw_errno(kStep, "mkdir " + path);
    return;
  }
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_errno(kStep, "create " + path);
  ::close(fd);
}

// An O_PATH descriptor of path, refusing a symlink in any of its components: the paths
// were checked symlink-free on the host, and one swapped for a symlink since then must
// fail the setup rather than redirect a mount.
int open_without_symlinks(const std::string &path) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0) throw_errno(kStep, "open " + path);
  return fd;
}

// Clones the tree at source, sets its attributes on every mount of the clone while it is
// still detached, then attaches it at target: there is no moment at which the sandbox's
// copy is writable or honours setuid bits.
void bind(const std::string &source, const std::string &target, uint64_t attributes) {
  const UniqueFd source_fd(open_without_symlinks(source));
  const int tree_fd = static_cast<int>(::open_tree(
      source_fd.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
  if (tree_fd < 0) throw_errno(kStep, "clone " + source);
  const UniqueFd tree(tree_fd);
  mount_attr attr{};
  attr.attr_set = attributes;
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
    throw_errno(kStep, "set attributes of " + source);
  }
  const UniqueFd target_fd(open_without_symlinks(target));
  if (::move_mount(tree.get(), "", target_fd.get(), "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    throw_errno(kStep, "attach " + source + " at " + target);
  }
}

void set_attributes(const std::string &path, uint64_t attributes) {
  mount_attr attr{};
  attr.attr_set = attributes;
  if (::mount_setattr(AT_FDCWD, path.c_str(), 0, &attr, sizeof attr) != 0) {
    throw_errno(kStep, "set attributes of " + path);
  }
}

void mount_fs(const char *type, const std::string &target, unsigned long flags,
              const char *options) {
  make_mount_point(target, true);
  if (::mount(type, target.c_str(), type, flags, options) != 0) {
    throw_errno(kStep, std::string("mount ") + type + " at " + target);
  }
}

void build_dev(const std::string &dev) {
  mount_fs("tmpfs", dev, MS_NOSUID | MS_NOEXEC, "mode=0755");
  const std::string host_dev = std::string(kOldRoot) + "/dev/";
  for (const char *name : kDevices) {
    make_mount_point(dev + "/" + name, false);
    bind(host_dev + name, dev + "/" + name, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
  }
  for (auto [link, target] : {std::pair{"fd", "/proc/self/fd"},
                              {"stdin", "/proc/self/fd/0"},
                              {"stdout", "/proc/self/fd/1"},
                              {"stderr", "/proc/self/fd/2"}}) {
    if (::symlink(target, (dev + "/" + link).c_str()) != 0) {
      throw_errno(kStep, "symlink " + dev + "/" + link);
    }
  }
  mount_fs("tmpfs", dev + "/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777");
  set_attributes(dev, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
}

}  // namespace

std::vector<MountEntry> plan_system_mounts() {
  std::vector<MountEntry> plan;
  for (const char *dir : kSystemDirs) {
    struct stat st {};
    if (::lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      std::array<char, PATH_MAX> text{};
      ssize_t n = ::readlink(dir, text.data(), text.size() - 1);
      if (n > 0) plan.push_back({MountEntry::Kind::symlink, std::string(text.data(), n), dir});
    } else if (S_ISDIR(st.st_mode)) {
      plan.push_back({MountEntry::Kind::bind_read_only, dir, dir});
    }
  }
  for (const char *entry : kEtcEntries) {
    std::string source = resolved(entry);
    if (!source.empty()) plan.push_back({MountEntry::Kind::bind_read_only, source, entry});
  }
  return plan;
}

std::vector<MountEntry> plan_spec_mounts(const Spec &spec) {
  std::vector<MountEntry> plan;
  for (const auto &path : spec.read_paths) {
    plan.push_back({MountEntry::Kind::bind_read_only, path, path});
  }
  plan.push_back({MountEntry::Kind::bind_read_write, spec.socket_dir, spec.socket_dir});
  plan.push_back({MountEntry::Kind::bind_read_write, spec.tmp_dir, spec.tmp_dir});
  plan.push_back({MountEntry::Kind::bind_read_only, spec.binary_path, spec.binary_path});
  if (spec.network == Network::proxied) {
    // The init connects to the proxy's socket by its path in here. The egress directory's
    // CA bundle is for the plugin's clients, where the proxy has written one.
    plan.push_back({MountEntry::Kind::bind_read_only, spec.proxy_socket, spec.proxy_socket});
    if (!spec.egress_dir.empty()) {
      plan.push_back(
          {MountEntry::Kind::bind_read_only_if_present, spec.egress_dir, spec.egress_dir});
    }
  }
  return plan;
}

void begin_mount_tree(const std::vector<MountEntry> &system, HostMounts host_mounts) {
  // Nothing done here propagates back to the host's mounts; a prepared sandbox still
  // receives the host's new mounts below the old root until its launch is mounted.
  const unsigned long propagation = host_mounts == HostMounts::follow ? MS_SLAVE : MS_PRIVATE;
  if (::mount(nullptr, "/", nullptr, MS_REC | propagation, nullptr) != 0) {
    throw_errno(kStep, "stop propagation to the host");
  }
  if (::mount("tmpfs", kBase, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    throw_errno(kStep, "mount the base tmpfs");
  }
  if (::chdir(kBase) != 0) throw_errno(kStep, "chdir to the base tmpfs");
  for (auto dir : {kOldRoot, kNewRoot}) {
    if (::mkdir(std::string(dir.substr(1)).c_str(), 0755) != 0) {
      throw_errno(kStep, "mkdir " + std::string(dir));
    }
  }
  if (::mount("newroot", "newroot", nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    throw_errno(kStep, "bind the new root");
  }
  // The host root moves to /oldroot; the base tmpfs becomes /. Host paths stay reachable
  // below /oldroot (the tmpfs left the host's /tmp when it became the root).
  if (::syscall(SYS_pivot_root, kBase, "oldroot") != 0) throw_errno(kStep, "pivot_root");
  if (::chdir("/") != 0) throw_errno(kStep, "chdir /");

  const std::string root(kNewRoot);
  // Process directories only: no /proc/sys, /proc/sysrq-trigger or other host-wide file,
  // which checks the writer's uid, not a capability, and uid 0 stays uid 0 here when the
  // launcher is root.
  mount_fs("proc", root + "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid");
  build_dev(root + "/dev");
  mount_fs("tmpfs", root + "/tmp", MS_NOSUID | MS_NODEV, "mode=1777");
  add_mounts(system);
}

void add_mounts(const std::vector<MountEntry> &entries) {
  const std::string root(kNewRoot);
  const std::string old_root(kOldRoot);
  for (const auto &entry : entries) {
    const std::string target = root + entry.target;
    if (entry.kind == MountEntry::Kind::symlink) {
      make_dirs(target.substr(0, target.rfind('/')));
      if (::symlink(entry.source.c_str(), target.c_str()) != 0) {
        throw_errno(kStep, "symlink " + entry.target);
      }
      continue;
    }
    const std::string source = old_root + entry.source;
    struct stat st {};
    if (::stat(source.c_str(), &st) != 0) {
      if (entry.kind == MountEntry::Kind::bind_read_only_if_present && errno == ENOENT) continue;
      throw_errno(kStep, "stat " + entry.source);
    }
    make_mount_point(target, S_ISDIR(st.st_mode));
    uint64_t attributes = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    if (entry.kind != MountEntry::Kind::bind_read_write) attributes |= MOUNT_ATTR_RDONLY;
    bind(source, target, attributes);
  }
}

std::string host_view(const std::string &path) {
  return std::string(kOldRoot) + path;
}

void finish_mount_tree() {
  const std::string root(kNewRoot);
  // From here on, not even a mount the host makes below a granted path reaches inside.
  if (::mount(nullptr, root.c_str(), nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    throw_errno(kStep, "make the new root private");
  }
  // Leave the host's root behind for good, then make the new root the root.
  if (::umount2(kOldRoot.data(), MNT_DETACH) != 0) throw_errno(kStep, "detach the host root");
  if (::chdir(root.c_str()) != 0) throw_errno(kStep, "chdir to the new root");
  if (::syscall(SYS_pivot_root, ".", ".") != 0) throw_errno(kStep, "pivot_root to the new root");
  if (::umount2(".", MNT_DETACH) != 0) throw_errno(kStep, "detach the base tmpfs");
  if (::chdir("/") != 0) throw_errno(kStep, "chdir /");
  set_attributes("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

}  // namespace sandbox_host::namespaces
