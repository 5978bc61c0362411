#include "coverage_warning.hpp"

namespace sandbox_host::landlock {

namespace {
// Everything but the ABI's own gaps is what a user namespace's sandbox holds.
constexpr const char *kNamespaces = "the namespaces backend";
}  // namespace

std::vector<CoverageGap> coverage_gaps(int abi) {
  // Short enough for one line of `sandbox-host probe` each; the escape corpus
  // (tests/backends/landlock, WarningSaysTruly_*) checks that each one really exists.
  std::vector<CoverageGap> gaps{
      {"no pid namespace: a plugin can probe the host's pids (kill(pid, 0)), not read /proc",
       kNamespaces},
      {"no mount namespace: a plugin can stat(2) files outside its grants (existence, size, "
       "times)",
       kNamespaces},
      {"a plugin gets no /tmp, /dev/shm or /proc (but its own /proc/<pid>, not its children's)",
       kNamespaces},
      {"a plugin can connect(2) to the launching user's unix sockets by path (ssh-agent, D-Bus)",
       kNamespaces},
      {"no uts namespace: a plugin sees the host's name", kNamespaces},
      {"no network namespace: network proxied is refused, never run with the host's network",
       kNamespaces},
      // Landlock cannot take a right away below a grant (view_grants.cpp): a policy's view is
      // granted by complement, entry by entry, as it exists at the start.
      {"run --policy: a directory above a narrower rule cannot be listed, nor changed in it",
       kNamespaces},
      {"run --policy: an entry made after the start, at the top level too, gets nothing",
       kNamespaces},
      {"run --policy: /proc and /dev hold only the system's devices and its own /proc/<pid>",
       kNamespaces},
      {"run --policy: socket(2) of AF_UNIX fails (socketpair(2) works)", kNamespaces},
  };
  // Each ABI's gap, closed by the kernel release that brought the ABI.
  if (abi < 3) {
    gaps.push_back(
        {"a plugin can truncate(2) any file its user may write", "Linux 6.2+ (Landlock ABI 3)"});
  }
  if (abi < 4) {
    // Creating one is refused by the seccomp filter at every ABI.
    gaps.push_back({"with network none, a plugin can connect or bind a TCP socket passed to it",
                    "Linux 6.7+ (Landlock ABI 4)"});
  }
  if (abi < 5) {
    gaps.push_back(
        {"a plugin can ioctl(2) the device files it may open", "Linux 6.10+ (Landlock ABI 5)"});
  }
  if (abi < 6) {
    gaps.push_back(
        {"signals are not scoped: a plugin can signal the launching user's other "
         "processes",
         "Linux 6.12+ (Landlock ABI 6)"});
    gaps.push_back({"with network none, a plugin can connect to the host's abstract unix sockets",
                    "Linux 6.12+ (Landlock ABI 6)"});
  }
  if (abi < 7) {
    gaps.push_back({"a plugin's denials are not written to the kernel's audit log",
                    "Linux 6.15+ (Landlock ABI 7)"});
  }
  return gaps;
}

std::string coverage_warning(int abi) {
  return sandbox_host::coverage_warning(
      "degraded: Landlock ABI " + std::to_string(abi) + " without namespaces", coverage_gaps(abi));
}

}  // namespace sandbox_host::landlock
