// A launch's Limits as the rlimits of the plugin's process (docs/security-model.md says
// which of them bound what, per backend). Worked out before the plugin's process exists, so
// that a process between vfork and exec only makes the setrlimit calls.
#pragma once

#include <sandbox_host/spec.hpp>

#include <sys/resource.h>

#include <array>
#include <string>
#include <vector>

namespace sandbox_host::backends {

class PluginRlimits {
 public:
  // Each bound of spec.limits, and spec.process_memory as RLIMIT_DATA, never above this
  // process's hard limit: raising that needs a privilege of the initial user namespace, and
  // the lower bound holds anyway. Core dumps always off.
  explicit PluginRlimits(const Spec &spec);

  // Sets every one on this process. Returns the index of the one the kernel refused, with
  // errno set, or -1. Allocates nothing.
  int apply() const noexcept;
  // "setrlimit RLIMIT_NPROC 1024", for the one apply() named.
  const std::string &shown(int index) const noexcept { return entries_[index].shown; }

 private:
  struct Entry {
    __rlimit_resource_t resource;
    rlimit value;
    std::string shown;
  };
  static Entry entry(__rlimit_resource_t resource, const char *name, std::uint64_t bound);
  std::array<Entry, 5> entries_;
};

// PluginRlimits(spec).apply(), throwing SetupError("limits", ...) when one is refused.
void apply_plugin_rlimits(const Spec &spec);

// Whose processes RLIMIT_NPROC counts under a backend: those of the sandbox's own user
// namespace, or every process of the launching user on the host.
enum class ProcessCount { user_namespace, host_user };

// For the probe of a backend that confines the plugin (ProbeReport::bounds): what the rlimits
// above hold on this host, and that the plugin writes on the host's disk only in SocketDir
// and TmpDir, which the host's watch bounds. The tmpfs bounds are the caller's to add.
std::vector<LimitBound> confined_plugin_bounds(ProcessCount count);

}  // namespace sandbox_host::backends
