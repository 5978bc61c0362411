#include "landlock_policy.hpp"

#include <sandbox_host/system_paths.hpp>

#include <unistd.h>

#include <string>

namespace sandbox_host::landlock {
namespace {

constexpr uint64_t kReadExecute = kFsExecute | kFsReadFile | kFsReadDir;
constexpr uint64_t kRead = kFsReadFile | kFsReadDir;
// A device's ioctls (isatty on a redirected stream) need the ioctl right.
constexpr uint64_t kDevice = kFsReadFile | kFsWriteFile | kFsIoctlDev;

}  // namespace

SystemPolicy system_policy(Network network, const AbiRights &rights) {
  SystemPolicy policy;
  policy.attr.handled_access_fs = rights.fs;
  if (network == Network::none) {
    // No rule grants a port: no TCP bind or connect at all.
    policy.attr.handled_access_net = rights.net;
    policy.attr.scoped = rights.scoped;
  } else {
    // The host's network is granted; signals still stay inside the domain.
    policy.attr.scoped = rights.scoped & kScopeSignal;
  }
  for (const char *dir : kSystemDirs) policy.grants.push_back({dir, kReadExecute});
  // Configuration, not programs: read only.
  for (const char *entry : kEtcEntries) policy.grants.push_back({entry, kRead});
  for (const char *device : kDevices) {
    policy.grants.push_back({std::string("/dev/") + device, kDevice});
  }
  // Its own /proc directory only (/proc/self once the plugin is exec'ed in this process):
  // programs read their maps, status and fds there; everything else of /proc stays shut.
  policy.grants.push_back({"/proc/" + std::to_string(::getpid()), kRead});
  // Denials after the exec of the plugin are the ones worth reading in the audit log.
  policy.restrict_flags = rights.restrict_flags & kLogNewExecOn;
  return policy;
}

std::vector<Grant> spec_grants(const Spec &spec, const AbiRights &rights) {
  std::vector<Grant> grants;
  for (const auto &path : spec.read_paths) grants.push_back({path, kReadExecute});
  grants.push_back({spec.binary_path, kReadExecute});
  grants.push_back({spec.socket_dir, rights.fs});
  grants.push_back({spec.tmp_dir, rights.fs});
  return grants;
}

}  // namespace sandbox_host::landlock
