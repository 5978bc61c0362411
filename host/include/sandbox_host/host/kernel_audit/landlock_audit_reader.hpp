// The host's reader of Landlock's refusals in the kernel's audit (landlock_denials.hpp):
// one thread per host process, started by the first launch that finds the audit readable
// (root with CAP_AUDIT_READ) and on. What a plugin can do to it, and what it cannot, is in
// docs/security-model.md.
#pragma once

#include <sandbox_host/host/kernel_audit/landlock_denials.hpp>

#include <sys/types.h>

#include <memory>

namespace sandbox_host::kernel_audit {

// A launch's entry with the reader, from its spawn to its end.
class LandlockAuditWatch {
 public:
  LandlockAuditWatch(pid_t creator, std::shared_ptr<LandlockLaunch> launch);
  // Stops reading the creator's new domains, without waiting.
  ~LandlockAuditWatch();
  LandlockAuditWatch(const LandlockAuditWatch &) = delete;
  LandlockAuditWatch &operator=(const LandlockAuditWatch &) = delete;

  void name_plugin(const std::string &plugin);
  // Once the plugin has ended: waits, a bounded time, for the kernel's audit thread to
  // send what it still holds, writes each of the launch's refusals, and stops reading the
  // creator's new domains.
  void settle();

 private:
  pid_t creator_;
  std::shared_ptr<LandlockLaunch> launch_;
  bool settled_ = false;
};

// Whether the host reads the kernel's audit, subscribing first if not yet: false where it
// cannot be read, or is off, and there is nothing to read. A launch asks before it spawns,
// since the kernel sends a record only to the readers it has when it sends it.
bool read_kernel_audit();

// The launch's entry, once it has its pid (spawned: the time read_kernel_audit() was asked,
// before the fork); nullptr unless read_kernel_audit() was true.
std::unique_ptr<LandlockAuditWatch> read_landlock_denials(
    pid_t creator, LandlockDenials::Clock::time_point spawned, std::string plugin,
    std::string backend, std::shared_ptr<AuditSink> audit);

}  // namespace sandbox_host::kernel_audit
