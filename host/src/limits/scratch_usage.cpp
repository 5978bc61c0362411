#include "scratch_usage.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace sandbox_host {
namespace fs = std::filesystem;
namespace {

// Each inode counted once, whatever names it has.
using InodeSet = std::set<std::pair<dev_t, ino_t>>;

// What an inode may hold on the disk: its allocated blocks, and for a regular file at least
// its size, so that a sparse file is counted as full before a write through a shared mapping
// (which raises no inotify event) fills it.
std::uint64_t held(const struct stat &st) {
  const auto allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
  return S_ISREG(st.st_mode) ? std::max(allocated, static_cast<std::uint64_t>(st.st_size))
                             : allocated;
}

// The directory at relative below root, reached without a symlink, a magic link or a mount
// on the way: the plugin owns everything below the root and may swap a directory for a
// symlink to anywhere between one count and the next.
int open_beneath(int root, const std::string &relative) {
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return static_cast<int>(::syscall(SYS_openat2, root, relative.c_str(), &how, sizeof how));
}

// A line of /proc/<pid>/maps for a file with no name left:
// "7f00-7f10 rw-s 00000000 fd:01 1234 /tmp/x (deleted)".
struct DeletedMapping {
  std::string range;  // "7f00-7f10", its name in map_files
  std::uint64_t size = 0;
  dev_t device = 0;
  ino_t inode = 0;
};

DeletedMapping parse_deleted_mapping(const std::string &line) {
  DeletedMapping mapping;
  std::istringstream fields(line);
  std::string perms, offset, device;
  fields >> mapping.range >> perms >> offset >> device >> mapping.inode;
  const auto dash = mapping.range.find('-');
  const auto colon = device.find(':');
  if (!fields || dash == std::string::npos || colon == std::string::npos) return {};
  try {
    mapping.size = std::stoull(mapping.range.substr(dash + 1), nullptr, 16) -
                   std::stoull(mapping.range.substr(0, dash), nullptr, 16);
    mapping.device = makedev(std::stoul(device.substr(0, colon), nullptr, 16),
                             std::stoul(device.substr(colon + 1), nullptr, 16));
  } catch (const std::exception &) {
    return {};
  }
  return mapping;
}

// The descriptors waiting in a unix socket's receive queue (for a listening one, in its
// queued connections'), as the kernel shows them in the socket's fdinfo ("scm_fds: 2");
// 0 for any other socket.
std::uint64_t descriptors_in_queue(const std::string &fdinfo) {
  std::ifstream info(fdinfo);
  for (std::string line; std::getline(info, line);) {
    if (!line.starts_with("scm_fds:")) continue;
    try {
      return std::stoull(line.substr(std::strlen("scm_fds:")));
    } catch (const std::exception &) {
      return 0;
    }
  }
  return 0;
}

struct DirCloser {
  void operator()(DIR *dir) const noexcept { ::closedir(dir); }
};

}  // namespace

ScratchCounter::ScratchCounter(const std::vector<fs::path> &roots) {
  for (const fs::path &path : roots) {
    UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0) roots_.push_back({path, std::move(fd), st.st_dev});
  }
}

ScratchUsage ScratchCounter::count(std::uint64_t max_bytes, std::uint64_t max_files,
                                   const std::function<void(int dir_fd)> &each_dir,
                                   const std::vector<pid_t> &processes) const {
  ScratchUsage usage;
  InodeSet seen;
  auto add = [&](const struct stat &st) {
    if (seen.emplace(st.st_dev, st.st_ino).second) usage.bytes += held(st);
    usage.over = usage.bytes > max_bytes || usage.files > max_files;
  };
  for (const Root &root : roots_) {
    std::deque<std::string> pending{"."};
    while (!pending.empty() && !usage.over) {
      const std::string relative = std::move(pending.front());
      pending.pop_front();
      UniqueFd dir_fd(open_beneath(root.fd.get(), relative));
      struct stat st {};
      if (!dir_fd || ::fstat(dir_fd.get(), &st) != 0) {
        // A mode that shuts the host out, or a path too long to open, is the plugin's doing,
        // and hides what the directory holds. Anything else is a change since its parent was
        // read (removed, replaced by a symlink) or the host's own trouble (no descriptor
        // left), which the next count meets again.
        if (errno == EACCES || errno == EPERM || errno == ENAMETOOLONG) {
          usage.unreadable =
              (root.path / relative).lexically_normal().string() + ": " + std::strerror(errno);
          return usage;
        }
        continue;
      }
      // Already counted: TmpDir inside SocketDir, or a directory reached by a rename since.
      if (seen.count({st.st_dev, st.st_ino}) != 0) continue;
      add(st);
      each_dir(dir_fd.get());
      std::unique_ptr<DIR, DirCloser> listing(::fdopendir(::dup(dir_fd.get())));
      if (!listing) continue;  // the host's own trouble, as above
      while (const dirent *entry = ::readdir(listing.get())) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        ++usage.files;
        struct stat child {};
        // Removed since it was listed.
        if (::fstatat(dir_fd.get(), name.c_str(), &child, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(child.st_mode)) {
          if (child.st_dev == root.device) pending.push_back(relative + "/" + name);
        } else {
          add(child);
        }
        if (usage.over) return usage;
      }
    }
  }
  std::set<dev_t> devices;
  for (const Root &root : roots_) devices.insert(root.device);
  auto add_unlinked = [&](const struct stat &st) {
    const std::uint64_t before = usage.bytes;
    add(st);
    usage.unlinked_bytes += usage.bytes - before;
  };
  std::set<ino_t> sockets;
  for (pid_t pid : processes) {
    // A process that is gone, or that made itself undumpable where the host may not look
    // (a plugin under Landlock as the same user): its descriptors are not counted.
    const std::string proc = "/proc/" + std::to_string(pid);
    UniqueFd fds(::open((proc + "/fd").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fds) continue;
    std::unique_ptr<DIR, DirCloser> listing(::fdopendir(::dup(fds.get())));
    if (!listing) continue;
    while (const dirent *entry = ::readdir(listing.get())) {
      struct stat st {};
      if (entry->d_name[0] == '.' || ::fstatat(fds.get(), entry->d_name, &st, 0) != 0) continue;
      if (S_ISSOCK(st.st_mode) && sockets.insert(st.st_ino).second) {
        usage.in_flight += descriptors_in_queue(proc + "/fdinfo/" + entry->d_name);
      }
      if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || devices.count(st.st_dev) == 0) continue;
      add_unlinked(st);
      if (usage.over) return usage;
    }
  }
  // Files with no name left that no descriptor holds, kept by a shared mapping: the whole
  // file where the host may open it through map_files (root), else what is mapped of it.
  std::map<std::pair<dev_t, ino_t>, std::uint64_t> mapped;
  for (pid_t pid : processes) {
    const std::string dir = "/proc/" + std::to_string(pid);
    std::ifstream maps(dir + "/maps");
    for (std::string line; std::getline(maps, line);) {
      if (!line.ends_with(" (deleted)")) continue;
      const DeletedMapping mapping = parse_deleted_mapping(line);
      if (mapping.inode == 0 || devices.count(mapping.device) == 0) continue;
      if (seen.count({mapping.device, mapping.inode}) != 0) continue;
      struct stat st {};
      if (::stat((dir + "/map_files/" + mapping.range).c_str(), &st) == 0) {
        if (S_ISREG(st.st_mode) && st.st_nlink == 0) add_unlinked(st);
      } else {
        std::uint64_t &extent = mapped[{mapping.device, mapping.inode}];
        extent = std::max(extent, mapping.size);
      }
      if (usage.over) return usage;
    }
  }
  for (const auto &[inode, extent] : mapped) {
    if (!seen.emplace(inode).second) continue;
    usage.bytes += extent;
    usage.unlinked_bytes += extent;
    usage.over = usage.bytes > max_bytes || usage.files > max_files;
  }
  return usage;
}

}  // namespace sandbox_host
