// Probe: whether this process can build a sandbox here, tried for real in a child process.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>

namespace sandbox_host::namespaces {

// Forks a child that creates user, mount, pid and uts namespaces and mounts in them (a
// tmpfs, and /proc from pid 1 of the new pid namespace, as the sandbox's init does), waits
// for it at most a second, and, when it fails, names the host setting that stopped it: a
// /proc refused as too revealing (a container's masked one) too. A refused sethostname
// leaves the backend available, degraded (explain_kept_hostname).
ProbeReport probe_user_namespaces();

// Whether the kernel will mount a fresh procfs in a new user namespace, as the host's
// /proc is seen in mountinfo (the text of /proc/self/mountinfo): nothing mounted below it
// that could hide a path (binfmt_misc excepted), and mounted read-write with relatime, which
// a new procfs must keep. False where it cannot tell, and then probe tries one for real.
bool fresh_proc_certain(const std::string &mountinfo);

// Why the backend is unavailable where the kernel refuses the sandbox a fresh /proc.
void explain_masked_proc(ProbeReport &report);
// The warning of a backend whose sandbox keeps the host's name.
void explain_kept_hostname(ProbeReport &report);

}  // namespace sandbox_host::namespaces
