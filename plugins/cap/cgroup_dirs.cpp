// Slices and scopes as cgroup directories (cgroup_dirs.hpp).
#include "cgroup_dirs.hpp"

#include "pinned_process.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::cap {
namespace fs = std::filesystem;

namespace {

std::string reason(int error) {
  return std::generic_category().message(error);
}

// mkdir, where one that exists is fine: another request may have made it just now.
bool make_directory(const fs::path &dir) {
  if (::mkdir(dir.c_str(), 0755) == 0) return true;
  const int error = errno;
  if (error == EEXIST) {
    struct stat st {};
    if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return false;
  }
  throw std::runtime_error("cannot make cgroup " + dir.string() + ": " + reason(error));
}

}  // namespace

fs::path CgroupDirs::slice(const std::string &slice) const {
  const fs::path dir = parent_ / slice;
  make_directory(dir);
  return dir;
}

fs::path CgroupDirs::new_scope(const fs::path &slice_dir, const std::string &unit) const {
  const fs::path dir = slice_dir / unit;
  if (!make_directory(dir) && !read_control(dir / "cgroup.procs").empty()) {
    throw std::runtime_error("unit " + unit + " already exists and holds processes (" +
                             dir.string() + ")");
  }
  return dir;
}

void CgroupDirs::move(const fs::path &scope, int requester_pidfd) const {
  const PinnedProcess requester(requester_pidfd);
  write_control(scope / "cgroup.procs", std::to_string(requester.pid()));
  requester.check_still_running();
}

}  // namespace sandbox_host::cap
