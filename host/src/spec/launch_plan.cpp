#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_plan.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace sandbox_host {
namespace fs = std::filesystem;

PrivateDir::PrivateDir() {
  const char *base = ::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && base[0] == '/' ? base : "/tmp") + "/sandbox-host-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "create " + pattern);
  }
  path_ = fs::canonical(pattern);
}

PrivateDir::~PrivateDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

namespace {

// Lower is more closed.
int openness(Network network) {
  switch (network) {
    case Network::none:
      return 0;
    case Network::proxied:
      return 1;
    case Network::outbound:
      return 2;
  }
  return 2;
}

// The plugin's network: the caller's where it named one, else the config's for the plugin.
// Where the config names none, a policy's commands reach its domains through the egress
// proxy when there is one, and any other launch gets none.
Network planned_network(const Config &config, const PluginConfig &plugin, bool given, Network asked,
                        bool held_to_policy) {
  if (given) return asked;
  if (plugin.network) return *plugin.network;
  return held_to_policy && config.egress ? Network::proxied : Network::none;
}

// Network proxied goes through the [egress] proxy, which the Spec then names.
void route_through_egress(Host &host, Spec &spec) {
  if (spec.network != Network::proxied) return;
  const Config &config = host.config();
  if (!config.egress) {
    throw std::runtime_error("network proxied goes through the egress proxy, and " +
                             (config.source.empty() ? std::string("the built-in defaults have")
                                                    : config.source + " has") +
                             " no [egress] table to say where it listens");
  }
  route_spec(spec, host.egress()->route());
}

// The config's grants first, then the caller's.
void add_configured_reads(const PluginConfig &plugin, Spec &spec) {
  std::vector<std::string> read;
  for (const auto &path : plugin.read) {
    std::error_code ec;
    const fs::path canonical = fs::canonical(path, ec);
    if (ec) throw std::runtime_error("read path " + path + ": " + ec.message());
    read.push_back(canonical.string());
  }
  read.insert(read.end(), spec.read_paths.begin(), spec.read_paths.end());
  spec.read_paths = std::move(read);
}

// The config's variables first; the caller's handshake wins over the config's.
std::vector<std::string> planned_env(const PluginConfig &plugin, const LaunchRequest &request) {
  PluginEnvRequest env{plugin.env, plugin.handshake};
  env.entries.insert(env.entries.end(), request.env.entries.begin(), request.env.entries.end());
  if (request.env.handshake) env.handshake = request.env.handshake;
  return plugin_env(env, request.caller_env);
}

void make_private_dirs(LaunchPlan &plan) {
  Spec &spec = plan.spec;
  if (spec.socket_dir.empty()) {
    plan.private_socket_dir = std::make_unique<PrivateDir>();
    spec.socket_dir = plan.private_socket_dir->path().string();
  }
  if (spec.tmp_dir.empty()) {
    if (plan.private_socket_dir) {
      fs::create_directory(plan.private_socket_dir->path() / "tmp");
      spec.tmp_dir = (plan.private_socket_dir->path() / "tmp").string();
    } else {
      plan.private_tmp_dir = std::make_unique<PrivateDir>();
      spec.tmp_dir = plan.private_tmp_dir->path().string();
    }
  }
}

// A view is what makes a launch a policy's: one whose entries all are missing still shows
// the host read-only, never a plugin's tree (nor off's nothing).
void hold_to_policy_view(std::optional<std::vector<PathRule>> policy_view, Spec &spec) {
  if (!policy_view) return;
  spec.view = std::move(*policy_view);
  if (spec.view.empty()) spec.view.push_back({"/", PathAccess::read});
}

}  // namespace

void require_configured_confinement(Host &host, const LaunchRequest &request) {
  const std::string plugin = launch_name(request.spec);
  const Config &config = host.config();
  const std::string where = config.source.empty() ? "the built-in defaults" : config.source;
  if (request.network_given) {
    const std::optional<Network> configured = config.plugin(plugin).network;
    if (configured && openness(request.spec.network) > openness(*configured)) {
      throw std::runtime_error("network " + std::string(to_string(request.spec.network)) +
                               " was asked for plugin \"" + plugin + "\", but " + where +
                               " gives it network " + std::string(to_string(*configured)) +
                               "; the launch service never opens a plugin wider than its config");
    }
  }
  if (!request.backend) return;
  const std::string &named = *request.backend;
  const std::string configured = host.mode_for(plugin);
  if (named == configured || configured == kModeOff) return;
  if (named == kModeOff) {
    throw std::runtime_error("backend off was asked for plugin \"" + plugin + "\", but " + where +
                             " gives it " + configured +
                             "; off is honoured only where the operator wrote sandbox = \"off\" "
                             "in [plugins." +
                             plugin + "]");
  }
  const auto &priority = config.backend_priority;
  const auto rank = [&](const std::string &mode) {
    return std::find(priority.begin(), priority.end(), mode) - priority.begin();
  };
  if (rank(named) > rank(configured)) {
    throw std::runtime_error("backend " + named + " was asked for plugin \"" + plugin + "\", but " +
                             where + " gives it " + configured +
                             ", which backends.priority ranks before it; the launch service "
                             "never confines a plugin less than its config");
  }
}

LaunchPlan plan_launch(Host &host, LaunchRequest request,
                       std::optional<std::vector<PathRule>> policy_view) {
  if (request.spec.binary_path.empty()) {
    throw std::invalid_argument("launch: no plugin binary named");
  }
  LaunchPlan plan;
  plan.spec = std::move(request.spec);
  Spec &spec = plan.spec;
  spec.plugin_name = launch_name(spec);
  const Config &config = host.config();
  const PluginConfig plugin = config.plugin(spec.plugin_name);
  spec.network =
      planned_network(config, plugin, request.network_given, spec.network, policy_view.has_value());
  route_through_egress(host, spec);
  add_configured_reads(plugin, spec);
  plan.plugin_env = planned_env(plugin, request);
  make_private_dirs(plan);
  plan.mode = host.mode_for(spec.plugin_name, request.backend);
  hold_to_policy_view(std::move(policy_view), spec);
  // The config's limits, which Host::command holds every launch to whatever its Spec says:
  // here so that what is planned is what runs.
  spec = host.bounded(spec);
  return plan;
}

}  // namespace sandbox_host
