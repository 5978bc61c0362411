// The operator's one config file (TOML). See docs/config.md for every key.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/spec.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {

// A refused config: names file, line, key, what was wrong and what is allowed.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, std::string key, const std::string &what);
  const std::string &file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  const std::string &key() const noexcept { return key_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
};

struct PluginConfig {
  // "auto" (the probe's choice), a backend's name, or "off" (written by the operator).
  std::string sandbox = "auto";
  std::optional<Network> network;
  std::vector<std::string> read;
};

// How the broker tells which process wrote a request (docs/config.md, [broker] identity).
enum class BrokerIdentity { lock, scan };

// The [broker] table: the daemon that runs operation modules for sandboxed processes.
struct BrokerConfig {
  std::filesystem::path state_dir;                 // default: default_state_dir()
  std::chrono::milliseconds tick{100};             // key tick_ms, 10..10000
  std::size_t max_request_bytes = 128 * 1024;      // 256..16777216
  std::size_t max_reply_bytes = 4 * 1024 * 1024;   // 4096..268435456
  unsigned max_concurrent = 64;                    // 1..4096
  BrokerIdentity identity = BrokerIdentity::lock;  // "lock" or "scan"
};

// One [ops.<name>] table: the operator's settings for an enabled operation.
struct OpSettings {
  // Variables of the requester's environment the broker hands the operation (requester_env).
  std::vector<std::string> requester_env;
  // Every other key of the table, in file order; a string, integer or boolean is one value,
  // an array of them its elements, all as text (booleans "true"/"false", integers in decimal).
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
};

struct Config {
  std::string source;  // the file it came from; empty for the built-in defaults
  std::vector<std::filesystem::path> module_dirs;
  std::vector<std::string> backends_enabled;
  std::vector<std::string> backend_priority;
  std::vector<std::string> ops_enabled;
  AuditFormat audit_format = AuditFormat::text;
  std::string audit_path = "stderr";
  std::map<std::string, PluginConfig> plugins;
  BrokerConfig broker;
  // Keyed by operation name; only operations in ops_enabled have settings.
  std::map<std::string, OpSettings> op_settings;

  // The plugin's settings, or the defaults for a plugin the file does not name.
  PluginConfig plugin(const std::string &name) const;
};

inline constexpr const char *kDefaultConfigPath = "/etc/sandbox-host/config.toml";

// Where the broker keeps its spool when the config names no state_dir: /var/lib/sandbox-host
// for root, else $XDG_STATE_HOME/sandbox-host when XDG_STATE_HOME is an absolute path, else
// $HOME/.local/state/sandbox-host (HOME absolute), else /tmp/sandbox-host-<uid>.
std::filesystem::path default_state_dir();
// The same for the given effective uid and values of XDG_STATE_HOME and HOME (null: unset).
std::filesystem::path default_state_dir(uid_t uid, const char *xdg_state_home, const char *home);

// Built-in defaults: every backend enabled, priority namespaces > landlock > seatbelt, the
// module directories next to this executable and the installed one.
Config default_config();
Config load_config(const std::filesystem::path &path);
// path given: that file, which must exist. None: kDefaultConfigPath if present, else defaults.
Config load_config_or_defaults(const std::optional<std::filesystem::path> &path);

}  // namespace sandbox_host
