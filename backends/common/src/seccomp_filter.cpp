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

void install_seccomp_filter(Namespaces namespaces) {
  // The kernel accepts a filter from an unprivileged process only under no_new_privs.
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) set_no_new_privs();
  sock_fprog program{};
  switch (namespaces) {
    case Namespaces::all:
      program = {kDefaultSeccompProgramLength, const_cast<sock_filter *>(kDefaultSeccompProgram)};
      break;
    case Namespaces::none_network_outbound:
      program = {kNoSharedIpcSeccompProgramLength,
                 const_cast<sock_filter *>(kNoSharedIpcSeccompProgram)};
      break;
    case Namespaces::none_network_none:
      program = {kNoSharedIpcUnixSocketsOnlySeccompProgramLength,
                 const_cast<sock_filter *>(kNoSharedIpcUnixSocketsOnlySeccompProgram)};
      break;
  }
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    throw_errno("seccomp", "load the filter");
  }
}

}  // namespace sandbox_host::backends
