// Whether Landlock's refusals reach sandbox-host's own audit here, and if not, why: Landlock
// ABI 7 (Linux 6.15) writes a sandbox's refusals to the kernel's audit where it is on, and
// the host reads them from there (kernel_audit/landlock_audit_reader.hpp) when it runs as
// root with CAP_AUDIT_READ. Probe shows it as one line.
#pragma once

#include <string>

namespace sandbox_host {

enum class KernelAuditState { on, off, unknown };

struct LandlockAudit {
  bool denials_logged = false;  // Landlock ABI >= 7
  bool readable = false;        // effective uid 0 with CAP_AUDIT_READ in effect
  KernelAuditState kernel_audit = KernelAuditState::unknown;
  bool recorded = false;  // all three: each refusal is a record of sandbox-host's audit
  std::string summary;    // one short line saying which, and what to do if not
};

const char *to_string(KernelAuditState state) noexcept;

// This host's kernel audit, as far as this process may ask (root with CAP_AUDIT_CONTROL).
KernelAuditState kernel_audit_state();

// From the Landlock ABI probe found, the kernel audit's state and this process's
// /proc/<proc_root>/self/status (a test passes a tree of its own).
LandlockAudit landlock_audit(int landlock_abi, KernelAuditState kernel_audit,
                             const std::string &proc_root = "/proc");

}  // namespace sandbox_host
