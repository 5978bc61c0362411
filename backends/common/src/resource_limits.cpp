#include <sandbox_host/backends/resource_limits.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sandbox_host::backends {
namespace {

rlim_t as_rlim(std::uint64_t bound) {
  return bound == Limits::kUnlimited ? RLIM_INFINITY : static_cast<rlim_t>(bound);
}

rlimit bounded(__rlimit_resource_t resource, const char *name, std::uint64_t bound) {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) throw_errno("limits", std::string("getrlimit ") + name);
  const rlim_t wanted = std::min(as_rlim(bound), current.rlim_max);
  return {wanted, wanted};
}

// ", at most sandbox-host's own hard limit N" where resource has one, which no bound may
// exceed; "" where it has none.
std::string hard_limit_note(__rlimit_resource_t resource) {
  rlimit hard{};
  ::getrlimit(resource, &hard);
  return hard.rlim_max == RLIM_INFINITY
             ? std::string()
             : ", at most sandbox-host's own hard limit " + std::to_string(hard.rlim_max);
}

std::string describe(const char *name, const rlimit &value) {
  return std::string("setrlimit ") + name + " " +
         (value.rlim_max == RLIM_INFINITY ? std::string("unlimited")
                                          : std::to_string(value.rlim_max));
}

}  // namespace

PluginRlimits::Entry PluginRlimits::entry(__rlimit_resource_t resource, const char *name,
                                          std::uint64_t bound) {
  const rlimit value = bounded(resource, name, bound);
  return {resource, value, describe(name, value)};
}

PluginRlimits::PluginRlimits(const Spec &spec)
    : entries_{entry(RLIMIT_NPROC, "RLIMIT_NPROC", spec.limits.processes),
               entry(RLIMIT_NOFILE, "RLIMIT_NOFILE", spec.limits.open_files),
               entry(RLIMIT_FSIZE, "RLIMIT_FSIZE", spec.limits.file_size),
               // Not RLIMIT_AS: Go reserves about 1 GiB of address space at its start and
               // does not start under an RLIMIT_AS of 512M (docs/security-model.md).
               entry(RLIMIT_DATA, "RLIMIT_DATA", spec.process_memory),
               Entry{RLIMIT_CORE, {0, 0}, "setrlimit RLIMIT_CORE 0"}} {}

int PluginRlimits::apply() const noexcept {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (::setrlimit(entries_[i].resource, &entries_[i].value) != 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void apply_plugin_rlimits(const Spec &spec) {
  const PluginRlimits rlimits(spec);
  const int refused = rlimits.apply();
  if (refused >= 0) throw_errno("limits", rlimits.shown(refused));
}

std::vector<LimitBound> confined_plugin_bounds(ProcessCount count) {
  std::vector<LimitBound> bounds;
  if (::geteuid() == 0) {
    bounds.push_back({"processes", false,
                      "RLIMIT_NPROC binds no process of uid 0, which a root launcher's plugin "
                      "has; only a cgroup's pids.max bounds it (launch as another user)"});
  } else if (count == ProcessCount::user_namespace) {
    bounds.push_back({"processes", true,
                      "RLIMIT_NPROC, counting the processes of the sandbox's own user namespace"});
  } else {
    bounds.push_back({"processes", true,
                      "RLIMIT_NPROC, counting every process of uid " + std::to_string(::geteuid()) +
                          " on the host, so a bound its other processes already use up leaves "
                          "the plugin none"});
  }
  bounds.push_back({"open_files", true, "RLIMIT_NOFILE"});
  bounds.push_back({"file_size", true, "RLIMIT_FSIZE" + hard_limit_note(RLIMIT_FSIZE)});
  // The host sends it only where no cgroup bounds memory; probe shows the cgroup where one does.
  bounds.push_back({"memory", true,
                    "RLIMIT_DATA per process (no cgroup)" + hard_limit_note(RLIMIT_DATA) +
                        ": a sandbox may use processes times memory; shared memory, tmpfs and "
                        "page cache are not counted"});
  for (const char *scratch : {"scratch_size", "scratch_files"}) {
    bounds.push_back({scratch, true,
                      "the plugin writes on the host's disk only in SocketDir and TmpDir (a "
                      "policy's command also in its Write paths, which it does not bound)"});
  }
  return bounds;
}

}  // namespace sandbox_host::backends
