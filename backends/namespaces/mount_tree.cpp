#include "mount_tree.hpp"

#include "mount_calls.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/system_paths.hpp>

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

using backends::throw_errno;

constexpr const char *kStep = "mount tree";

// The base tmpfs, and where the host root hangs below it until the tree's root is pivoted
// into.
constexpr const char *kBase = "/tmp";
constexpr std::string_view kOldRoot = "/oldroot";

std::string resolved(const std::string &path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : std::string();
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

void leave_host_root(HostMounts host_mounts) {
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
  if (::mkdir(std::string(kOldRoot.substr(1)).c_str(), 0755) != 0) {
    throw_errno(kStep, "mkdir " + std::string(kOldRoot));
  }
  // The host root moves to /oldroot; the base tmpfs becomes /. Host paths stay reachable
  // below /oldroot (the tmpfs left the host's /tmp when it became the root).
  if (::syscall(SYS_pivot_root, kBase, "oldroot") != 0) throw_errno(kStep, "pivot_root");
  if (::chdir("/") != 0) throw_errno(kStep, "chdir /");
}

void mount_private_filesystems(const std::string &root) {
  // Process directories only: no /proc/sys, /proc/sysrq-trigger or other host-wide file,
  // which checks the writer's uid, not a capability, and uid 0 stays uid 0 here when the
  // launcher is root.
  mount_fs("proc", root + "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid");
  build_dev(root + "/dev");
  mount_fs("tmpfs", root + "/tmp", MS_NOSUID | MS_NODEV, "mode=1777");
}

void bound_private_filesystems(const std::string &root, const Limits &limits) {
  // tmpfs reads 0 as no bound.
  auto option = [](const char *name, std::uint64_t bound) {
    return std::string(name) + "=" + (bound == Limits::kUnlimited ? "0" : std::to_string(bound));
  };
  const std::string tmp =
      option("size", limits.tmp_size) + "," + option("nr_inodes", limits.tmp_inodes);
  if (::mount(nullptr, (root + "/tmp").c_str(), nullptr, MS_REMOUNT | MS_NOSUID | MS_NODEV,
              tmp.c_str()) != 0) {
    throw_errno(kStep, "bound /tmp to " + tmp);
  }
  const std::string shm =
      option("size", limits.shm_size) + "," + option("nr_inodes", limits.tmp_inodes);
  if (::mount(nullptr, (root + "/dev/shm").c_str(), nullptr,
              MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC, shm.c_str()) != 0) {
    throw_errno(kStep, "bound /dev/shm to " + shm);
  }
}

void build_plugin_root(const std::vector<MountEntry> &system) {
  const std::string root(kPluginRoot);
  if (::mkdir(root.c_str(), 0755) != 0) throw_errno(kStep, "mkdir " + root);
  if (::mount(root.c_str(), root.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    throw_errno(kStep, "bind the new root");
  }
  mount_private_filesystems(root);
  add_mounts(root, system);
}

void add_mounts(const std::string &root, const std::vector<MountEntry> &entries) {
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
    if (::lstat(source.c_str(), &st) != 0) {
      if (entry.kind == MountEntry::Kind::bind_read_only_if_present && errno == ENOENT) continue;
      throw_errno(kStep, "stat " + entry.source);
    }
    if (S_ISLNK(st.st_mode)) {
      throw backends::SetupError(kStep, entry.source +
                                            " is a symbolic link; a path a plugin could have "
                                            "replaced with one is never granted through it");
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

void finish_mount_tree(const std::string &root) {
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
