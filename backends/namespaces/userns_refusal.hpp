// Why the kernel refused this process a user namespace, told from what the host shows:
// sysctls under /proc/sys, AppArmor under /sys/kernel/security/apparmor and the process's
// own label, a seccomp filter on it and the container (podman, Docker, Kubernetes) or
// systemd unit that put it there. Every file is read under a root directory ("/" on a host),
// so that a test can point the reading at a tree of its own.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>

namespace sandbox_host::namespaces {

// Fills report.reason ("creating a user namespace failed: <errno> (<the setting>)") and
// report.hint (the exact setting to change), most specific reading first; a setting is only
// named where the files read show it.
void explain_refusal(int error, const std::string &root, ProbeReport &report);

}  // namespace sandbox_host::namespaces
