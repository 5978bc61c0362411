// The core: config, modules, probe and launch commands, for one host process.
#pragma once

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/egress.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>
#include <sandbox_host/host/probe.hpp>
#include <sandbox_host/host/registry.hpp>
#include <sandbox_host/spec.hpp>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sandbox_host {

class Host {
 public:
  // Modules load on first use: a launch loads only the backends it probes or uses.
  explicit Host(Config config);
  // Writes the audit's counts of refusals past its burst: the sink itself may outlive the
  // host on another thread (a launch's watch, the seccomp supervisor) up to the process's exit.
  ~Host();

  // Loads every module the config enables now (start-up of a long-running host, and
  // `sandbox-host modules`); modules that fail are reported, not fatal.
  void load_enabled();

  const Config &config() const noexcept { return config_; }
  // Where every refusal of this host goes (the config's [audit]).
  AuditSink &audit() const noexcept { return *audit_; }
  const Registry &registry() const noexcept { return registry_; }

  // The broker operation's module, loaded with its [ops.<name>] settings on first use;
  // nullptr when it does not load (the registry has the reason, and the audit a record).
  std::shared_ptr<const LoadedModule> operation(const std::string &name) const;

  // What network proxied means on this host: the [egress] implementation, nullptr without
  // an [egress] table. Made on first use, when an egress module loads; throws, naming the
  // module, when it does not load.
  const Egress *egress() const;

  // Every enabled backend, probed now (sandbox-host probe).
  std::vector<BackendStatus> probe_all() const;

  // The best working backend by priority, or the one CLAWPATROL_SANDBOX_BACKEND forces.
  // Cached per value of that variable. Throws ProbeError.
  Availability probe();

  // The backend a plugin runs under: CLAWPATROL_SANDBOX_BACKEND, else the plugin's
  // `sandbox` setting, else probe(). A named backend that does not work is an error.
  std::string mode_for(const std::string &plugin_name);
  // The backend the caller names for this launch (run --backend: a gateway passing on what
  // its own probe chose), when it works here; else as mode_for(plugin_name). Never falls
  // through: a named backend that does not work is an error.
  std::string mode_for(const std::string &plugin_name, const std::optional<std::string> &named);

  // The command that launches spec's plugin under mode, with BaseEnv, the backend's
  // control variables and plugin_env (NAME=VALUE, plugin_env.hpp), whose names go to the
  // audit. The launch is bounded by the config's limits for the plugin (Config::limits_for),
  // whatever spec.limits says: they are the operator's; where the host has cgroups and the
  // backend re-executes stage 1, in a cgroup of its own (LaunchCommand::cgroup). Throws when
  // stage1() was never wired, for a bad Spec, for a plugin_env entry that names a variable BaseEnv
  // or the backend sets, or when mode names no loaded backend. overrides (NAME=VALUE, an
  // agent policy's) replace what BaseEnv and the backend set. Where the backend re-executes
  // stage 1, the plugin's environment travels in the Spec (Spec::env) and the command's
  // own holds sandbox-host's control variables alone: no variable a caller named reaches
  // the loader or libc of stage 1 or the sandbox's init.
  LaunchCommand command(const Spec &spec, const std::string &mode,
                        const std::vector<std::string> &plugin_env = {},
                        const std::vector<std::string> &overrides = {}) const;

  // For a process whose own executable has no stage1() hook (sandbox-host-broker, which
  // runs the launch service): stage 1 re-executes program, which has one, instead.
  void use_stage1_program(std::string program);

  // For SandboxPool. Whether mode's backend can set sandboxes up before their launch.
  bool prepares(const std::string &mode) const;
  // The command that starts a sandbox prepared for network under mode; its launch comes
  // later over control_fd (launch_channel.hpp), which the command must inherit.
  LaunchCommand prepare_command(const std::string &mode, Network network, int control_fd) const;
  // Checks spec as command() does and returns the Spec a prepared sandbox of mode receives
  // (bounded, with the plugin's environment in Spec::env), or nullopt when this launch
  // cannot use one (the backend does not re-exec or does not prepare).
  std::optional<Spec> prepared_launch_spec(const Spec &spec, const std::string &mode,
                                           const std::vector<std::string> &plugin_env = {}) const;
  // spec with the config's limits for its plugin, as command() launches it: memory as each
  // process's rlimit (Spec::process_memory) where no cgroup bounds it.
  Spec bounded(const Spec &spec) const;
  // Where launches' cgroups go on this host ([limits] cgroup), found on first use.
  const CgroupPlacement &cgroup_placement() const;
  // For a prepared sandbox's launch: its cgroup, if it has one, gets the plugin's bounds.
  void bound_cgroup(PluginCgroup *cgroup, const Spec &spec) const;
  // What the host's watch holds spec's launch to while it runs (LaunchCommand::watch).
  WatchOrder watch_order(const Spec &spec) const;
  // What spec's launch under mode is read against when it ends (LaunchCommand::death).
  DeathOrder death_order(const Spec &spec, const std::string &mode) const;

 private:
  struct CheckedLaunch {
    BackendModule backend;
    BackendCommand built;
    std::vector<std::string> env;  // BaseEnv and the backend's variables
  };
  // The Spec checked by the core and the backend, and the plugin's environment.
  CheckedLaunch checked_launch(const Spec &spec, const std::string &mode,
                               const std::vector<std::string> &plugin_env,
                               const std::vector<std::string> &overrides = {}) const;
  void require_stage1(const char *what) const;

  BackendModule backend(const std::string &name) const;
  std::string probed_mode_for(const std::string &plugin_name);
  // A backend a plugin's config names, probed once per Host like probe()'s answer.
  BackendStatus configured_status(const std::string &name);
  BackendStatus status_of(const std::string &name) const;
  Availability probe_uncached(const std::optional<std::string> &forced) const;

  Config config_;
  std::string stage1_program_ = "/proc/self/exe";
  bool stage1_elsewhere_ = false;
  // Shared with the launches' cgroups, which may outlive this Host.
  std::shared_ptr<AuditSink> audit_;
  mutable Registry registry_;  // a cache of loaded modules, filled on first use
  std::mutex probe_mutex_;
  std::map<std::optional<std::string>, std::variant<Availability, std::string>> probe_cache_;
  std::map<std::string, BackendStatus> configured_cache_;
  mutable std::mutex egress_mutex_;
  mutable std::unique_ptr<Egress> egress_;
  mutable std::once_flag placement_once_;
  mutable std::optional<CgroupPlacement> placement_;
};

// The process's Host, built from the default config on first use.
Host &default_host();

// The name a launch's records, cgroup and death report go by: the Spec's plugin name, or its
// binary's file name where it has none.
std::string launch_name(const Spec &spec);

// The Go package's free functions (docs/design.md#the-go-package), on default_host().
Availability probe();
LaunchCommand command(const Spec &spec, const std::string &mode);

}  // namespace sandbox_host
