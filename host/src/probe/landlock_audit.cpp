#include <sandbox_host/host/landlock_audit.hpp>

#include <sandbox_host/host/kernel_audit/audit_netlink.hpp>

#include <cstdint>
#include <fstream>
#include <sstream>

namespace sandbox_host {
namespace {

constexpr int kFirstLoggingAbi = 7;
constexpr int kCapAuditRead = 37;  // linux/capability.h

struct Credentials {
  bool root = false;
  bool audit_read = false;
};

// "Uid:\t<real>\t<effective>\t..." and "CapEff:\t<hex>" of /proc/self/status.
Credentials credentials(const std::string &proc_root) {
  Credentials found;
  std::ifstream status(proc_root + "/self/status");
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "Uid:") {
      long real = -1, effective = -1;
      fields >> real >> effective;
      found.root = effective == 0;
    } else if (key == "CapEff:") {
      std::uint64_t caps = 0;
      fields >> std::hex >> caps;
      found.audit_read = (caps >> kCapAuditRead) & 1U;
    }
  }
  return found;
}

}  // namespace

const char *to_string(KernelAuditState state) noexcept {
  switch (state) {
    case KernelAuditState::on:
      return "on";
    case KernelAuditState::off:
      return "off";
    case KernelAuditState::unknown:
      break;
  }
  return "unknown";
}

KernelAuditState kernel_audit_state() {
  const auto status = kernel_audit::kernel_audit_status();
  if (!status) return KernelAuditState::unknown;
  return status->enabled ? KernelAuditState::on : KernelAuditState::off;
}

LandlockAudit landlock_audit(int landlock_abi, KernelAuditState kernel_audit,
                             const std::string &proc_root) {
  LandlockAudit audit;
  const Credentials who = credentials(proc_root);
  audit.denials_logged = landlock_abi >= kFirstLoggingAbi;
  audit.readable = who.root && who.audit_read;
  audit.kernel_audit = kernel_audit;
  audit.recorded = audit.denials_logged && audit.readable && kernel_audit == KernelAuditState::on;
  constexpr const char *kLearn = ": run --learn names them";
  const std::string abi = "Landlock ABI " + std::to_string(landlock_abi);
  if (landlock_abi < 1) {
    audit.summary = "no Landlock here, so no Landlock refusals to record";
  } else if (!audit.denials_logged) {
    audit.summary =
        "not recorded: the kernel does not log them (" + abi + " < 7; Linux 6.15+ does)" + kLearn;
  } else if (!audit.readable) {
    audit.summary = std::string("not recorded: this process cannot read the kernel audit (") +
                    (who.root ? "root without CAP_AUDIT_READ" : "not root with CAP_AUDIT_READ") +
                    ")" + kLearn;
  } else if (kernel_audit == KernelAuditState::off) {
    audit.summary = std::string(
                        "not recorded: the kernel audit is off (auditctl -e 1 turns it "
                        "on; sandbox-host never does)") +
                    kLearn;
  } else if (kernel_audit == KernelAuditState::unknown) {
    audit.summary =
        "recorded in sandbox-host's audit whenever the kernel audit is on (whether it "
        "is, this process may not ask: no CAP_AUDIT_CONTROL)";
  } else {
    audit.summary =
        "recorded: the kernel audit is on and this process reads it (root, "
        "CAP_AUDIT_READ), so each Landlock refusal of a launch is a record in "
        "sandbox-host's audit";
  }
  return audit;
}

}  // namespace sandbox_host
