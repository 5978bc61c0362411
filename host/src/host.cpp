#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/base_env.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/launch_client/plugin_env.hpp>
#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/host/stage1.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace sandbox_host {

void Host::require_stage1(const char *what) const {
  if (!stage1_elsewhere_ && !stage1_wired()) {
    throw std::logic_error(std::string(what) +
                           ": sandbox_host::stage1() was never called; make it the first "
                           "statement of main() (tests: SANDBOX_HOST_TEST_MAIN()), since Linux "
                           "backends re-execute this binary to set the sandbox up");
  }
}

namespace {

std::map<std::pair<ModuleKind, std::string>, ModuleSettings> module_settings(const Config &config) {
  std::map<std::pair<ModuleKind, std::string>, ModuleSettings> settings;
  for (const auto &[name, op] : config.op_settings) {
    settings.emplace(std::make_pair(ModuleKind::broker_op, name), op.entries);
  }
  if (config.egress && !config.egress->builtin()) {
    settings.emplace(std::make_pair(ModuleKind::egress, config.egress->implementation),
                     config.egress->module_settings);
  }
  return settings;
}

}  // namespace

Host::Host(Config config)
    : config_(std::move(config)),
      audit_(make_audit_sink(config_.audit_format, config_.audit_path)),
      registry_(config_.module_dirs, module_settings(config_)) {}

void Host::load_enabled() {
  registry_.load_enabled(config_, *audit_);
}

const Egress *Host::egress() const {
  if (!config_.egress) return nullptr;
  std::lock_guard lock(egress_mutex_);
  if (!egress_) egress_ = make_egress(*config_.egress, registry_, *audit_);
  return egress_.get();
}

std::shared_ptr<const LoadedModule> Host::operation(const std::string &name) const {
  return registry_.acquire(ModuleKind::broker_op, name, *audit_);
}

BackendModule Host::backend(const std::string &name) const {
  const auto &enabled = config_.backends_enabled;
  if (std::find(enabled.begin(), enabled.end(), name) == enabled.end()) {
    throw std::runtime_error("backend \"" + name + "\" is not enabled in the config");
  }
  auto module = registry_.acquire(ModuleKind::backend, name, *audit_);
  if (!module) {
    std::string failure = registry_.failure(ModuleKind::backend, name);
    throw std::runtime_error("backend \"" + name + "\" is not loaded: " +
                             (failure.empty() ? "not enabled in the config" : failure));
  }
  return BackendModule(std::move(module));
}

void Host::use_stage1_program(std::string program) {
  stage1_program_ = std::move(program);
  stage1_elsewhere_ = true;
}

Host::CheckedLaunch Host::checked_launch(const Spec &spec, const std::string &mode,
                                         const std::vector<std::string> &plugin_env,
                                         const std::vector<std::string> &overrides) const {
  require_stage1("command");
  try {
    check_spec(spec);
  } catch (const SpecError &e) {
    audit_->record({"spec", spec.plugin_name, "spec-" + e.field(), e.what(),
                    "paths in a Spec must be absolute and symlink-resolved"});
    throw;
  }
  if (!spec.env.empty()) {
    const std::string why =
        "spec: env is the host's to compose (BaseEnv, the backend's and the caller's named "
        "variables); pass a plugin's variables as its plugin_env";
    audit_->record({"spec", spec.plugin_name, "spec-env", why,
                    "leave Spec::env empty; name the variables the plugin gets instead"});
    throw std::invalid_argument(why);
  }
  CheckedLaunch launch{this->backend(mode), {}, {}};
  const AbiVersion abi = launch.backend.module().abi();
  if (!spec.view.empty() && abi.minor < spec_since::view) {
    throw std::runtime_error(
        "backend " + mode + " is built against module ABI " + std::to_string(abi.major) + "." +
        std::to_string(abi.minor) + ", which has no agent policy view (1." +
        std::to_string(spec_since::view) + "); it cannot hold this launch to its policy");
  }
  if (abi.minor < spec_since::limits) {
    audit_->record({mode, spec.plugin_name, "limits-unenforced",
                    "launch without [limits]: backend " + mode + " is built against module ABI " +
                        std::to_string(abi.major) + "." + std::to_string(abi.minor) +
                        ", which has no limits (1." + std::to_string(spec_since::limits) + ")",
                    "rebuild the backend against this SDK to bound what its plugins consume",
                    false});
  }
  try {
    launch.built = launch.backend.build_command(spec);
  } catch (const std::exception &e) {
    audit_->record({mode, spec.plugin_name, "backend-command", e.what(),
                    "the backend refused this Spec; see its message"});
    throw;
  }
  launch.env = base_env(spec);
  for (const auto &[name, value] : launch.built.env) {
    if (name.starts_with(kControlPrefix) || name.find('=') != std::string::npos || name.empty()) {
      throw std::runtime_error("backend " + mode + " set the variable \"" + name +
                               "\", which may not reach a plugin");
    }
    launch.env.push_back(name + "=" + value);
  }
  const std::size_t own_count = launch.env.size();
  for (const auto &entry : plugin_env) {
    try {
      // Refuses a BaseEnv name, a CLAWPATROL_* one and one that is not portable.
      check_env_entry(entry, "env");
      if (entry.find('=') == std::string::npos) {
        throw std::invalid_argument("env " + entry + ": a plugin's variable is NAME=VALUE here");
      }
      const std::string name = entry.substr(0, entry.find('='));
      const auto set_already = std::find_if(
          launch.env.begin(), launch.env.end(),
          [&](const std::string &e) { return e.compare(0, name.size() + 1, name + "=") == 0; });
      if (set_already != launch.env.end()) {
        throw std::invalid_argument(
            "env " + name + ": " +
            (static_cast<std::size_t>(set_already - launch.env.begin()) >= own_count
                 ? std::string("named twice; a variable passes once")
                 : "backend " + mode + " sets this variable for the plugin; it cannot be passed"));
      }
    } catch (const std::invalid_argument &e) {
      audit_->record({"spec", spec.plugin_name, "plugin-env", e.what(),
                      "a plugin's variables are NAME=VALUE, each once, none that BaseEnv or the "
                      "backend sets and no CLAWPATROL_*"});
      throw;
    }
    launch.env.push_back(entry);
  }
  for (const auto &entry : overrides) {
    const std::string name = entry.substr(0, entry.find('='));
    std::erase_if(launch.env, [&](const std::string &e) {
      return e.compare(0, name.size() + 1, name + "=") == 0;
    });
    launch.env.push_back(entry);
  }
  if (!plugin_env.empty()) {
    audit_->record(
        {"launch", spec.plugin_name, "env-passed",
         "launch under " + mode + " with the caller's variables " + env_names(plugin_env),
         "names only; the values are never recorded", false});
  }
  return launch;
}

LaunchCommand Host::command(const Spec &spec, const std::string &mode,
                            const std::vector<std::string> &plugin_env,
                            const std::vector<std::string> &overrides) const {
  CheckedLaunch launch = checked_launch(spec, mode, plugin_env, overrides);
  LaunchCommand command;
  if (launch.built.reexec_stage1) {
    command.program = stage1_program_;
    // The control variables alone: what the caller named is the Spec's env, for the
    // plugin's execve.
    command.env.push_back(std::string(kEnvStage1) + "=" + mode);
    const std::string name = launch_name(spec);
    command.seccomp = SeccompOrder{name, mode, audit_, nullptr};
    if (cgroup_placement().version() != CgroupPlacement::Version::none) {
      command.cgroup = cgroup_placement().make(name, audit_);
      command.cgroup->bound(spec.plugin_name, config_.limits_for(spec.plugin_name));
      command.env.push_back(std::string(kEnvCgroup) + "=" + command.cgroup->join_list());
    }
    Spec launched = bounded(spec);
    launched.env = std::move(launch.env);
    const std::string payload =
        encode_stage1_payload({mode, launch.backend.module().file().string(), launched});
    if (payload.size() > kMaxLaunchMessage) {
      throw std::length_error("launch for plugin \"" + spec.plugin_name +
                              "\": " + std::to_string(payload.size()) + " bytes of Spec, over " +
                              std::to_string(kMaxLaunchMessage));
    }
    command.env.push_back(std::string(kEnvSpec) + "=" + payload);
  } else {
    // The backend's program is the plugin's own execve, or one that makes it (sandbox-exec).
    command.program = launch.built.program;
    command.args = std::move(launch.built.args);
    command.env = std::move(launch.env);
  }
  command.watch = watch_order(spec);
  command.death = death_order(spec, mode);
  return command;
}

std::optional<Spec> Host::prepared_launch_spec(const Spec &spec, const std::string &mode,
                                               const std::vector<std::string> &plugin_env) const {
  CheckedLaunch launch = checked_launch(spec, mode, plugin_env);
  if (!launch.built.reexec_stage1 || !launch.backend.prepares()) return std::nullopt;
  Spec launched = bounded(spec);
  launched.env = std::move(launch.env);
  return launched;
}

Spec Host::bounded(const Spec &spec) const {
  Spec out = spec;
  const LaunchLimits limits = config_.limits_for(spec.plugin_name);
  out.limits = limits.process;
  // A container seldom delegates a cgroup: without memory.max, each process's RLIMIT_DATA is
  // what holds memory at all. With it, the cgroup alone, which counts what the rlimit misses.
  out.process_memory =
      cgroup_placement().bounds("memory") ? Limits::kUnlimited : limits.cgroup.memory;
  return out;
}

const CgroupPlacement &Host::cgroup_placement() const {
  std::call_once(placement_once_,
                 [this] { placement_.emplace(CgroupPlacement::find(config_.cgroup)); });
  return *placement_;
}

WatchOrder Host::watch_order(const Spec &spec) const {
  WatchOrder order{
      spec.plugin_name, {spec.socket_dir}, config_.limits_for(spec.plugin_name).watch, audit_};
  if (spec.tmp_dir != spec.socket_dir) order.dirs.push_back(spec.tmp_dir);
  return order;
}

DeathOrder Host::death_order(const Spec &spec, const std::string &mode) const {
  return {launch_name(spec), mode, config_.limits_for(spec.plugin_name), audit_};
}

void Host::bound_cgroup(PluginCgroup *cgroup, const Spec &spec) const {
  if (cgroup != nullptr) cgroup->bound(spec.plugin_name, config_.limits_for(spec.plugin_name));
}

bool Host::prepares(const std::string &mode) const {
  return backend(mode).prepares();
}

LaunchCommand Host::prepare_command(const std::string &mode, Network network,
                                    int control_fd) const {
  require_stage1("prepare");
  const BackendModule backend = this->backend(mode);
  if (!backend.prepares()) {
    throw std::logic_error("backend " + mode + " does not prepare sandboxes");
  }
  // Nothing of the host's environment: the launch brings the plugin's.
  LaunchCommand command;
  command.program = stage1_program_;
  command.env = {
      std::string(kEnvStage1) + "=" + mode,
      std::string(kEnvPrepared) + "=" +
          encode_prepared_payload({mode, backend.module().file().string(), network, control_fd})};
  // Named at its launch (Child::name_plugin).
  command.seccomp = SeccompOrder{"prepared", mode, audit_, nullptr};
  // Unbounded until its launch (bound_cgroup), which names the plugin.
  if (cgroup_placement().version() != CgroupPlacement::Version::none) {
    command.cgroup = cgroup_placement().make("prepared", audit_);
    command.env.push_back(std::string(kEnvCgroup) + "=" + command.cgroup->join_list());
  }
  return command;
}

Host::~Host() {
  audit_->flush();
}

std::string launch_name(const Spec &spec) {
  return spec.plugin_name.empty() ? std::filesystem::path(spec.binary_path).filename().string()
                                  : spec.plugin_name;
}

Host &default_host() {
  static Host host(load_config_or_defaults(std::nullopt));
  return host;
}

Availability probe() {
  return default_host().probe();
}

LaunchCommand command(const Spec &spec, const std::string &mode) {
  return default_host().command(spec, mode, {});
}

}  // namespace sandbox_host
