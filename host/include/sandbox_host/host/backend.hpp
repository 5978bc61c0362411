// A backend module seen through its C function table.
#pragma once

#include <sandbox_host/host/limits/death_report.hpp>
#include <sandbox_host/host/limits/launch_warden.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/host/seccomp/seccomp_supervisor.hpp>
#include <sandbox_host/spec.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {

// What a backend asks the host to start.
class PluginCgroup;

struct LaunchCommand {
  std::string program;
  std::vector<std::string> args;  // after the program; argv[0] is the program
  std::vector<std::string> env;   // NAME=VALUE; the caller may append (a handshake's vars)
  // The launch's cgroup, which stage 1 joins (limits/plugin_cgroup.hpp); spawn() gives it to
  // the Child, which removes it when the plugin ended. Where the caller spawns the command
  // itself, the cgroup outlives this only while processes are in it, and a later
  // sandbox-host removes it once it is empty and this process is gone.
  std::shared_ptr<PluginCgroup> cgroup;
  // What the host's watch holds the launch to while it runs (limits/launch_warden.hpp):
  // spawn() starts it. A caller that spawns the command itself goes without.
  std::optional<WatchOrder> watch;
  // Where the launch's refused system calls are recorded (seccomp/seccomp_supervisor.hpp):
  // spawn() makes the channel stage 1 hands its filter's listener over on. Unset where stage
  // 1 does not run; a caller that spawns the command itself goes without.
  std::optional<SeccompOrder> seccomp;
  // run --learn: the calls the learn filter traces go to it (seccomp/traced_call.hpp).
  std::shared_ptr<TracedCallObserver> learn;
  // What the launch's end is read against (limits/death_report.hpp): the Child records the
  // bound that killed the plugin, if one did.
  std::optional<DeathOrder> death;
};

struct BackendCommand {
  bool reexec_stage1 = false;
  std::string program;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

class BackendModule {
 public:
  explicit BackendModule(std::shared_ptr<const LoadedModule> module);

  const std::string &name() const noexcept { return module_->name(); }
  const LoadedModule &module() const noexcept { return *module_; }

  ProbeReport probe() const;
  BackendCommand build_command(const Spec &spec) const;
  // Returns only when the backend failed; the message reads "<step>: <reason>".
  std::string stage1(const Spec &spec) const;
  // Whether the backend can set a sandbox up before its launch is known (ABI 1.1).
  bool prepares() const noexcept;
  // Like stage1(), for a sandbox prepared for network that takes its launch from source.
  std::string stage1_prepared(Network network, const sh_launch_source &source) const;

 private:
  std::shared_ptr<const LoadedModule> module_;
  const sh_backend_v1 *table_;
};

}  // namespace sandbox_host
