// Whether the kernel's audit log holds Landlock's denials here, and whether this process could
// read them: Landlock ABI 7 (Linux 6.15) writes a sandbox's denials to the audit subsystem,
// and reading that takes root with CAP_AUDIT_READ (the audit netlink socket's multicast group;
// auditd's log file is root's). Probe shows it as one line; a reader of the denials asks it
// first.
#pragma once

#include <string>

namespace sandbox_host {

struct LandlockAudit {
  bool denials_logged = false;  // Landlock ABI >= 7
  bool readable = false;        // effective uid 0 with CAP_AUDIT_READ in effect
  std::string summary;          // one short line saying both
};

// From the Landlock ABI probe found and this process's /proc/<proc_root>/self/status (a test
// passes a tree of its own).
LandlockAudit landlock_audit(int landlock_abi, const std::string &proc_root = "/proc");

}  // namespace sandbox_host
