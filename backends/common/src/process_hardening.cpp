#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

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

void close_descriptors_above_stderr() {
  if (::close_range(STDERR_FILENO + 1, ~0U, 0) != 0) throw_errno("descriptors", "close_range");
}

}  // namespace sandbox_host::backends
