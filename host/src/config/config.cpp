#include <sandbox_host/egress_client.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/plugin_env.hpp>

#include <boost/algorithm/string/join.hpp>

#include "config_reader.hpp"
#include "egress_config.hpp"
#include "metrics_config.hpp"
#include "toml_type_name.hpp"

#include <toml++/toml.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace sandbox_host {
namespace fs = std::filesystem;

PluginConfig Config::plugin(const std::string &name) const {
  auto it = plugins.find(name);
  return it == plugins.end() ? PluginConfig{} : it->second;
}

namespace {

void set_limit(LaunchLimits &limits, const LimitField &field, std::uint64_t value) {
  if (const auto *process = std::get_if<std::uint64_t Limits::*>(&field)) {
    limits.process.**process = value;
  } else if (const auto *cgroup = std::get_if<std::uint64_t CgroupLimits::*>(&field)) {
    limits.cgroup.**cgroup = value;
  } else {
    limits.watch.*std::get<std::uint64_t WatchLimits::*>(field) = value;
  }
}

}  // namespace

std::uint64_t CgroupLimits::half_the_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  const int cpus = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 2;
  return std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(cpus) * 500);
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

bool valid_module_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// A variable name the broker may read from a requester's environment: [A-Za-z_][A-Za-z0-9_]*.
bool valid_env_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

// A variable requester_env refuses, by its name or, ending in "*", the prefix of its names.
struct RefusedEnvName {
  std::string_view name;
  std::string_view why;
};

// Variables that change how a host command, or the loader, shell or interpreter it runs
// under, behaves rather than carrying data to it: through requester_env a sandboxed
// requester would choose their values. No list of them can be complete.
constexpr std::string_view kLoader =
    "the dynamic loader reads it and can load code into the command";
constexpr std::string_view kLibc =
    "the C library reads it to load modules or data, or to tune itself";
constexpr std::string_view kBroker = "the broker sets it for the command itself";
constexpr std::string_view kShell =
    "a shell reads it to run code or to change how it parses a script";
constexpr std::string_view kInterpreter = "an interpreter reads it to load code or take options";
constexpr std::string_view kGit = "git reads it as configuration, and some run commands";
constexpr auto kRefusedRequesterEnv = std::to_array<RefusedEnvName>({
    // ld.so's LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT...; dyld's on macOS (seatbelt).
    {"LD_*", kLoader},
    {"DYLD_*", kLoader},
    // glibc: gconv modules are shared objects; locale and message data; malloc's tunables.
    {"GCONV_PATH", kLibc},
    {"LOCPATH", kLibc},
    {"NLSPATH", kLibc},
    {"MALLOC_*", kLibc},
    {"GLIBC_TUNABLES", kLibc},
    // CommandRules sets them before the requester's variables, which would replace them.
    {"PATH", kBroker},
    {"HOME", kBroker},
    {"LANG", kBroker},
    // sh and bash startup files, options, tracing, word splitting, cd, exported functions.
    {"BASH_ENV", kShell},
    {"ENV", kShell},
    {"SHELLOPTS", kShell},
    {"BASHOPTS", kShell},
    {"PS4", kShell},
    {"IFS", kShell},
    {"CDPATH", kShell},
    {"BASH_FUNC_*", kShell},
    // Module paths, startup files and option variables of Python, Perl, Ruby, Node and Java.
    {"PYTHONPATH", kInterpreter},
    {"PYTHONSTARTUP", kInterpreter},
    {"PYTHONHOME", kInterpreter},
    {"PERL5LIB", kInterpreter},
    {"PERL5OPT", kInterpreter},
    {"PERLLIB", kInterpreter},
    {"RUBYOPT", kInterpreter},
    {"RUBYLIB", kInterpreter},
    {"NODE_OPTIONS", kInterpreter},
    {"NODE_PATH", kInterpreter},
    {"JAVA_TOOL_OPTIONS", kInterpreter},
    {"_JAVA_OPTIONS", kInterpreter},
    // Every GIT_*: GIT_SSH_COMMAND, GIT_CONFIG_*, GIT_EXEC_PATH run commands, the rest
    // redirect its repository, configuration or hooks.
    {"GIT_*", kGit},
});

// The entry of kRefusedRequesterEnv that refuses name, if any.
const RefusedEnvName *refused_requester_env(std::string_view name) {
  for (const auto &refused : kRefusedRequesterEnv) {
    const bool prefix = refused.name.ends_with('*');
    if (prefix ? name.starts_with(refused.name.substr(0, refused.name.size() - 1))
               : name == refused.name) {
      return &refused;
    }
  }
  return nullptr;
}

// A key of an [ops.<name>] table: 1 or more of a-z, 0-9, _ and -.
bool valid_op_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string join(const std::vector<std::string> &items) {
  return boost::algorithm::join(items, ", ");
}

// Module names: a-z, 0-9 and -.
std::vector<std::string> module_names(const ConfigReader &r, const toml::node &node,
                                      const std::string &key) {
  const std::string allowed = "module names of a-z, 0-9 and -";
  auto names = r.strings(node, key, allowed);
  for (const auto &name : names) {
    if (!valid_module_name(name)) {
      r.fail(node.source(), key, "\"" + name + "\" is not a module name; allowed: " + allowed);
    }
  }
  return names;
}

// requester_env's variable names; a bad or refused one is named by its index, at its own
// line.
std::vector<std::string> requester_env_names(const ConfigReader &r, const toml::node &node,
                                             const std::string &key) {
  auto names = r.strings(node, key, "environment variable names");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string indexed = key + "[" + std::to_string(i) + "]";
    if (!valid_env_name(names[i])) {
      r.fail(ConfigReader::element_source(node, i), indexed,
             "\"" + names[i] +
                 "\" is not an environment variable name; allowed: A-Z, a-z, 0-9 and _, not "
                 "starting with a digit");
    }
    if (const auto *refused = refused_requester_env(names[i])) {
      r.fail(ConfigReader::element_source(node, i), indexed,
             "\"" + names[i] + "\" is refused" +
                 (refused->name.ends_with('*') ? ", as every " + std::string(refused->name) + " is"
                                               : std::string()) +
                 ": " + std::string(refused->why) +
                 "; name only variables that carry data to the command");
    }
  }
  return names;
}

std::optional<std::string> scalar_text(const toml::node &node) {
  if (const auto *s = node.as_string()) return s->get();
  if (const auto *i = node.as_integer()) return std::to_string(i->get());
  if (const auto *b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
  return std::nullopt;
}

// An operation's setting: a string, integer or boolean, or an array of them, as text.
std::vector<std::string> op_values(const ConfigReader &r, const toml::node &node,
                                   const std::string &key) {
  const auto *array = node.as_array();
  if (array == nullptr) {
    auto text = scalar_text(node);
    if (!text) {
      r.fail(node.source(), key,
             std::string("must be a string, integer or boolean, or an array of them, not ") +
                 toml_type_name(node));
    }
    return {*text};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node &element = *array->get(i);
    auto text = scalar_text(element);
    if (!text) {
      r.fail(element.source(), key + "[" + std::to_string(i) + "]",
             std::string("must be a string, integer or boolean, not ") + toml_type_name(element));
    }
    out.push_back(*text);
  }
  return out;
}

void read_backends(const ConfigReader &r, const toml::table &t, Config &config) {
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    if (name == "enabled") {
      config.backends_enabled = module_names(r, node, "backends.enabled");
    } else if (name == "priority") {
      config.backend_priority = module_names(r, node, "backends.priority");
      for (const auto &backend : config.backend_priority) {
        if (backend == kModeOff) {
          r.fail(node.source(), "backends.priority",
                 "\"off\" is never chosen by priority; write sandbox = \"off\" in a "
                 "[plugins.<name>] table to run that plugin unsandboxed");
        }
      }
    } else {
      r.unknown(key, "backends." + name, "enabled, priority");
    }
  }
}

void read_audit(const ConfigReader &r, const toml::table &t, Config &config) {
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    if (name == "format") {
      std::string format = r.string(node, "audit.format", "\"text\" or \"json\"");
      if (format == "text") {
        config.audit_format = AuditFormat::text;
      } else if (format == "json") {
        config.audit_format = AuditFormat::json;
      } else {
        r.fail(node.source(), "audit.format",
               "\"" + format + "\" is not a format; allowed: \"text\", \"json\"");
      }
    } else if (name == "path") {
      config.audit_path = r.string(node, "audit.path", "\"stderr\" or an absolute path");
      if (config.audit_path != "stderr" &&
          (config.audit_path.empty() || config.audit_path.front() != '/')) {
        r.fail(node.source(), "audit.path",
               "\"" + config.audit_path + "\" is neither \"stderr\" nor an absolute path");
      }
    } else {
      r.unknown(key, "audit." + name, "format, path");
    }
  }
}

void read_launcher(const ConfigReader &r, const toml::table &t, LauncherConfig &launcher) {
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    std::string dotted = "launcher." + name;
    if (name == "socket") {
      std::string socket = r.string(node, dotted, "an absolute path");
      if (socket.empty() || socket.front() != '/') {
        r.fail(node.source(), dotted, "\"" + socket + "\" is not an absolute path");
      }
      launcher.socket = socket;
    } else if (name == "depth") {
      launcher.depth = static_cast<std::size_t>(r.integer(node, dotted, 0, 16));
    } else if (name == "max_launches") {
      launcher.max_launches = static_cast<unsigned>(r.integer(node, dotted, 1, 4096));
    } else if (name == "max_request_bytes") {
      launcher.max_request_bytes =
          static_cast<std::size_t>(r.integer(node, dotted, 4096, 16777216));
    } else if (name == "request_timeout_ms") {
      launcher.request_timeout = std::chrono::milliseconds(r.integer(node, dotted, 100, 600000));
    } else {
      r.unknown(key, dotted, "socket, depth, max_launches, max_request_bytes, request_timeout_ms");
    }
  }
}

void read_broker(const ConfigReader &r, const toml::table &t, BrokerConfig &broker) {
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    std::string dotted = "broker." + name;
    if (name == "state_dir") {
      std::string dir = r.string(node, dotted, "an absolute path");
      if (dir.empty() || dir.front() != '/') {
        r.fail(node.source(), dotted, "\"" + dir + "\" is not an absolute path");
      }
      broker.state_dir = dir;
    } else if (name == "tick_ms") {
      broker.tick = std::chrono::milliseconds(r.integer(node, dotted, 10, 10000));
    } else if (name == "max_request_bytes") {
      broker.max_request_bytes = static_cast<std::size_t>(r.integer(node, dotted, 256, 16777216));
    } else if (name == "max_reply_bytes") {
      broker.max_reply_bytes = static_cast<std::size_t>(r.integer(node, dotted, 4096, 268435456));
    } else if (name == "max_concurrent") {
      broker.max_concurrent = static_cast<unsigned>(r.integer(node, dotted, 1, 4096));
    } else if (name == "max_per_requester") {
      broker.max_per_requester = static_cast<unsigned>(r.integer(node, dotted, 1, 4096));
    } else if (name == "max_queued") {
      broker.max_queued = static_cast<unsigned>(r.integer(node, dotted, 1, 65536));
    } else if (name == "reply_timeout_ms") {
      broker.reply_timeout = std::chrono::milliseconds(r.integer(node, dotted, 100, 600000));
    } else if (name == "identity") {
      std::string identity = r.string(node, dotted, "\"lock\" or \"scan\"");
      if (identity == "lock") {
        broker.identity = BrokerIdentity::lock;
      } else if (identity == "scan") {
        broker.identity = BrokerIdentity::scan;
      } else {
        r.fail(node.source(), dotted,
               "\"" + identity + "\" is not an identity; allowed: \"lock\", \"scan\"");
      }
    } else {
      r.unknown(key, dotted,
                "state_dir, tick_ms, max_request_bytes, max_reply_bytes, max_concurrent, "
                "max_per_requester, max_queued, reply_timeout_ms, identity");
    }
  }
}

// One [ops.<name>] table. Its keys are the module's own, but for requester_env.
OpSettings read_op(const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  // toml++ iterates a table in key order; the module gets the keys in the file's order.
  std::vector<std::pair<const toml::key *, const toml::node *>> items;
  for (auto &&[key, node] : t) items.emplace_back(&key, &node);
  std::sort(items.begin(), items.end(), [](const auto &a, const auto &b) {
    const auto &x = a.first->source().begin;
    const auto &y = b.first->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  OpSettings op;
  for (const auto &[key, node] : items) {
    std::string name(key->str());
    std::string dotted = prefix + "." + key_part(name);
    if (name == "requester_env") {
      op.requester_env = requester_env_names(r, *node, dotted);
    } else if (!valid_op_key(name)) {
      r.fail(key->source(), dotted,
             "\"" + name + "\" is not a key of an operation; allowed: a-z, 0-9, _ and -");
    } else {
      op.entries.emplace_back(name, op_values(r, *node, dotted));
    }
  }
  return op;
}

void read_ops(const ConfigReader &r, const toml::table &t, Config &config) {
  // ops.enabled may follow the operations' tables in the file, or keep its default: the
  // tables are checked against it once it is known.
  if (const auto *enabled = t.get("enabled")) {
    config.ops_enabled = module_names(r, *enabled, "ops.enabled");
  }
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    if (name == "enabled") continue;
    std::string dotted = "ops." + key_part(name);
    bool enabled = std::find(config.ops_enabled.begin(), config.ops_enabled.end(), name) !=
                   config.ops_enabled.end();
    if (!node.is_table()) {
      if (enabled) r.table(node, dotted);  // refuses it, naming its type
      r.unknown(key, dotted, "enabled, [ops.<name>] tables of enabled operations");
    }
    if (!valid_module_name(name)) {
      r.fail(key.source(), dotted,
             "\"" + name + "\" is not a module name; allowed: module names of a-z, 0-9 and -");
    }
    if (!enabled) {
      r.fail(key.source(), dotted, "not in ops.enabled; enable it there or remove the table");
    }
    config.op_settings[name] = read_op(r, *node.as_table(), dotted);
  }
}

// ---- [limits] ---------------------------------------------------------------------------

struct LimitKey {
  const char *name;
  LimitField field;
  enum Unit { count, bytes, cpus, seconds } unit;
  std::uint64_t least;
};

// A bound below these leaves a plugin unable to start (its stdio, its loader, one page).
const LimitKey kLimitKeys[] = {
    {"processes", &Limits::processes, LimitKey::count, 1},
    {"open_files", &Limits::open_files, LimitKey::count, 8},
    {"file_size", &Limits::file_size, LimitKey::bytes, 4096},
    {"tmp_size", &Limits::tmp_size, LimitKey::bytes, 4096},
    {"tmp_inodes", &Limits::tmp_inodes, LimitKey::count, 16},
    {"shm_size", &Limits::shm_size, LimitKey::bytes, 4096},
    {"memory", &CgroupLimits::memory, LimitKey::bytes, 16 << 20},
    {"cpu", &CgroupLimits::cpu_millis, LimitKey::cpus, 10},
    {"scratch_size", &WatchLimits::scratch_size, LimitKey::bytes, 4096},
    {"scratch_files", &WatchLimits::scratch_files, LimitKey::count, 16},
    {"lifetime", &WatchLimits::lifetime_seconds, LimitKey::seconds, 1},
};
constexpr const char *kLimitNames =
    "processes, open_files, file_size, tmp_size, tmp_inodes, shm_size, memory, cpu, "
    "scratch_size, scratch_files, lifetime";
constexpr const char *kTopLimitNames =
    "processes, open_files, file_size, tmp_size, tmp_inodes, shm_size, memory, cpu, "
    "scratch_size, scratch_files, lifetime, cgroup";

// "512M": digits and one of K, M, G or T (powers of 1024); nullopt when it is not that.
std::optional<std::uint64_t> parse_size(const std::string &text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 != text.size() || digits > 12) return std::nullopt;
  const std::string units = "KMGT";
  const std::size_t unit = units.find(text.back());
  if (unit == std::string::npos) return std::nullopt;
  const unsigned shift = 10 * static_cast<unsigned>(unit + 1);
  const std::uint64_t count = std::stoull(text.substr(0, digits));
  if (count > (Limits::kUnlimited >> shift)) return std::nullopt;
  return count << shift;
}

// "90s", "15m", "2h", "1d": digits and one of s, m, h, d; nullopt when it is not that.
std::optional<std::uint64_t> parse_duration(const std::string &text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || digits + 1 != text.size() || digits > 9) return std::nullopt;
  const std::string units = "smhd";
  const std::uint64_t seconds[] = {1, 60, 3600, 86400};
  const std::size_t unit = units.find(text.back());
  if (unit == std::string::npos) return std::nullopt;
  return std::stoull(text.substr(0, digits)) * seconds[unit];
}

std::string allowed_for(const LimitKey &limit) {
  switch (limit.unit) {
    case LimitKey::seconds:
      return "seconds as an integer or a string such as \"90s\", \"15m\", \"2h\" or \"1d\" of "
             "at least 1 second, or \"unlimited\"";
    case LimitKey::bytes:
      return "bytes as an integer or a string such as \"512M\" (K, M, G, T) of at least " +
             std::to_string(limit.least) + ", or \"unlimited\"";
    case LimitKey::cpus:
      return "a number of CPUs such as 1 or 1.5, of at least 0.01, or \"unlimited\"";
    case LimitKey::count:
      break;
  }
  return "an integer of at least " + std::to_string(limit.least) + ", or \"unlimited\"";
}

std::uint64_t read_limit(const ConfigReader &r, const toml::node &node, const std::string &key,
                         const LimitKey &limit) {
  const std::string allowed = allowed_for(limit);
  std::uint64_t value = 0;
  if (const auto *integer = node.as_integer()) {
    if (integer->get() < 0) {
      r.fail(node.source(), key,
             std::to_string(integer->get()) + " is negative; allowed: " + allowed);
    }
    value = static_cast<std::uint64_t>(integer->get());
    if (limit.unit == LimitKey::cpus) {
      if (value > 1'000'000) r.fail(node.source(), key, "is more CPUs than any host has");
      value *= 1000;
    }
  } else if (const auto *real = node.as_floating_point(); real && limit.unit == LimitKey::cpus) {
    const double cpus = real->get();
    if (!(cpus >= 0.01 && cpus <= 1'000'000)) {
      r.fail(node.source(), key, std::to_string(cpus) + " is out of range; allowed: " + allowed);
    }
    value = static_cast<std::uint64_t>(cpus * 1000 + 0.5);
  } else if (const auto *text = node.as_string()) {
    if (text->get() == "unlimited") return Limits::kUnlimited;
    const std::optional<std::uint64_t> size =
        limit.unit == LimitKey::bytes     ? parse_size(text->get())
        : limit.unit == LimitKey::seconds ? parse_duration(text->get())
                                          : std::nullopt;
    if (!size) r.fail(node.source(), key, "\"" + text->get() + "\" is not " + allowed);
    value = *size;
  } else {
    r.fail(node.source(), key, "must be " + allowed + ", not " + std::string(toml_type_name(node)));
  }
  if (value < limit.least) {
    r.fail(node.source(), key,
           (limit.unit == LimitKey::cpus ? std::to_string(value / 1000) : std::to_string(value)) +
               " is too small; allowed: " + allowed);
  }
  return value;
}

// [limits] cgroup: "auto", "off" or an absolute cgroup path without "." or ".." parts.
std::string read_cgroup_setting(const ConfigReader &r, const toml::node &node,
                                const std::string &key) {
  const auto *text = node.as_string();
  const std::string allowed =
      "\"auto\", \"off\" or a cgroup path such as \"/sandbox-host\" (as /proc/self/cgroup "
      "writes it)";
  if (text == nullptr) {
    r.fail(node.source(), key, "must be " + allowed + ", not " + std::string(toml_type_name(node)));
  }
  const std::string value = text->get();
  if (value == "auto" || value == "off") return value;
  bool clean = value.starts_with("/") && value.find("//") == std::string::npos &&
               value.find('\0') == std::string::npos;
  for (std::size_t start = 1; clean && start < value.size();) {
    const std::size_t end = std::min(value.find('/', start), value.size());
    const std::string part = value.substr(start, end - start);
    clean = part != "." && part != "..";
    start = end + 1;
  }
  if (!clean) r.fail(node.source(), key, "\"" + value + "\" is not " + allowed);
  return value;
}

std::vector<std::pair<LimitField, std::uint64_t>> read_limits(const ConfigReader &r,
                                                              const toml::table &t,
                                                              const std::string &prefix,
                                                              std::string *cgroup = nullptr) {
  std::vector<std::pair<LimitField, std::uint64_t>> out;
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    const std::string dotted = prefix + "." + key_part(name);
    if (name == "cgroup") {
      if (cgroup == nullptr) {
        r.fail(key.source(), dotted,
               "is where every launch's cgroup goes; set it in [limits], not for one plugin");
      }
      *cgroup = read_cgroup_setting(r, node, dotted);
      continue;
    }
    const auto *limit = std::find_if(std::begin(kLimitKeys), std::end(kLimitKeys),
                                     [&](const LimitKey &k) { return name == k.name; });
    if (limit == std::end(kLimitKeys)) {
      r.unknown(key, dotted, cgroup != nullptr ? kTopLimitNames : kLimitNames);
    }
    out.emplace_back(limit->field, read_limit(r, node, dotted, *limit));
  }
  return out;
}

PluginConfig read_plugin(const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  PluginConfig plugin;
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    std::string dotted = prefix + "." + name;
    if (name == "sandbox") {
      // Only the exact string "off" runs a plugin unsandboxed; false, "", "none" or "Off"
      // are refused rather than guessed at.
      plugin.sandbox = r.string(node, dotted, "\"auto\", \"off\" or an enabled backend's name");
      if (plugin.sandbox != "auto" && !valid_module_name(plugin.sandbox)) {
        r.fail(node.source(), dotted,
               "\"" + plugin.sandbox +
                   "\" is not a sandbox mode; allowed: \"auto\", \"off\" or an enabled "
                   "backend's name");
      }
    } else if (name == "network") {
      std::string network = r.string(node, dotted, "\"none\", \"outbound\" or \"proxied\"");
      plugin.network = parse_network(network);
      if (!plugin.network) {
        r.fail(
            node.source(), dotted,
            "\"" + network + "\" is not a network; allowed: \"none\", \"outbound\", \"proxied\"");
      }
    } else if (name == "read") {
      plugin.read = r.absolute_paths(node, dotted);
    } else if (name == "env") {
      plugin.env = r.strings(node, dotted, "NAME or NAME=VALUE");
      for (size_t i = 0; i < plugin.env.size(); ++i) {
        try {
          check_env_entry(plugin.env[i], "env");
        } catch (const std::invalid_argument &e) {
          r.fail(node.as_array()->get(i)->source(), dotted + "[" + std::to_string(i) + "]",
                 e.what());
        }
      }
    } else if (name == "handshake") {
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
    } else if (name == "limits") {
      plugin.limits = read_limits(r, r.table(node, dotted), dotted);
    } else {
      r.unknown(key, dotted, "sandbox, network, read, env, handshake, limits");
    }
  }
  return plugin;
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

bool is_module_name(std::string_view name) {
  return valid_module_name(name);
}

std::vector<std::pair<std::string, std::vector<std::string>>> read_module_entries(
    const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  if (const auto *env = t.get("requester_env")) {
    r.fail(env->source(), prefix + ".requester_env",
           "is a key of an operation's table; this module has no requester whose variables "
           "it could take");
  }
  return read_op(r, t, prefix).entries;
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

fs::path default_state_dir(uid_t uid, const char *xdg_state_home, const char *home) {
  if (uid == 0) return "/var/lib/sandbox-host";
  if (xdg_state_home != nullptr && xdg_state_home[0] == '/') {
    return fs::path(xdg_state_home) / "sandbox-host";
  }
  if (home != nullptr && home[0] == '/') return fs::path(home) / ".local/state/sandbox-host";
  return "/tmp/sandbox-host-" + std::to_string(uid);
}

fs::path default_state_dir() {
  return default_state_dir(geteuid(), std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
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
  bool priority_written = false;
  for (auto &&[key, node] : root) {
    std::string name(key.str());
    if (name == "module_dirs") {
      auto dirs = r.absolute_paths(node, name);
      config.module_dirs.assign(dirs.begin(), dirs.end());
    } else if (name == "backends") {
      read_backends(r, r.table(node, name), config);
      priority_written = r.table(node, name).contains("priority");
    } else if (name == "ops") {
      read_ops(r, r.table(node, name), config);
    } else if (name == "broker") {
      read_broker(r, r.table(node, name), config.broker);
    } else if (name == "egress") {
      read_egress(r, r.table(node, name), config.egress.emplace());
    } else if (name == "launcher") {
      read_launcher(r, r.table(node, name), config.launcher.emplace());
    } else if (name == "metrics") {
      read_metrics(r, r.table(node, name), config.metrics.emplace());
    } else if (name == "audit") {
      read_audit(r, r.table(node, name), config);
    } else if (name == "limits") {
      for (const auto &[field, value] : read_limits(r, r.table(node, name), name, &config.cgroup)) {
        set_limit(config.limits, field, value);
      }
    } else if (name == "plugins") {
      for (auto &&[plugin_key, plugin_node] : r.table(node, name)) {
        std::string prefix = "plugins." + std::string(plugin_key.str());
        config.plugins[std::string(plugin_key.str())] =
            read_plugin(r, r.table(plugin_node, prefix), prefix);
      }
    } else {
      r.unknown(key, name,
                "module_dirs, backends, ops, broker, egress, launcher, metrics, audit, limits, "
                "plugins");
    }
  }
  if (!priority_written) {
    // The default order, of the backends this file enables.
    std::erase_if(config.backend_priority, [&](const std::string &name) {
      return std::find(config.backends_enabled.begin(), config.backends_enabled.end(), name) ==
             config.backends_enabled.end();
    });
  }
  default_egress_socket(r, root, config);
  if (config.launcher && config.launcher->socket.empty()) {
    config.launcher->socket = config.broker.state_dir / "launcher" / "launch.sock";
  }
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
