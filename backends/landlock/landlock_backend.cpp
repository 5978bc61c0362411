// The landlock backend (mode "landlock"): the degraded Linux fallback where user
// namespaces do not work. No namespaces: stage 1 (the re-executed host binary) restricts
// itself with a Landlock ruleset, drops its capabilities, sets no_new_privs, loads the
// seccomp filter (one that also refuses System V IPC and POSIX message queues, and for
// network "none" every socket family but AF_UNIX)
// and execs the plugin, so the plugin is the host's own child. What it leaves uncovered is
// its probe's warning (coverage_warning.cpp). Network "proxied" needs a network namespace
// of its own, so this backend refuses it, both when the host builds the command and in
// stage 1, rather than run the plugin with the host's network.
#include "coverage_warning.hpp"
#include "landlock_abi.hpp"
#include "landlock_policy.hpp"
#include "ruleset.hpp"
#include "view_grants.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/resource_limits.hpp>
#include <sandbox_host/backends/seccomp_channel.hpp>
#include <sandbox_host/backends/seccomp_status.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::landlock {
namespace {

using backends::throw_errno;

// Why Landlock cannot be used here, from landlock_create_ruleset's error: refused by a
// seccomp filter (a container's profile answers EPERM to what it does not list; the kernel
// itself answers ENOSYS or EOPNOTSUPP), or not in the kernel, where the LSM list names it or
// not.
ProbeReport unavailable(int error) {
  ProbeReport report;
  std::ifstream lsm("/sys/kernel/security/lsm");
  std::string active;
  if ((error == EPERM || error == EACCES) && backends::under_seccomp_filter()) {
    report.reason = std::string("landlock_create_ruleset failed: ") + std::strerror(error) +
                    " (a seccomp filter on this process, as a container runtime installs, "
                    "refuses it)";
    report.hint =
        "run the container with a seccomp profile that allows landlock_create_ruleset, "
        "landlock_add_rule and landlock_restrict_self (current Docker, containerd and "
        "podman profiles do)";
  } else if (std::getline(lsm, active) && active.find("landlock") == std::string::npos) {
    report.reason = "Landlock is not among the kernel's active security modules (" + active + ")";
    report.hint = "boot with lsm=" + active +
                  ",landlock, or build the kernel with landlock in "
                  "CONFIG_LSM";
  } else {
    report.reason = "the kernel has no Landlock (landlock_create_ruleset is not available)";
    report.hint = "Landlock needs Linux 5.13 or newer with CONFIG_SECURITY_LANDLOCK=y";
  }
  return report;
}

// Why a proxied plugin is refused here; the host's message names the backend.
constexpr const char *kNoProxied =
    "network \"proxied\" needs an empty network namespace whose only way out is the egress "
    "proxy, and Landlock confines a plugin without namespaces; it is refused rather than run "
    "with the host's network (the namespaces backend runs it)";

// Whether a command under a view may start where it was launched, as a shell would start it:
// a directory it can list, or one the view lets it read (a directory on the way to a rule
// of less access cannot be listed, but what is in it can be used). Asked once restricted.
bool starts_where_launched(const Spec &spec) {
  if (spec.view.empty()) return false;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return false;
  const UniqueFd listed(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return listed || view_access(spec.view, cwd) != PathAccess::none;
}

[[noreturn]] void exec_plugin(const Spec &spec) {
  // A plugin starts in TmpDir, the directory it was granted, never where a symlink put in
  // its place since would lead; so does a command launched where its view hides.
  if (!starts_where_launched(spec) && ::fchdir(open_without_symlinks(spec.tmp_dir).get()) != 0) {
    throw_errno("exec", "chdir " + spec.tmp_dir);
  }
  std::vector<char *> argv{const_cast<char *>(spec.binary_path.c_str())};
  for (const auto &arg : spec.args) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  // The plugin's environment, at its own execve: stage 1 ran with sandbox-host's.
  std::vector<char *> envp;
  for (const auto &entry : spec.env) envp.push_back(const_cast<char *>(entry.c_str()));
  envp.push_back(nullptr);
  ::execve(spec.binary_path.c_str(), argv.data(), envp.data());
  throw_errno("exec", spec.binary_path);
}

// Everything that does not need the Spec first, so that a prepared sandbox has it done
// before its launch; take_launch gives the Spec.
template <class TakeLaunch>
[[noreturn]] void contain(Network network, TakeLaunch take_launch) {
  if (network == Network::proxied) throw backends::SetupError("network", kNoProxied);
  const int abi = kernel_abi();
  if (abi < 1) throw backends::SetupError("landlock", unavailable(errno).reason);
  const AbiRights rights = rights_for(abi);
  const SystemPolicy policy = system_policy(network, rights);
  Ruleset ruleset(policy.attr);
  for (const Grant &grant : policy.grants) ruleset.allow_if_present(grant.path, grant.access);

  backends::SeccompChannel seccomp = backends::SeccompChannel::take_from_environment();
  backends::drop_capabilities();
  backends::set_no_new_privs();
  backends::install_seccomp_filter(network == Network::none
                                       ? backends::Namespaces::none_network_none
                                       : backends::Namespaces::none_network_outbound,
                                   seccomp);
  const Spec spec = take_launch();
  for (const Grant &grant : spec_grants(spec, rights)) ruleset.allow(grant.path, grant.access);
  if (!spec.view.empty()) {
    // Listed now, with the launching user's own rights: the view as it exists at the start.
    for (const Grant &grant : view_grants(spec.view, rights)) {
      ruleset.allow_exact_if_present(grant.path, grant.access);
    }
    // The view leaves the host readable, and a pathname unix socket needs no more.
    backends::install_unix_socket_filter();
  }
  ruleset.restrict_self(policy.restrict_flags);
  // Without a user namespace of its own, RLIMIT_NPROC counts every process of the launching
  // user on the host, the plugin's and the rest alike (docs/security-model.md).
  backends::apply_plugin_rlimits(spec);
  exec_plugin(spec);
}

class LandlockBackend final : public Backend {
 public:
  ProbeReport probe() override {
    const int abi = kernel_abi();
    if (abi < 1) return unavailable(errno);
    ProbeReport report;
    report.available = true;
    report.landlock_abi = abi;
    report.warning = coverage_warning(abi);
    report.bounds = backends::confined_plugin_bounds(backends::ProcessCount::host_user);
    for (const char *tmpfs : {"tmp_size", "tmp_inodes", "shm_size"}) {
      report.bounds.push_back(
          {tmpfs, false,
           "Landlock keeps the host's /tmp and /dev/shm: a plugin is granted neither, and a "
           "policy's command writes them unbounded where its view lets it"});
    }
    return report;
  }

  void build_command(const Spec &spec, CommandBuilder &command) override {
    if (spec.network == Network::proxied) throw std::invalid_argument(kNoProxied);
    command.reexec_stage1();
  }

  void stage1(const Spec &spec) override {
    contain(spec.network, [&spec] { return spec; });
  }

  void stage1_prepared(Network network, LaunchSource &source) override {
    contain(network, [&source] { return source.await_launch(); });
  }
};

}  // namespace
}  // namespace sandbox_host::landlock

SANDBOX_HOST_BACKEND_MODULE(sandbox_host::landlock::LandlockBackend, "landlock", "0.1.0",
                            "Landlock file, TCP and IPC-scope rules without namespaces: the "
                            "degraded fallback where user namespaces do not work")
