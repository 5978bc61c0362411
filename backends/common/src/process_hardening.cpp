#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace sandbox_host::backends {

void set_no_new_privs() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) throw_errno("no_new_privs", "prctl");
}

void new_session() {
  if (::setsid() < 0) throw_errno("session", "setsid");
}

void close_descriptors_except(int keep) {
  if (keep <= STDERR_FILENO) throw SetupError("descriptors", "cannot keep a standard stream");
  if (::fcntl(keep, F_SETFD, FD_CLOEXEC) != 0) throw_errno("descriptors", "close-on-exec");
  if (keep > STDERR_FILENO + 1 &&
      ::close_range(STDERR_FILENO + 1, static_cast<unsigned>(keep) - 1, 0) != 0) {
    throw_errno("descriptors", "close_range");
  }
  if (::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0) != 0) {
    throw_errno("descriptors", "close_range");
  }
}

}  // namespace sandbox_host::backends
