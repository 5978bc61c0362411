#include <sandbox_host/host/landlock_audit.hpp>

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

LandlockAudit landlock_audit(int landlock_abi, const std::string &proc_root) {
  LandlockAudit audit;
  const Credentials who = credentials(proc_root);
  audit.denials_logged = landlock_abi >= kFirstLoggingAbi;
  audit.readable = who.root && who.audit_read;
  const std::string abi = "Landlock ABI " + std::to_string(landlock_abi);
  audit.summary = landlock_abi < 1 ? "no Landlock here, so no Landlock denials to log"
                  : audit.denials_logged
                      ? "denials logged to the kernel audit where audit is on (" + abi + " >= 7)"
                      : "denials not logged (" + abi + " < 7; Linux 6.15+ logs them)";
  audit.summary += audit.readable ? "; this process can read the audit log (root, CAP_AUDIT_READ)"
                   : who.root     ? "; this process cannot read it (root without CAP_AUDIT_READ)"
                                  : "; this process cannot read it (not root with CAP_AUDIT_READ)";
  // What probe must not let a reader assume: sandbox-host's own audit has none of them.
  if (landlock_abi >= 1) {
    audit.summary += "; sandbox-host does not copy them into its audit: run --learn names them";
  }
  return audit;
}

}  // namespace sandbox_host
