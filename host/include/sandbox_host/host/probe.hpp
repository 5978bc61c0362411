// Probe (seed 004): which backend works on this host.
#pragma once

#include <stdexcept>
#include <string>

namespace sandbox_host {

struct Availability {
  // The best working backend. Never "off" unless CLAWPATROL_SANDBOX_BACKEND=off: when
  // nothing works, probe() throws ProbeError instead.
  std::string mode;
  // Non-empty when mode is a degraded fallback: exactly what it does not cover.
  std::string warning;
  // The kernel's Landlock ABI version (0 when unsupported).
  int landlock_abi = 0;
};

// One backend as probe saw it.
struct BackendStatus {
  std::string name;
  bool loaded = false;
  bool available = false;
  std::string reason;
  std::string hint;
  std::string warning;
  std::string file;
  std::string version;
};

// No backend works, or the forced one does not; the message names every reason.
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION); 0 when unsupported.
int kernel_landlock_abi() noexcept;

}  // namespace sandbox_host
