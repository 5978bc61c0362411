// The kernel's audit, over its netlink socket: whether it is on and how much it still holds
// (AUDIT_GET: root with CAP_AUDIT_CONTROL, in the initial pid namespace), and a read-only
// subscription to every record it sends (the multicast group AUDIT_NLGRP_READLOG: root with
// CAP_AUDIT_READ). Neither changes the audit's state, and the subscription takes nothing
// from auditd or journald: each reader gets its own copy of each record.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <cstdint>
#include <optional>

namespace sandbox_host::kernel_audit {

struct KernelAuditStatus {
  bool enabled = false;       // 1 (on) or 2 (on and locked)
  std::uint32_t backlog = 0;  // records queued for the kernel's audit thread to send
  std::uint32_t lost = 0;     // records the kernel dropped since boot
};

// nullopt when this process may not ask, or the kernel has no audit.
std::optional<KernelAuditStatus> kernel_audit_status();

// Whether this process may subscribe: effective root with CAP_AUDIT_READ.
bool may_read_kernel_audit();

// A non-blocking socket that receives every record the kernel's audit sends from now on.
// Throws std::system_error naming the step (EPERM without CAP_AUDIT_READ).
UniqueFd subscribe_to_kernel_audit();

}  // namespace sandbox_host::kernel_audit
