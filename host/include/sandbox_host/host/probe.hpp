// Probe: which backend works on this host (docs/design.md#probe-and-availability).
#pragma once

#include <sandbox_host/spec.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host {

struct Availability {
  // The best working backend. Never "off" unless CLAWPATROL_SANDBOX_BACKEND=off: when
  // nothing works, probe() throws ProbeError instead.
  std::string mode;
  // Non-empty when mode is a degraded fallback: exactly what it does not cover.
  std::string warning;
  // The kernel's Landlock ABI version (0 when unsupported), as the chosen backend's probe
  // reported it: the namespaces and Landlock backends do; off and seatbelt report 0.
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
  // The kernel's Landlock ABI, where the backend's probe looked (0 otherwise).
  int landlock_abi = 0;
  // Since ABI 1.7 (empty before): how it bounds each limit of Limits here.
  std::vector<LimitBound> bounds;
  int abi_minor = 0;
  // Whether its launches re-execute stage 1, which joins the launch's cgroup.
  bool reexecs_stage1 = false;
};

// No backend works, or the forced one does not; the message names every reason.
class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The kernel's Landlock ABI as the backends' probes reported it (the core asks the kernel
// nothing itself): the highest reported, 0 when none did.
int reported_landlock_abi(const std::vector<BackendStatus> &statuses) noexcept;

}  // namespace sandbox_host
