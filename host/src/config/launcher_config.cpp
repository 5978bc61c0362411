#include "launcher_config.hpp"

#include "schema_key.hpp"

#include <sandbox_host/host/spec_check.hpp>

#include <string>

namespace sandbox_host {
namespace {

void read_socket(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, LauncherConfig &launcher) {
  launcher.socket = r.socket_path(node, dotted);
}

constexpr SchemaKey<LauncherConfig> kLauncherKeys[] = {
    {{"socket", "absolute path", "", std::nullopt,
      "the service's socket; by default launcher/launch.sock in broker.state_dir"},
     &read_socket},
    integer_key<&LauncherConfig::depth>("depth", "1", 0, 16,
                                        "sandboxes kept prepared per backend and network"),
    integer_key<&LauncherConfig::max_launches>("max_launches", "256", 1, 4096,
                                               "launches at once, running plugins included"),
    integer_key<&LauncherConfig::max_request_bytes>("max_request_bytes", "1048576", 4096, 16777216,
                                                    "bytes of one request"),
    integer_key<&LauncherConfig::request_timeout>(
        "request_timeout_ms", "10000", 100, 600000,
        "milliseconds a client may take to send its request"),
};

}  // namespace

void read_launcher(const ConfigReader &r, const toml::table &t, LauncherConfig &launcher) {
  read_keys(r, t, "launcher", kLauncherKeys, launcher);
}

void default_launcher_socket(const ConfigReader &r, const toml::table &root, Config &config) {
  if (!config.launcher || !config.launcher->socket.empty()) return;
  config.launcher->socket = config.broker.state_dir / "launcher" / "launch.sock";
  if (config.launcher->socket.string().size() > kMaxSocketPath) {
    r.fail(root["launcher"].node()->source(), "launcher.socket",
           "the default \"" + config.launcher->socket.string() +
               "\" (under broker.state_dir) is longer than a unix socket address holds (" +
               std::to_string(kMaxSocketPath) + " bytes); set launcher.socket");
  }
}

ConfigTableDoc launcher_schema() {
  return {"launcher", key_docs(kLauncherKeys)};
}

}  // namespace sandbox_host
