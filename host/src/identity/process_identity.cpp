#include <sandbox_host/host/identity/process_identity.hpp>

#include <sandbox_host/host/identity/sock_diag.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

// Linux 6.5's; Debian 12's headers predate it. The kernel answers ENOPROTOOPT where it lacks it.
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#include <cerrno>
#include <charconv>
#include <memory>
#include <sstream>
#include <system_error>

namespace sandbox_host::broker {
namespace fs = std::filesystem;
namespace {

struct DirCloser {
  void operator()(DIR *dir) const noexcept { ::closedir(dir); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

// A directory opened relative to dirfd, for reading its entries; null when it cannot be.
Dir open_dir(int dirfd, const char *path) {
  const int fd = ::openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  DIR *dir = ::fdopendir(fd);
  if (dir == nullptr) ::close(fd);
  return Dir(dir);
}

std::optional<pid_t> pid_of(const char *name) {
  pid_t pid = 0;
  const char *end = name + std::char_traits<char>::length(name);
  auto [rest, ec] = std::from_chars(name, end, pid);
  if (ec != std::errc() || rest != end || pid <= 0) return std::nullopt;
  return pid;
}

// Whether the process whose /proc directory is the fd piddir holds dev:ino.
bool holds_at(int piddir, dev_t dev, ino_t ino) {
  Dir fds = open_dir(piddir, "fd");
  if (!fds) return false;
  const int fdsfd = ::dirfd(fds.get());
  while (const dirent *entry = ::readdir(fds.get())) {
    if (entry->d_name[0] == '.') continue;
    struct stat target {};
    // Following the magic link stats the open file itself, whatever its path says.
    if (::fstatat(fdsfd, entry->d_name, &target, 0) == 0 && target.st_ino == ino &&
        target.st_dev == dev) {
      return true;
    }
  }
  return false;
}

// The whole of a small file; /proc files report no size, so it is read to the end.
std::optional<std::string> read_small_file(const char *path) {
  const UniqueFd file(::open(path, O_RDONLY | O_CLOEXEC));
  if (!file) return std::nullopt;
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(file.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string read_file(const fs::path &path) {
  auto text = read_small_file(path.c_str());
  if (!text) {
    throw std::system_error(errno, std::generic_category(), "cannot read " + path.string());
  }
  return std::move(*text);
}

}  // namespace

std::vector<pid_t> holders(const fs::path &proc_dir, dev_t dev, ino_t ino, uid_t uid,
                           pid_t except) {
  std::vector<pid_t> found;
  Dir proc = open_dir(AT_FDCWD, proc_dir.c_str());
  if (!proc) return found;
  const int procfd = ::dirfd(proc.get());
  while (const dirent *entry = ::readdir(proc.get())) {
    const auto pid = pid_of(entry->d_name);
    if (!pid || *pid == except) continue;
    // The owner of /proc/<pid> is the process's effective uid: a cheap filter first.
    struct stat owner {};
    if (::fstatat(procfd, entry->d_name, &owner, AT_SYMLINK_NOFOLLOW) != 0 || owner.st_uid != uid) {
      continue;
    }
    const int piddir = ::openat(procfd, entry->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (piddir < 0) continue;
    const UniqueFd closer(piddir);
    if (holds_at(piddir, dev, ino)) found.push_back(*pid);
  }
  return found;
}

bool holds(const fs::path &proc_dir, pid_t pid, dev_t dev, ino_t ino) {
  const UniqueFd piddir(
      ::open((proc_dir / std::to_string(pid)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return piddir && holds_at(piddir.get(), dev, ino);
}

std::vector<pid_t> descendants(const fs::path &proc_dir, pid_t pid) {
  std::vector<pid_t> found;
  std::vector<pid_t> pending{pid};
  while (!pending.empty()) {
    const pid_t parent = pending.back();
    pending.pop_back();
    const fs::path tasks = proc_dir / std::to_string(parent) / "task";
    Dir dir = open_dir(AT_FDCWD, tasks.c_str());
    if (!dir) continue;
    while (const dirent *task = ::readdir(dir.get())) {
      if (!pid_of(task->d_name)) continue;
      const auto children = read_small_file((tasks / task->d_name / "children").c_str());
      if (!children) continue;
      const char *at = children->data();
      const char *end = at + children->size();
      while (at < end) {
        pid_t child = 0;
        const auto [next, ec] = std::from_chars(at, end, child);
        if (ec == std::errc() && child > 0) {
          found.push_back(child);
          pending.push_back(child);
        }
        at = next < end ? next + 1 : end;  // past the space after each pid
      }
    }
  }
  return found;
}

std::optional<uid_t> process_uid(const fs::path &proc_dir, pid_t pid) {
  const auto status = read_small_file((proc_dir / std::to_string(pid) / "status").c_str());
  if (!status) return std::nullopt;
  const auto line = status->find("\nUid:");
  if (line == std::string::npos) return std::nullopt;
  std::istringstream fields(status->substr(line + 5, status->find('\n', line + 1) - line - 5));
  uid_t real = 0, effective = 0;
  if (!(fields >> real >> effective) || real != effective) return std::nullopt;
  return real;
}

Origin origin(const fs::path &proc_dir, pid_t pid, const std::vector<std::string> &keys) {
  const fs::path dir = proc_dir / std::to_string(pid);
  Origin result;
  std::error_code ec;
  result.cwd = fs::read_symlink(dir / "cwd", ec).string();
  if (ec) {
    throw std::system_error(ec,
                            "cannot read the working directory of process " + std::to_string(pid));
  }
  if (keys.empty()) return result;
  const std::string environ = read_file(dir / "environ");
  for (const auto &key : keys) {
    const std::string prefix = key + "=";
    for (std::size_t start = 0; start < environ.size();) {
      std::size_t end = environ.find('\0', start);
      if (end == std::string::npos) end = environ.size();
      std::string_view entry(environ.data() + start, end - start);
      if (entry.substr(0, prefix.size()) == prefix) {
        result.env.emplace_back(entry);
        break;
      }
      start = end + 1;
    }
  }
  return result;
}

bool sandboxed(const fs::path &proc_dir, pid_t pid) {
  struct stat mine {
  }, theirs{};
  if (::stat((proc_dir / "self/ns/mnt").c_str(), &mine) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot read this process's mount namespace");
  }
  if (::stat((proc_dir / std::to_string(pid) / "ns/mnt").c_str(), &theirs) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "cannot read the mount namespace of process " + std::to_string(pid));
  }
  return mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev || carries_sandbox_mark(pid);
}

std::optional<pid_t> lock_owner(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_GETLK, &lock) != 0 || lock.l_type == F_UNLCK || lock.l_pid <= 0) {
    return std::nullopt;
  }
  return lock.l_pid;
}

std::optional<ino_t> pid_namespace(const fs::path &proc_dir, pid_t pid) {
  struct stat ns {};
  if (::stat((proc_dir / std::to_string(pid) / "ns/pid").c_str(), &ns) != 0) return std::nullopt;
  return ns.st_ino;
}

std::optional<ino_t> unix_peer_inode(int fd) {
  struct stat ours {};
  if (::fstat(fd, &ours) != 0) return std::nullopt;
  struct {
    nlmsghdr header;
    unix_diag_req request;
  } message{};
  message.request.sdiag_family = AF_UNIX;
  message.request.udiag_states = ~0U;
  message.request.udiag_ino = static_cast<__u32>(ours.st_ino);
  message.request.udiag_show = UDIAG_SHOW_PEER;
  message.request.udiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.udiag_cookie[1] = INET_DIAG_NOCOOKIE;
  std::optional<SockDiag> diag;  // holds the reply
  SockDiagReply reply;
  try {
    reply = diag.emplace().ask(message, sizeof(unix_diag_msg));
  } catch (const SockDiagError &) {
    return std::nullopt;  // the kernel does not say, which is what nullopt means
  }
  if (reply.error != 0) return std::nullopt;
  const nlmsghdr *header = reply.answer;
  const auto *answer = static_cast<const unix_diag_msg *>(NLMSG_DATA(header));
  if (answer->udiag_ino != ours.st_ino) return std::nullopt;
  int left = static_cast<int>(header->nlmsg_len - NLMSG_LENGTH(sizeof *answer));
  for (auto *attribute = reinterpret_cast<const rtattr *>(answer + 1); RTA_OK(attribute, left);
       attribute = RTA_NEXT(attribute, left)) {
    if (attribute->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(attribute) >= sizeof(__u32)) {
      return *static_cast<const __u32 *>(RTA_DATA(attribute));
    }
  }
  return std::nullopt;
}

UniqueFd open_pidfd(pid_t pid) {
  return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

bool running(int pidfd) {
  pollfd exited{pidfd, POLLIN, 0};
  return ::poll(&exited, 1, 0) == 0;
}

UniqueFd connection_peer_pidfd(int connection, pid_t pid, const std::filesystem::path &proc_dir) {
  int kernel_pidfd = -1;
  socklen_t size = sizeof kernel_pidfd;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERPIDFD, &kernel_pidfd, &size) == 0 &&
      kernel_pidfd >= 0) {
    return UniqueFd(kernel_pidfd);
  }
  return peer_pidfd_by_holder(connection, pid, proc_dir);
}

UniqueFd peer_pidfd_by_holder(int connection, pid_t pid, const std::filesystem::path &proc_dir) {
  UniqueFd by_pid = open_pidfd(pid);
  struct stat ours {};
  const auto peer_inode = unix_peer_inode(connection);
  if (by_pid && peer_inode && ::fstat(connection, &ours) == 0 &&
      holds(proc_dir, pid, ours.st_dev, *peer_inode) && running(by_pid.get())) {
    return by_pid;
  }
  return {};
}

}  // namespace sandbox_host::broker
