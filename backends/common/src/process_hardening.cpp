#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>

namespace sandbox_host::backends {

void set_no_new_privs() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw_errno("no_new_privs", "prctl");
}

void new_session() {
  if (::setsid() < 0) throw_errno("session", "setsid");
}

void close_descriptors_except(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned first = STDERR_FILENO + 1;  // the lowest descriptor not yet kept or closed
  for (int fd : keep) {
    if (fd <= STDERR_FILENO) throw SetupError("descriptors", "cannot keep a standard stream");
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) throw_errno("descriptors", "close-on-exec");
    const auto kept = static_cast<unsigned>(fd);
    if (kept > first && ::close_range(first, kept - 1, 0) != 0) {
      throw_errno("descriptors", "close_range");
    }
    first = kept + 1;
  }
  if (::close_range(first, ~0U, 0) != 0) throw_errno("descriptors", "close_range");
}

}  // namespace sandbox_host::backends
