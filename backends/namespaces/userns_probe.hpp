// Probe: whether this process can build a sandbox here, tried for real in a child process.
#pragma once

#include <sandbox_host/spec.hpp>

namespace sandbox_host::namespaces {

// Forks a child that creates user, mount, pid and uts namespaces and mounts in them, waits
// for it at most a second, and, when it fails, names the host setting that stopped it.
ProbeReport probe_user_namespaces();

}  // namespace sandbox_host::namespaces
