// Process hardening shared by the Linux backends. Each step throws SetupError naming itself.
#pragma once

#include <vector>

namespace sandbox_host::backends {

class SeccompChannel;

// Drops every capability: effective, permitted, inheritable, ambient and bounding sets, so
// not even an exec as uid 0 gets one back.
void drop_all_capabilities();

// Drops every capability this process holds (effective, permitted, inheritable, ambient)
// and, where it may (CAP_SETPCAP, i.e. when run as root), the bounding set. Without it the
// bounding set stays as inherited, and no_new_privs must keep an exec from raising a
// capability.
void drop_capabilities();

// Empties the bounding set alone, keeping the effective capabilities for the mounts still
// to come; drop_all_capabilities() then has fewer calls to make.
void drop_bounding_set();

// PR_SET_NO_NEW_PRIVS: no exec gains privileges (setuid bits, file capabilities).
void set_no_new_privs();

// A new session without a controlling terminal: TIOCSTI and TIOCLINUX cannot reach the
// host's terminal through an inherited one.
void new_session();

// Closes every descriptor above stderr but those in keep, which become close-on-exec.
void close_descriptors_except(std::vector<int> keep);

// Which namespaces the process has; the filter stands in for the missing ones.
enum class Namespaces {
  all,                    // the namespaces backend: the default filter
  none_network_outbound,  // no ipc namespace: System V IPC and POSIX message queues refused
  none_network_none,      // neither an ipc nor a net one: also socket(2) of every family
                          // but AF_UNIX (EAFNOSUPPORT)
};

// Loads the seccomp filter (seccomp_rules.cpp, docs/security-model.md); sets no_new_privs
// first if it is not set yet. Refusals are answered by the filter and recorded nowhere.
void install_seccomp_filter(Namespaces namespaces = Namespaces::all);
// The same rules, with the refusals (and under `run --learn` the traced calls) sent to a
// listener that goes to the host over channel (seccomp_channel.hpp), which is closed then.
// Without a channel, as above.
void install_seccomp_filter(Namespaces namespaces, SeccompChannel &channel);

// A second filter, stacked on the first, for a launch under an agent policy (Spec::view):
// socket(2) of AF_UNIX refused (EPERM). The policy shows the host's whole file system read-only,
// and connecting to a pathname socket takes no write access that a read-only mount or a
// Landlock rule takes away (the user's ssh-agent, the system bus), as Claude Code's own
// sandbox refuses them on Linux. socketpair(2) stays: its ends reach nothing outside.
void install_unix_socket_filter();

}  // namespace sandbox_host::backends
