// Loads a seccomp filter: a BPF program the build compiled from seccomp_rules.cpp, so a launch
// spends no time in libseccomp (docs/benchmarks.md).
#include "seccomp_program.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sandbox_host::backends {

void install_seccomp_filter(Sockets sockets) {
  // The kernel accepts a filter from an unprivileged process only under no_new_privs.
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) set_no_new_privs();
  sock_fprog program = sockets == Sockets::any
                           ? sock_fprog{kDefaultSeccompProgramLength,
                                        const_cast<sock_filter *>(kDefaultSeccompProgram)}
                           : sock_fprog{kUnixSocketsOnlySeccompProgramLength,
                                        const_cast<sock_filter *>(kUnixSocketsOnlySeccompProgram)};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    throw_errno("seccomp", "load the filter");
  }
}

}  // namespace sandbox_host::backends
