#include "plugin_config.hpp"

#include "limits_config.hpp"
#include "module_name.hpp"
#include "schema_key.hpp"

#include <sandbox_host/host/launch_client/plugin_env.hpp>

namespace sandbox_host {
namespace {

void read_sandbox(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                  const ConfigKeyDoc &, PluginConfig &plugin) {
  // Only the exact string "off" runs a plugin unsandboxed; false, "", "none" or "Off"
  // are refused rather than guessed at.
  plugin.sandbox = r.string(node, dotted, "\"auto\", \"off\" or an enabled backend's name");
  if (plugin.sandbox != "auto" && !is_module_name(plugin.sandbox)) {
    r.fail(node.source(), dotted,
           "\"" + plugin.sandbox +
               "\" is not a sandbox mode; allowed: \"auto\", \"off\" or an enabled "
               "backend's name");
  }
}

void read_network(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                  const ConfigKeyDoc &, PluginConfig &plugin) {
  std::string network = r.string(node, dotted, "\"none\", \"outbound\" or \"proxied\"");
  plugin.network = parse_network(network);
  if (!plugin.network) {
    r.fail(node.source(), dotted,
           "\"" + network + "\" is not a network; allowed: \"none\", \"outbound\", \"proxied\"");
  }
}

void read_read(const ConfigReader &r, const toml::node &node, const std::string &dotted,
               const ConfigKeyDoc &, PluginConfig &plugin) {
  plugin.read = r.absolute_paths(node, dotted);
}

void read_env(const ConfigReader &r, const toml::node &node, const std::string &dotted,
              const ConfigKeyDoc &, PluginConfig &plugin) {
  plugin.env = r.strings(node, dotted, "NAME or NAME=VALUE");
  for (size_t i = 0; i < plugin.env.size(); ++i) {
    try {
      check_env_entry(plugin.env[i], "env");
    } catch (const std::invalid_argument &e) {
      r.fail(ConfigReader::element_source(node, i), dotted + "[" + std::to_string(i) + "]",
             e.what());
    }
  }
}

void read_handshake(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                    const ConfigKeyDoc &, PluginConfig &plugin) {
  std::string cookie = r.string(node, dotted, "go-plugin's MagicCookieKey");
  try {
    check_env_entry(cookie, "handshake");
  } catch (const std::invalid_argument &e) {
    r.fail(node.source(), dotted, e.what());
  }
  if (cookie.find('=') != std::string::npos) {
    r.fail(node.source(), dotted, "the magic cookie's name, without a value");
  }
  plugin.handshake = cookie;
}

void read_plugin_limits(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                        const ConfigKeyDoc &, PluginConfig &plugin) {
  plugin.limits = read_limits(r, r.table(node, dotted), dotted);
}

constexpr SchemaKey<PluginConfig> kPluginKeys[] = {
    {{"sandbox", "string", "\"auto\"", std::nullopt,
      "\"auto\" (the probe's choice), an enabled backend's name, or \"off\""},
     &read_sandbox},
    {{"network", "string", "", std::nullopt,
      "\"none\", \"outbound\" or \"proxied\"; unwritten, none unless a launch names one"},
     &read_network},
    {{"read", "array of absolute paths", "[]", std::nullopt,
      "paths the plugin may read, recursively"},
     &read_read},
    {{"env", "array of strings", "[]", std::nullopt,
      "NAME (from the caller) or NAME=VALUE: variables on top of BaseEnv"},
     &read_env},
    {{"handshake", "string", "", std::nullopt,
      "go-plugin's MagicCookieKey: the handshake's variables pass"},
     &read_handshake},
    {{"limits", "table", "", std::nullopt, "this plugin's bounds over `[limits]`"},
     &read_plugin_limits},
};

}  // namespace

PluginConfig read_plugin(const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  PluginConfig plugin;
  read_keys(r, t, prefix, kPluginKeys, plugin);
  return plugin;
}

ConfigTableDoc plugin_schema() {
  return {"plugins.<name>", key_docs(kPluginKeys)};
}

}  // namespace sandbox_host
