// The operator's one config file (TOML). See docs/config.md for every key.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/spec.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
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

struct Config {
  std::string source;  // the file it came from; empty for the built-in defaults
  std::vector<std::filesystem::path> module_dirs;
  std::vector<std::string> backends_enabled;
  std::vector<std::string> backend_priority;
  std::vector<std::string> ops_enabled;
  AuditFormat audit_format = AuditFormat::text;
  std::string audit_path = "stderr";
  std::map<std::string, PluginConfig> plugins;

  // The plugin's settings, or the defaults for a plugin the file does not name.
  PluginConfig plugin(const std::string &name) const;
};

inline constexpr const char *kDefaultConfigPath = "/etc/sandbox-host/config.toml";

// Built-in defaults: every backend enabled, priority namespaces > landlock > seatbelt, the
// module directories next to this executable and the installed one.
Config default_config();
Config load_config(const std::filesystem::path &path);
// path given: that file, which must exist. None: kDefaultConfigPath if present, else defaults.
Config load_config_or_defaults(const std::optional<std::filesystem::path> &path);

}  // namespace sandbox_host
