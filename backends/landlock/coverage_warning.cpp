#include "coverage_warning.hpp"

#include <vector>

namespace sandbox_host::landlock {

std::string coverage_warning(int abi) {
  std::vector<std::string> gaps{
      "no pid namespace: the host's processes share the plugin's pid space (/proc is not "
      "granted, but pids can be probed)",
      "no mount namespace: the host's file system with access rules on top, so stat(2) "
      "tells the existence, size and times of files outside the grants, and /tmp, /dev/shm and "
      "/proc are not granted at all, but for the plugin's own /proc/<pid> (its child "
      "processes do not see their /proc/self)",
      "connect(2) to the launching user's unix sockets by path (ssh-agent, D-Bus, a "
      "container runtime) is not restricted",
      "no uts namespace: the host's name is visible",
      "no network namespace: a plugin with network proxied is refused, never run with the "
      "host's network",
      // Landlock cannot take a right away below a grant (view_grants.cpp).
      "under an agent policy (sandbox-host run --policy), a directory holding a rule of less "
      "access below it (the way to Home, a Deny or a Read inside Write) cannot be listed and "
      "nothing in it can be created, removed or renamed, though its entries are granted one "
      "by one as they exist at the start: an entry made later, at the top level too, gets "
      "nothing, and /proc and /dev are not granted beyond the system's devices and the "
      "command's own /proc/<pid> (unix sockets are refused there: socket(2) of AF_UNIX "
      "fails, socketpair(2) works)",
  };
  if (abi < 3) {
    gaps.push_back(
        "truncate(2) of any file the launching user may write is not restricted "
        "(restricted from ABI 3)");
  }
  if (abi < 4) {
    gaps.push_back(
        "with network none, a TCP socket the plugin did not create (one passed to it over a "
        "unix socket) can still connect or bind: the seccomp filter refuses creating one, "
        "Landlock restricts TCP from ABI 4");
  }
  if (abi < 5) {
    gaps.push_back("ioctl(2) on device files is not restricted (restricted from ABI 5)");
  }
  if (abi < 6) {
    gaps.push_back(
        "signals to the launching user's processes and, with network none, "
        "abstract unix sockets of the host are not scoped (scoped from ABI 6)");
  }
  if (abi < 7) {
    gaps.push_back("denials are not written to the kernel's audit log (from ABI 7)");
  }
  std::string warning =
      "degraded: Landlock ABI " + std::to_string(abi) + " without namespaces; not covered: ";
  for (size_t i = 0; i < gaps.size(); ++i) warning += (i == 0 ? "" : "; ") + gaps[i];
  return warning;
}

}  // namespace sandbox_host::landlock
