// Probe: whether this process can build a sandbox here, tried for real in a child process.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>

namespace sandbox_host::namespaces {

// Forks a child that creates user, mount, pid and uts namespaces and mounts in them, waits
// for it at most a second, and, when it fails, names the host setting that stopped it.
ProbeReport probe_user_namespaces();

// Why creating a user namespace failed with error, from the host settings that can refuse
// one (read under proc_root, normally /proc), most specific first, with the command that
// would allow it.
void explain_refusal(int error, const std::string &proc_root, ProbeReport &report);

}  // namespace sandbox_host::namespaces
