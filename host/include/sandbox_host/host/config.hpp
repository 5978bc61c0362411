// The operator's one config file (TOML). See docs/config.md for every key.
#pragma once

#include <sandbox_host/egress/destination/loopback_endpoint.hpp>
#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/spec.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
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

// What a cgroup of the launch's own bounds, where the host can make one (CgroupPlacement,
// and probe, say where); its pids.max is Limits::processes, beside that rlimit.
struct CgroupLimits {
  static constexpr std::uint64_t kUnlimited = Limits::kUnlimited;
  // Bytes of memory and swap together (memory.max with no swap; v1: memsw).
  std::uint64_t memory = std::uint64_t{2} << 30;
  // Thousandths of a CPU (a quota: cpu.max, v1 cpu.cfs_quota_us); by default half of the
  // CPUs this host lets sandbox-host run on, at least one, so a plugin leaves the host some.
  std::uint64_t cpu_millis = half_the_cpus();

  static std::uint64_t half_the_cpus();
  bool operator==(const CgroupLimits &) const = default;
};

// What the host's watch of a running launch holds it to (limits/launch_warden.hpp): what the
// plugin leaves in its writable directories on the host's disk, which no quota an
// unprivileged host may set bounds, and how long it may run.
struct WatchLimits {
  static constexpr std::uint64_t kUnlimited = Limits::kUnlimited;
  // Bytes (allocated blocks) and names in SocketDir and TmpDir together.
  std::uint64_t scratch_size = std::uint64_t{1} << 30;
  std::uint64_t scratch_files = 65536;
  // Seconds from the plugin's start; off by default.
  std::uint64_t lifetime_seconds = kUnlimited;
  bool operator==(const WatchLimits &) const = default;
};

// A launch's bounds: the rlimits and tmpfs sizes the Spec carries to the backend, what the
// host's cgroup sets, and what the host's watch holds.
struct LaunchLimits {
  Limits process;
  CgroupLimits cgroup;
  WatchLimits watch;
  bool operator==(const LaunchLimits &) const = default;
};

// One bound of [limits] or [plugins.<name>.limits].
using LimitField = std::variant<std::uint64_t Limits::*, std::uint64_t CgroupLimits::*,
                                std::uint64_t WatchLimits::*>;

struct PluginConfig {
  // "auto" (the probe's choice), a backend's name, or "off" (written by the operator).
  std::string sandbox = "auto";
  std::optional<Network> network;
  std::vector<std::string> read;
  // What the plugin gets on top of BaseEnv (plugin_env.hpp): NAME (from the launching
  // caller's environment) or NAME=VALUE; a launch's own --env comes after these.
  std::vector<std::string> env;
  // go-plugin's MagicCookieKey: the handshake's variables pass from the caller.
  std::optional<std::string> handshake;
  // [plugins.<name>.limits]: the bounds this plugin has other than [limits]'s, in file order.
  std::vector<std::pair<LimitField, std::uint64_t>> limits;
  bool operator==(const PluginConfig &) const = default;
};

// The [launcher] table: serve launches plugins for other processes of its own uid on a unix
// socket, from sandboxes it prepared (docs/config.md).
struct LauncherConfig {
  std::filesystem::path socket;             // default: <broker.state_dir>/launcher/launch.sock
  std::size_t depth = 1;                    // 0..16: prepared sandboxes per backend and network
  unsigned max_launches = 256;              // 1..4096: plugins running or being launched
  std::size_t max_request_bytes = 1 << 20;  // 4096..16777216
  std::chrono::milliseconds request_timeout{10000};  // key request_timeout_ms, 100..600000
  bool operator==(const LauncherConfig &) const = default;
};

// The [metrics] table: serve's Prometheus endpoint (docs/config.md, docs/operations.md).
struct MetricsConfig {
  // TCP on loopback; nullopt: none. Default 127.0.0.1:9464 (Prometheus' exporter default
  // range), so that `[metrics]` alone serves.
  std::optional<egress::LoopbackEndpoint> listen;
  std::filesystem::path socket;                     // a unix socket; empty: none
  unsigned max_connections = 8;                     // 1..256: connections served at once
  std::chrono::milliseconds request_timeout{5000};  // key request_timeout_ms, 100..60000
  // Users besides serve's own that may scrape, as uids resolved at load; empty: none.
  std::vector<uid_t> scrapers;
  bool operator==(const MetricsConfig &) const = default;
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
  unsigned max_per_requester = 64;                 // 1..4096: one requester's in flight
  unsigned max_queued = 256;                       // 1..65536: waiting for a thread, in all
  std::chrono::milliseconds reply_timeout{10000};  // key reply_timeout_ms, 100..600000
  BrokerIdentity identity = BrokerIdentity::lock;  // "lock" or "scan"
  bool operator==(const BrokerConfig &) const = default;
};

// The [egress.parent] table: the operator's HTTP proxy every allowed connection is dialled
// through (docs/egress.md). At most one of credential_file and credential_command.
struct ParentProxyConfig {
  std::string host;  // key url "http://<host>:<port>": a name or an IP literal
  std::uint16_t port = 0;
  std::filesystem::path credential_file;        // "user:password" on one line
  std::vector<std::string> credential_command;  // absolute path and arguments; prints it
  bool operator==(const ParentProxyConfig &) const = default;
};

// The [egress] table: the egress proxy (docs/egress.md), and what a plugin with network
// "proxied" goes through. load_config checks every entry with the proxy's own parsers.
// [egress] implementation's value for the proxy sandbox-host has built in.
inline constexpr std::string_view kBuiltinEgress = "proxy";

struct EgressConfig {
  // key implementation: the built-in proxy, or the name of an egress module (a file
  // egress_<name>.so), whose own settings are the table [egress.<name>] (module_settings).
  // With a module, the keys below are the built-in's and refused.
  std::string implementation = std::string(kBuiltinEgress);
  std::vector<std::pair<std::string, std::vector<std::string>>> module_settings;
  bool builtin() const noexcept { return implementation == kBuiltinEgress; }

  // key listen; nullopt when written "" (no TCP listener).
  std::optional<egress::LoopbackEndpoint> listen =
      egress::LoopbackEndpoint::parse("127.0.0.1:3128");
  // The unix socket listener; load_config() defaults it to <broker.state_dir>/egress.sock.
  std::filesystem::path socket;
  std::vector<std::string> allow;            // hosts commands reach
  std::vector<std::string> allow_addresses;  // CIDRs allowed despite the special-range rules
  std::vector<std::string> inject;           // hosts whose port-443 requests get the token
  // Host name -> the addresses it resolves to, instead of DNS (curl's --resolve).
  std::map<std::string, std::vector<std::string>> resolve;
  std::vector<std::string> token_command;      // absolute path and arguments; empty: no token
  std::chrono::seconds renew_every{300};       // key renew_every_s, 10..86400
  std::chrono::seconds renew_bound{30};        // key renew_bound_s, 1..3600
  std::chrono::seconds renew_cold_bound{120};  // key renew_cold_bound_s, 1..3600
  // key renew_backoff_s, each 1..86400: the waits before the retries after failed reads.
  std::vector<std::chrono::seconds> renew_backoff{std::chrono::seconds(5), std::chrono::seconds(15),
                                                  std::chrono::seconds(60)};
  std::filesystem::path upstream_ca_bundle;  // PEM file; empty: the system's roots
  std::filesystem::path runtime_dir;         // empty: $XDG_RUNTIME_DIR
  bool same_user = true;                     // refuse connections of other local users
  bool log_connections = false;              // one line per allowed connection, too
  std::chrono::seconds connect_timeout{10};  // key connect_timeout_s, 1..600
  std::chrono::seconds head_timeout{10};     // key head_timeout_s, 1..600
  std::chrono::seconds idle_timeout{300};    // key idle_timeout_s, 1..86400
  std::size_t max_tunnels = 20000;           // 1..1000000
  std::chrono::days ca_validity{30};         // key ca_validity_days, 1..3650
  std::chrono::hours leaf_validity{24};      // key leaf_validity_hours, 1..8760, within the CA's
  std::optional<ParentProxyConfig> parent;   // [egress.parent]; nullopt: dial directly

  // The port on 127.0.0.1 inside a proxied plugin's sandbox: listen's, else 3128.
  std::uint16_t sandbox_port() const noexcept;
  bool operator==(const EgressConfig &) const = default;
};

// The egress directory (the proxy's CA bundle, docs/egress.md):
// <runtime_dir or $XDG_RUNTIME_DIR>/clawpatrol-sandbox/egress, empty without a runtime
// directory (XDG_RUNTIME_DIR unset or relative).
std::filesystem::path egress_dir(const EgressConfig &egress);
// The same for the given value of XDG_RUNTIME_DIR (null: unset).
std::filesystem::path egress_dir(const EgressConfig &egress, const char *xdg_runtime_dir);

// One [ops.<name>] table: the operator's settings for an enabled operation.
struct OpSettings {
  // Variables of the requester's environment the broker hands the operation (requester_env).
  std::vector<std::string> requester_env;
  // Every other key of the table, in file order; a string, integer or boolean is one value,
  // an array of them its elements, all as text (booleans "true"/"false", integers in decimal).
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
  bool operator==(const OpSettings &) const = default;
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
  // Present when the file has an [egress] table: the operator enabled the egress proxy.
  std::optional<EgressConfig> egress;
  // Present when the file has a [launcher] table.
  std::optional<LauncherConfig> launcher;
  // Present when the file has a [metrics] table.
  std::optional<MetricsConfig> metrics;
  // Keyed by operation name; only operations in ops_enabled have settings.
  std::map<std::string, OpSettings> op_settings;

  // [limits]: every launch's bounds, over the built-in defaults (Limits in spec.hpp).
  LaunchLimits limits;
  // [limits] cgroup: where the launches' cgroups go: "auto" (under sandbox-host's own
  // cgroup, where it may make them), "off", or a cgroup path such as "/sandbox-host" that
  // the operator delegated (resolved in every hierarchy that has a controller it uses).
  std::string cgroup = "auto";

  // The plugin's settings, or the defaults for a plugin the file does not name.
  PluginConfig plugin(const std::string &name) const;
  // [limits] with the plugin's own [plugins.<name>.limits] over it.
  LaunchLimits limits_for(const std::string &plugin_name) const;
  bool operator==(const Config &) const = default;
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
