// Probe: which backend works on this host, and which one a launch runs under. A backend is
// probed only when a choice needs it, and its answer is kept for the host's life.
#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>

#include <boost/algorithm/string/join.hpp>

#include <algorithm>
#include <cstdlib>

namespace sandbox_host {
namespace {

std::optional<std::string> forced_backend() {
  const char *value = ::getenv(std::string(kEnvBackend).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string with_hint(const BackendStatus &status) {
  return status.reason + (status.hint.empty() ? "" : " (hint: " + status.hint + ")");
}

}  // namespace

BackendStatus Host::status_of(const std::string &name) const {
  BackendStatus status;
  status.name = name;
  auto module = registry_.acquire(ModuleKind::backend, name, *audit_);
  if (!module) {
    std::string failure = registry_.failure(ModuleKind::backend, name);
    status.reason = failure.empty() ? "not enabled in the config" : failure;
    return status;
  }
  status.loaded = true;
  status.file = module->file().string();
  status.version = module->version();
  ProbeReport report = BackendModule(module).probe();
  status.available = report.available;
  status.reason = report.reason;
  status.hint = report.hint;
  status.warning = report.warning;
  status.landlock_abi = report.landlock_abi;
  status.bounds = std::move(report.bounds);
  status.abi_minor = module->abi().minor;
  try {
    Spec plain;
    plain.binary_path = "/bin/true";
    status.reexecs_stage1 = BackendModule(module).build_command(plain).reexec_stage1;
  } catch (const std::exception &) {
    // A backend that refuses even this launch runs none: it joins no cgroup either.
  }
  return status;
}

std::vector<BackendStatus> Host::probe_all() const {
  std::vector<BackendStatus> all;
  for (const auto &name : config_.backends_enabled) all.push_back(status_of(name));
  return all;
}

Availability Host::probe_uncached(const std::optional<std::string> &forced) const {
  // A backend is probed only when the choice needs it; the Landlock ABI is what the chosen
  // one reported.
  if (forced) {
    const auto &enabled = config_.backends_enabled;
    if (std::find(enabled.begin(), enabled.end(), *forced) == enabled.end()) {
      throw ProbeError(
          std::string(kEnvBackend) + "=" + *forced +
          ": no such backend enabled; enabled backends: " + boost::algorithm::join(enabled, ", "));
    }
    const BackendStatus status = status_of(*forced);
    if (!status.available) {
      throw ProbeError(std::string(kEnvBackend) + "=" + *forced +
                       ": the forced backend does "
                       "not work here, and a forced backend never falls through: " +
                       with_hint(status));
    }
    return {*forced, status.warning, status.landlock_abi};
  }
  std::string reasons;
  for (const auto &name : config_.backend_priority) {
    const BackendStatus status = status_of(name);
    if (status.available) return {name, status.warning, status.landlock_abi};
    reasons += (reasons.empty() ? "" : "; ") + name + ": " + with_hint(status);
  }
  throw ProbeError("no sandbox backend works on this host (" +
                   (reasons.empty() ? std::string("backends.priority is empty") : reasons) +
                   "); to run a plugin unsandboxed anyway, write sandbox = \"off\" in its "
                   "[plugins.<name>] table");
}

BackendStatus Host::configured_status(const std::string &name) {
  std::lock_guard lock(probe_mutex_);
  auto it = configured_cache_.find(name);
  if (it == configured_cache_.end()) it = configured_cache_.emplace(name, status_of(name)).first;
  return it->second;
}

Availability Host::probe() {
  require_stage1("probe");
  const auto forced = forced_backend();
  std::lock_guard lock(probe_mutex_);
  auto it = probe_cache_.find(forced);
  if (it == probe_cache_.end()) {
    try {
      it = probe_cache_.emplace(forced, probe_uncached(forced)).first;
    } catch (const ProbeError &e) {
      it = probe_cache_.emplace(forced, std::string(e.what())).first;
    }
  }
  if (const auto *error = std::get_if<std::string>(&it->second)) throw ProbeError(*error);
  return std::get<Availability>(it->second);
}

std::string Host::probed_mode_for(const std::string &plugin_name) {
  try {
    return probe().mode;
  } catch (const ProbeError &e) {
    audit_->record({"probe", plugin_name, forced_backend() ? "forced-backend" : "no-backend",
                    std::string("launch: ") + e.what(),
                    "run `sandbox-host probe` for every backend's reason"});
    throw;
  }
}

std::string Host::mode_for(const std::string &plugin_name) {
  if (forced_backend()) return probed_mode_for(plugin_name);
  const PluginConfig plugin = config_.plugin(plugin_name);
  if (plugin.sandbox == "auto") return probed_mode_for(plugin_name);
  if (plugin.sandbox == kModeOff) return plugin.sandbox;
  BackendStatus status = configured_status(plugin.sandbox);
  if (!status.available) {
    audit_->record({"probe", plugin_name, "configured-backend",
                    "run under backend " + plugin.sandbox + ": " + with_hint(status),
                    "the config names this backend for the plugin; it never falls through"});
    throw ProbeError("plugin \"" + plugin_name + "\": sandbox = \"" + plugin.sandbox + "\" in " +
                     config_.source +
                     ", but that backend does not work here: " + with_hint(status));
  }
  return plugin.sandbox;
}

std::string Host::mode_for(const std::string &plugin_name,
                           const std::optional<std::string> &named) {
  if (!named) return mode_for(plugin_name);
  if (*named == kModeOff) return *named;
  const auto &enabled = config_.backends_enabled;
  if (std::find(enabled.begin(), enabled.end(), *named) == enabled.end()) {
    throw ProbeError(
        "backend \"" + *named + "\" is not enabled in " +
        (config_.source.empty() ? std::string("the built-in defaults") : config_.source) +
        "; enabled backends: " + boost::algorithm::join(enabled, ", ") + ", and off");
  }
  BackendStatus status = configured_status(*named);
  if (!status.available) {
    audit_->record({"probe", plugin_name, "named-backend",
                    "run under backend " + *named + ": " + with_hint(status),
                    "the launch names this backend; it never falls through"});
    throw ProbeError("backend " + *named +
                     " was named for this launch, but it does not work here: " + with_hint(status));
  }
  return *named;
}

}  // namespace sandbox_host
