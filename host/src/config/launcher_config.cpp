#include "launcher_config.hpp"

#include "schema_key.hpp"

namespace sandbox_host {
namespace {

void read_socket(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, LauncherConfig &launcher) {
  std::string socket = r.string(node, dotted, "an absolute path");
  if (socket.empty() || socket.front() != '/') {
    r.fail(node.source(), dotted, "\"" + socket + "\" is not an absolute path");
  }
  launcher.socket = socket;
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

ConfigTableDoc launcher_schema() {
  return {"launcher", key_docs(kLauncherKeys)};
}

}  // namespace sandbox_host
