#include "ruleset.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace sandbox_host::landlock {
namespace {

using backends::SetupError;
using backends::throw_errno;

constexpr const char *kStep = "landlock";

}  // namespace

Ruleset::Ruleset(const RulesetAttr &attr)
    : fd_(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0))),
      handled_fs_(attr.handled_access_fs) {
  if (!fd_) throw_errno(kStep, "create the ruleset");
}

UniqueFd open_without_symlinks(const std::string &path) {
  if (path.empty() || path.front() != '/') {
    throw SetupError(kStep, "grant " + path + ": not an absolute path");
  }
  UniqueFd at(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!at) throw_errno(kStep, "open /");
  for (std::size_t start = 1; start < path.size();) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string name = path.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    UniqueFd next(::openat(at.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next) throw_errno(kStep, "open " + path);
    struct stat st {};
    if (::fstat(next.get(), &st) != 0) throw_errno(kStep, "stat " + path);
    if (S_ISLNK(st.st_mode)) {
      throw SetupError(kStep, "grant " + path + ": " + path.substr(0, end) +
                                  " is a symbolic link; a path a plugin could have replaced "
                                  "with one is never granted through it");
    }
    at = std::move(next);
  }
  return at;
}

void Ruleset::grant(const std::string &path, uint64_t access, Unopenable unopenable,
                    int open_flags) {
  const UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC | open_flags));
  if (!fd) {
    if (errno == ENOENT) return;
    // A path the launching user cannot reach needs no grant: it stays out of reach.
    if (unopenable == Unopenable::skip_missing_or_unreachable && errno == EACCES) return;
    throw_errno(kStep, "open " + path);
  }
  grant(fd, path, access);
}

void Ruleset::grant(const UniqueFd &fd, const std::string &path, uint64_t access) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(kStep, "stat " + path);
  // O_NOFOLLOW with O_PATH opens a symlink itself; a rule on it would grant nothing sound.
  if (S_ISLNK(st.st_mode)) return;
  if (!S_ISDIR(st.st_mode)) access &= kFsFileRights;
  const PathBeneathAttr rule{access & handled_fs_, fd.get()};
  if (::syscall(SYS_landlock_add_rule, fd_.get(), kRulePathBeneath, &rule, 0) != 0) {
    throw_errno(kStep, "grant " + path);
  }
}

void Ruleset::allow(const std::string &path, uint64_t access) {
  grant(open_without_symlinks(path), path, access);
}

void Ruleset::allow_if_present(const std::string &path, uint64_t access) {
  grant(path, access, Unopenable::skip_missing, 0);
}

void Ruleset::allow_exact_if_present(const std::string &path, uint64_t access) {
  grant(path, access, Unopenable::skip_missing_or_unreachable, O_NOFOLLOW);
}

void Ruleset::restrict_self(uint32_t flags) {
  if (::syscall(SYS_landlock_restrict_self, fd_.get(), flags) != 0) {
    throw_errno(kStep, "enforce the ruleset");
  }
}

}  // namespace sandbox_host::landlock
