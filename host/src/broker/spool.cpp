#include <sandbox_host/host/broker/spool.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <ctime>
#include <sstream>
#include <system_error>

namespace sandbox_host::broker {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string &what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

bool ends_with(std::string_view name, std::string_view suffix) {
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

// An id is what clients make: hex digits, nothing a path could use.
bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<std::string> request_id(std::string_view name) {
  if (!ends_with(name, kRequestSuffix)) return std::nullopt;
  std::string id(name.substr(0, name.size() - kRequestSuffix.size()));
  if (!valid_id(id)) return std::nullopt;
  return id;
}

}  // namespace

fs::path spool_dir(const fs::path &state_dir) {
  return state_dir / "spool";
}

Spool::Spool(fs::path dir, bool watch) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_.parent_path(), ec);
  // Whoever may rename entries of the parent could swap the spool for a directory of theirs.
  struct stat parent {};
  if (::stat(dir_.parent_path().c_str(), &parent) != 0) {
    fail("cannot create the spool's directory " + dir_.parent_path().string());
  }
  if ((parent.st_uid != ::geteuid() && parent.st_uid != 0) ||
      ((parent.st_mode & 022) != 0 && (parent.st_mode & S_ISVTX) == 0)) {
    fail("the spool's directory " + dir_.parent_path().string() +
             " may be changed by another user; make it the broker's own, mode 0755 or stricter",
         EPERM);
  }
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
    fail("cannot create spool " + dir_.string());
  dir_fd_.reset(::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd_) fail("cannot open spool " + dir_.string());
  struct stat status {};
  if (::fstat(dir_fd_.get(), &status) != 0) fail("cannot stat spool " + dir_.string());
  if (status.st_uid != ::geteuid()) {
    fail("spool " + dir_.string() + " belongs to uid " + std::to_string(status.st_uid) +
             ", not to the broker's uid " + std::to_string(::geteuid()),
         EPERM);
  }
  if ((status.st_mode & 022) != 0) {
    fail("spool " + dir_.string() + " is writable by other users (mode 0" +
             (std::ostringstream() << std::oct << (status.st_mode & 07777)).str() +
             "); make it 0700",
         EPERM);
  }
  lock_.reset(
      ::openat(dir_fd_.get(), kBrokerLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock_) fail("cannot open " + (dir_ / kBrokerLockFile).string());
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  // An open-file-description lock: clients test it (F_OFD_GETLK) without taking it.
  if (::fcntl(lock_.get(), F_OFD_SETLK, &lock) != 0) {
    if (errno == EAGAIN || errno == EACCES) {
      fail("spool " + dir_.string() + " is already served by another broker", EBUSY);
    }
    fail("cannot lock " + (dir_ / kBrokerLockFile).string());
  }
  if (watch) {
    inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotify_) fail("inotify_init1");
    if (::inotify_add_watch(inotify_.get(), dir_.c_str(), IN_MOVED_TO | IN_ONLYDIR) < 0) {
      fail("cannot watch spool " + dir_.string());
    }
  }
}

std::vector<std::string> Spool::scan_all() {
  std::vector<std::string> ids;
  const int fd = ::openat(dir_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ids;
  DIR *dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return ids;
  }
  struct stat spool {};
  ::fstat(dir_fd_.get(), &spool);
  while (const dirent *entry = ::readdir(dir)) {
    if (stuck_.contains({spool.st_dev, entry->d_ino})) continue;
    if (auto id = request_id(entry->d_name)) ids.push_back(std::move(*id));
  }
  ::closedir(dir);
  return ids;
}

std::vector<std::string> Spool::arrived(bool scan) {
  std::vector<std::string> ids;
  if (inotify_) {
    alignas(inotify_event) std::array<char, 16384> buffer{};
    for (;;) {
      const ssize_t n = ::read(inotify_.get(), buffer.data(), buffer.size());
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto *event = reinterpret_cast<const inotify_event *>(buffer.data() + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        if ((event->mask & IN_Q_OVERFLOW) != 0) scan = true;
        if (event->len == 0) continue;
        if (auto id = request_id(event->name)) ids.push_back(std::move(*id));
      }
    }
  }
  if (scan) return scan_all();
  return ids;
}

Spool::Claim Spool::claim(const std::string &id, ClaimedRequest &claimed, std::string &error) {
  const std::string name = id + std::string(kRequestSuffix);
  claimed = ClaimedRequest{id, {}, {}};
  // O_NONBLOCK: a FIFO planted as a request must not hold the broker up.
  claimed.file.reset(::openat(dir_fd_.get(), name.c_str(),
                              O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!claimed.file) {
    if (errno == ENOENT) return Claim::gone;
    // The request is fine; the broker is short of descriptors. It stays for a later claim.
    if (errno == EMFILE || errno == ENFILE) return Claim::out_of_descriptors;
    error = errno == ELOOP
                ? "request " + name + " is a symbolic link"
                : "cannot open request " + name + ": " + std::system_category().message(errno);
    ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    return Claim::taken;
  }
  if (::fstat(claimed.file.get(), &claimed.status) != 0) {
    error = "cannot stat request " + name;
  }
  if (S_ISDIR(claimed.status.st_mode)) {
    // Refused as a directory later; here it only has to go, so that no scan finds it again.
    if (::unlinkat(dir_fd_.get(), name.c_str(), AT_REMOVEDIR) != 0 &&
        !quarantine(name, claimed.status)) {
      if (errno == ENOENT) return Claim::gone;
      error = "cannot remove the directory " + name +
              " from the spool: " + std::system_category().message(errno) +
              "; it is left alone from now on";
    }
    return Claim::taken;
  }
  if (::unlinkat(dir_fd_.get(), name.c_str(), 0) != 0) {
    if (errno == ENOENT) return Claim::gone;
    error = "cannot take request " + name + ": " + std::system_category().message(errno);
    stuck_.emplace(claimed.status.st_dev, claimed.status.st_ino);
  }
  return Claim::taken;
}

bool Spool::quarantine(const std::string &name, const struct stat &status) {
  if (::mkdirat(dir_fd_.get(), kQuarantineDir, 0700) != 0 && errno != EEXIST) return false;
  const std::string target =
      std::string(kQuarantineDir) + "/" + name + "." + std::to_string(status.st_ino);
  if (::renameat2(dir_fd_.get(), name.c_str(), dir_fd_.get(), target.c_str(), RENAME_NOREPLACE) ==
      0) {
    return true;
  }
  stuck_.emplace(status.st_dev, status.st_ino);
  return false;
}

UniqueFd Spool::claim_reply(const std::string &id, std::string &error) {
  const std::string name = id + std::string(kReplySuffix);
  UniqueFd fifo(::openat(dir_fd_.get(), name.c_str(),
                         O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC));
  if (!fifo) {
    error = errno == ENXIO    ? "its reply FIFO " + name + " has no reader (the client is gone)"
            : errno == ENOENT ? "it has no reply FIFO " + name
                              : "cannot open its reply FIFO " + name + ": " +
                                    std::system_category().message(errno);
    if (errno != ENOENT) ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    return {};
  }
  struct stat status {};
  ::unlinkat(dir_fd_.get(), name.c_str(), 0);
  if (::fstat(fifo.get(), &status) != 0 || !S_ISFIFO(status.st_mode) ||
      status.st_uid != ::geteuid()) {
    error = "its reply " + name + " is not a FIFO of the broker's user";
    return {};
  }
  return fifo;
}

std::vector<Spool::Stray> Spool::collect_garbage(std::chrono::seconds age) {
  std::vector<Stray> strays;
  const int fd = ::openat(dir_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return strays;
  DIR *dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return strays;
  }
  const std::time_t cutoff = std::time(nullptr) - age.count();
  while (const dirent *entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == ".." || name == kBrokerLockFile || name == kQuarantineDir) continue;
    struct stat status {};
    if (::fstatat(fd, entry->d_name, &status, AT_SYMLINK_NOFOLLOW) != 0 ||
        status.st_mtime >= cutoff || stuck_.contains({status.st_dev, status.st_ino})) {
      continue;
    }
    // What killed clients leave behind is cleaned away without a word.
    const bool client_left =
        (ends_with(name, kPartialSuffix) && name.front() == '.' && S_ISREG(status.st_mode)) ||
        (ends_with(name, kReplySuffix) && S_ISFIFO(status.st_mode));
    // A request waits for the claim, which comes within a tick; one this old is not claimable.
    if (request_id(name) && !S_ISDIR(status.st_mode)) continue;
    const char *kind = S_ISDIR(status.st_mode)    ? "a directory"
                       : S_ISREG(status.st_mode)  ? "a file"
                       : S_ISLNK(status.st_mode)  ? "a symbolic link"
                       : S_ISFIFO(status.st_mode) ? "a FIFO"
                       : S_ISSOCK(status.st_mode) ? "a socket"
                                                  : "a special file";
    const std::string what(kind);
    if (::unlinkat(fd, entry->d_name, S_ISDIR(status.st_mode) ? AT_REMOVEDIR : 0) == 0) {
      if (!client_left) strays.push_back({std::string(name), "removed " + what});
    } else if (S_ISDIR(status.st_mode) && quarantine(std::string(name), status)) {
      strays.push_back({std::string(name), "moved " + what + " that is not empty into " +
                                               dir_.string() + "/" + kQuarantineDir});
    } else {
      stuck_.emplace(status.st_dev, status.st_ino);
      strays.push_back({std::string(name), "could not remove " + what + " (" +
                                               std::system_category().message(errno) +
                                               "); it is left alone from now on"});
    }
  }
  ::closedir(dir);
  return strays;
}

}  // namespace sandbox_host::broker
