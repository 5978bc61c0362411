// Probe: whether this process can build a sandbox here, tried for real in a child process.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>

namespace sandbox_host::namespaces {

// Forks a child that creates user, mount, pid and uts namespaces and mounts in them (a
// tmpfs, and /proc from pid 1 of the new pid namespace, as the sandbox's init does), waits
// for it at most a second, and, when it fails, names the host setting that stopped it. A
// /proc refused as too revealing (a container's masked one) leaves the backend available,
// degraded (explain_container_limits), as does a refused sethostname.
ProbeReport probe_user_namespaces();

// The warning (and hint) of a backend whose sandbox gets an empty /proc, or keeps the host's
// name, because of what a container refuses.
void explain_container_limits(bool empty_proc, bool fixed_hostname, ProbeReport &report);

// Why creating a user namespace failed with error, from the host settings that can refuse
// one (read under proc_root, normally /proc), most specific first, with the command that
// would allow it.
void explain_refusal(int error, const std::string &proc_root, ProbeReport &report);

}  // namespace sandbox_host::namespaces
