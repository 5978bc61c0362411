#include <sandbox_host/egress_client.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>
#include <sandbox_host/host/env_names.hpp>

#include <boost/algorithm/string/join.hpp>

#include "audit_config.hpp"
#include "backends_config.hpp"
#include "broker_config.hpp"
#include "config_reader.hpp"
#include "egress_config.hpp"
#include "egress_parent_config.hpp"
#include "launcher_config.hpp"
#include "limits_config.hpp"
#include "metrics_config.hpp"
#include "ops_config.hpp"
#include "plugin_config.hpp"
#include "schema_key.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace sandbox_host {
namespace fs = std::filesystem;

PluginConfig Config::plugin(const std::string &name) const {
  auto it = plugins.find(name);
  return it == plugins.end() ? PluginConfig{} : it->second;
}

LaunchLimits Config::limits_for(const std::string &plugin_name) const {
  LaunchLimits bounded = limits;
  auto it = plugins.find(plugin_name);
  if (it == plugins.end()) return bounded;
  for (const auto &[field, value] : it->second.limits) set_limit(bounded, field, value);
  return bounded;
}

namespace {

constexpr std::array kKnownBackends{"namespaces", "landlock", "seatbelt", "off"};

// The directory of the sandbox-host executable: this one's, or, for sandbox-host-broker in
// <prefix>/libexec/sandbox-host/, the bin directory beside it, so both find the same modules.
fs::path executable_dir() {
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return {};
  const fs::path libexec = SANDBOX_HOST_LIBEXEC_SUBDIR;
  fs::path prefix = dir;
  for (auto part = libexec.end(); part != libexec.begin();) {
    --part;
    if (prefix.filename() != *part) return dir;
    prefix = prefix.parent_path();
  }
  return prefix / SANDBOX_HOST_BINDIR;
}

std::string join(const std::vector<std::string> &items) {
  return boost::algorithm::join(items, ", ");
}

void read_module_dirs(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                      const ConfigKeyDoc &, Config &config) {
  auto dirs = r.absolute_paths(node, dotted);
  config.module_dirs.assign(dirs.begin(), dirs.end());
}

void read_backends_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                         const ConfigKeyDoc &, Config &config) {
  read_backends(r, r.table(node, dotted), config);
}

void read_ops_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                    const ConfigKeyDoc &, Config &config) {
  read_ops(r, r.table(node, dotted), config);
}

void read_broker_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                       const ConfigKeyDoc &, Config &config) {
  read_broker(r, r.table(node, dotted), config.broker);
}

void read_egress_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                       const ConfigKeyDoc &, Config &config) {
  read_egress(r, r.table(node, dotted), config.egress.emplace());
}

void read_launcher_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                         const ConfigKeyDoc &, Config &config) {
  read_launcher(r, r.table(node, dotted), config.launcher.emplace());
}

void read_metrics_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                        const ConfigKeyDoc &, Config &config) {
  read_metrics(r, r.table(node, dotted), config.metrics.emplace());
}

void read_audit_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                      const ConfigKeyDoc &, Config &config) {
  read_audit(r, r.table(node, dotted), config);
}

void read_limits_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                       const ConfigKeyDoc &, Config &config) {
  for (const auto &[field, value] : read_limits(r, r.table(node, dotted), dotted, &config.cgroup)) {
    set_limit(config.limits, field, value);
  }
}

void read_plugins_table(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                        const ConfigKeyDoc &, Config &config) {
  for (auto &&[plugin_key, plugin_node] : r.table(node, dotted)) {
    std::string prefix = "plugins." + std::string(plugin_key.str());
    config.plugins[std::string(plugin_key.str())] =
        read_plugin(r, r.table(plugin_node, prefix), prefix);
  }
}

// The file's top level: each key but module_dirs is a table of its own schema.
constexpr SchemaKey<Config> kFileKeys[] = {
    {{"module_dirs", "array of absolute paths", "", std::nullopt,
      "directories searched for module files, in order; by default beside the executable "
      "and the installed one"},
     &read_module_dirs},
    {{"backends", "table", "", std::nullopt, "which backends load, and the probe's order"},
     &read_backends_table},
    {{"ops", "table", "", std::nullopt, "which operations load, and their settings"},
     &read_ops_table},
    {{"broker", "table", "", std::nullopt, "how the broker serves"}, &read_broker_table},
    {{"egress", "table", "", std::nullopt, "the egress proxy; absent: none"}, &read_egress_table},
    {{"launcher", "table", "", std::nullopt, "serve's launch service; absent: none"},
     &read_launcher_table},
    {{"metrics", "table", "", std::nullopt, "serve's Prometheus endpoint; absent: none"},
     &read_metrics_table},
    {{"audit", "table", "", std::nullopt, "where refusals go"}, &read_audit_table},
    {{"limits", "table", "", std::nullopt, "every launch's bounds"}, &read_limits_table},
    {{"plugins", "table", "", std::nullopt, "a table of settings per plugin name"},
     &read_plugins_table},
};

// A file that does not write backends.priority gets the default order of the backends it
// enables.
void keep_enabled_priority(const toml::table &root, Config &config) {
  const auto *backends = root["backends"].as_table();
  if (backends != nullptr && backends->contains("priority")) return;
  std::erase_if(config.backend_priority, [&](const std::string &name) {
    return std::find(config.backends_enabled.begin(), config.backends_enabled.end(), name) ==
           config.backends_enabled.end();
  });
}

// Names that must refer to enabled backends do.
void cross_check(const ConfigReader &r, const toml::table &root, const Config &config) {
  auto enabled = [&](const std::string &name) {
    return std::find(config.backends_enabled.begin(), config.backends_enabled.end(), name) !=
           config.backends_enabled.end();
  };
  for (const auto &name : config.backend_priority) {
    if (!enabled(name)) {
      const auto *node = root.at_path("backends.priority").node();
      r.fail(node ? node->source() : root.source(), "backends.priority",
             "\"" + name + "\" is not enabled; enabled backends: " + join(config.backends_enabled));
    }
  }
  for (const auto &[plugin, settings] : config.plugins) {
    if (settings.sandbox == "auto" || enabled(settings.sandbox)) continue;
    std::string key = "plugins." + plugin + ".sandbox";
    const auto *plugins = root["plugins"].as_table();
    const auto *node = plugins ? (*plugins)[plugin]["sandbox"].node() : nullptr;
    r.fail(node ? node->source() : root.source(), key,
           "\"" + settings.sandbox + "\" is not an enabled backend; allowed: \"auto\" or one of " +
               join(config.backends_enabled));
  }
  if (config.egress) return;
  for (const auto &[plugin, settings] : config.plugins) {
    if (settings.network != Network::proxied) continue;
    const auto *node = root["plugins"][plugin]["network"].node();
    r.fail(node->source(), "plugins." + plugin + ".network",
           "\"proxied\" goes through the egress proxy, and the file has no [egress] table to "
           "configure it");
  }
}

}  // namespace

std::vector<ConfigTableDoc> config_schema() {
  return {{"", key_docs(kFileKeys)}, backends_schema(),      broker_schema(),
          egress_schema(),           egress_parent_schema(), launcher_schema(),
          metrics_schema(),          audit_schema(),         plugin_schema()};
}

Config default_config() {
  Config config;
  fs::path near_exe = executable_dir() / ".." / SANDBOX_HOST_MODULE_SUBDIR;
  config.module_dirs.push_back(near_exe.lexically_normal());
  fs::path installed = SANDBOX_HOST_INSTALL_MODULE_DIR;
  if (installed != config.module_dirs.front()) config.module_dirs.push_back(installed);
  config.backends_enabled.assign(kKnownBackends.begin(), kKnownBackends.end());
  config.backend_priority = {"namespaces", "landlock", "seatbelt"};
  config.ops_enabled = {"ping"};
  config.broker.state_dir = default_state_dir();
  return config;
}

Config load_config(const fs::path &path) {
  const std::string file = path.string();
  ConfigReader r(file);
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error &e) {
    throw ConfigError(file, static_cast<int>(e.source().begin.line), "",
                      "not valid TOML: " + std::string(e.description()));
  }

  Config config = default_config();
  config.source = file;
  read_keys(r, root, "", kFileKeys, config);
  keep_enabled_priority(root, config);
  default_egress_socket(r, root, config);
  default_launcher_socket(r, root, config);
  cross_check(r, root, config);
  return config;
}

std::uint16_t EgressConfig::sandbox_port() const noexcept {
  return listen && listen->port != 0 ? listen->port : 3128;
}

fs::path egress_dir(const EgressConfig &egress, const char *xdg_runtime_dir) {
  fs::path runtime = egress.runtime_dir;
  if (runtime.empty() && xdg_runtime_dir != nullptr && xdg_runtime_dir[0] == '/') {
    runtime = xdg_runtime_dir;
  }
  return egress_dir_below(runtime.string());
}

fs::path egress_dir(const EgressConfig &egress) {
  return egress_dir(egress, std::getenv("XDG_RUNTIME_DIR"));
}

Config load_config_or_defaults(const std::optional<fs::path> &path) {
  if (path) {
    std::error_code ec;
    if (!fs::is_regular_file(*path, ec)) {
      throw ConfigError(path->string(), 0, "", "no such config file");
    }
    return load_config(*path);
  }
  std::error_code ec;
  if (fs::exists(kDefaultConfigPath, ec)) return load_config(kDefaultConfigPath);
  return default_config();
}

}  // namespace sandbox_host
