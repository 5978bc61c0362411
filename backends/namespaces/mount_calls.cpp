#include "mount_calls.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sandbox_host::namespaces {
namespace {

using backends::throw_errno;

constexpr const char *kStep = "mount tree";

// An O_PATH descriptor of path, refusing a symlink in any of its components: the paths
// were checked symlink-free on the host, and one swapped for a symlink since then must
// fail the setup rather than redirect a mount.
int open_without_symlinks(const std::string &path) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
  if (fd < 0 && errno == ELOOP) {
    throw backends::SetupError(kStep, "open " + path +
                                          ": it passes through a symbolic link; a path a plugin "
                                          "could have replaced with one is never granted "
                                          "through it");
  }
  if (fd < 0) throw_errno(kStep, "open " + path);
  return fd;
}

}  // namespace

void make_dirs(const std::string &path) {
  for (size_t slash = 1; slash != std::string::npos;) {
    slash = path.find('/', slash + 1);
    std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      throw_errno(kStep, "mkdir " + prefix);
    }
  }
}

void make_mount_point(const std::string &path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return;
  const std::string parent = path.substr(0, path.rfind('/'));
  if (!parent.empty()) make_dirs(parent);
  if (directory) {
    if (::mkdir(path.c_str(), 0755) != 0) throw_errno(kStep, "mkdir " + path);
    return;
  }
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw_errno(kStep, "create " + path);
  ::close(fd);
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

}  // namespace sandbox_host::namespaces
