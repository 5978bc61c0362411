// What a plugin may touch under Landlock: the rights of each grant, from the Spec, the
// network and the kernel's ABI.
#pragma once

#include "landlock_abi.hpp"

#include <sandbox_host/spec.hpp>

#include <string>
#include <vector>

namespace sandbox_host::landlock {

struct Grant {
  std::string path;
  uint64_t access = 0;
};

// Everything but the Spec's own paths: the handled rights and scopes, the system's grants
// (read and execute of the system directories, read of the /etc entries, read and write of a few
// devices, read of the calling process's own /proc directory; those missing on this host
// are left out) and the restrict_self flags.
struct SystemPolicy {
  RulesetAttr attr;
  std::vector<Grant> grants;
  uint32_t restrict_flags = 0;
};
SystemPolicy system_policy(Network network, const AbiRights &rights);

// The Spec's grants: read and execute of ReadPaths and the binary, every right in
// SocketDir and TmpDir. Each must exist.
std::vector<Grant> spec_grants(const Spec &spec, const AbiRights &rights);

}  // namespace sandbox_host::landlock
