#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/env_names.hpp>

#include <toml++/toml.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace sandbox_host {
namespace fs = std::filesystem;

ConfigError::ConfigError(std::string file, int line, std::string key, const std::string &what)
    : std::runtime_error((file.empty() ? std::string("<defaults>") : file) +
                         (line > 0 ? ":" + std::to_string(line) : std::string()) +
                         (key.empty() ? std::string() : ": " + key) + ": " + what),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)) {}

PluginConfig Config::plugin(const std::string &name) const {
  auto it = plugins.find(name);
  return it == plugins.end() ? PluginConfig{} : it->second;
}

namespace {

constexpr std::array kKnownBackends{"namespaces", "landlock", "seatbelt", "off"};

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

bool valid_module_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::string join(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Reads one file; every error names the file, the line, the dotted key and what is allowed.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::source_region &where, const std::string &key,
                         const std::string &what) const {
    throw ConfigError(file_, static_cast<int>(where.begin.line), key, what);
  }

  const toml::table &table(const toml::node &node, const std::string &key) const {
    if (const auto *t = node.as_table()) return *t;
    fail(node.source(), key, std::string("must be a table, not ") + type_name(node));
  }

  std::string string(const toml::node &node, const std::string &key,
                     const std::string &allowed) const {
    if (const auto *s = node.as_string()) return s->get();
    fail(node.source(), key,
         std::string("must be a string (") + allowed + "), not " + type_name(node));
  }

  std::vector<std::string> strings(const toml::node &node, const std::string &key,
                                   const std::string &allowed) const {
    const auto *array = node.as_array();
    if (array == nullptr) {
      fail(node.source(), key,
           std::string("must be an array of strings (") + allowed + "), not " + type_name(node));
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < array->size(); ++i) {
      out.push_back(string(*array->get(i), key + "[" + std::to_string(i) + "]", allowed));
    }
    return out;
  }

  std::vector<std::string> module_names(const toml::node &node, const std::string &key) const {
    const std::string allowed = "module names of a-z, 0-9 and -";
    auto names = strings(node, key, allowed);
    for (const auto &name : names) {
      if (!valid_module_name(name)) {
        fail(node.source(), key, "\"" + name + "\" is not a module name; allowed: " + allowed);
      }
    }
    return names;
  }

  std::vector<std::string> absolute_paths(const toml::node &node, const std::string &key) const {
    auto paths = strings(node, key, "absolute paths");
    for (const auto &path : paths) {
      if (path.empty() || path.front() != '/') {
        fail(node.source(), key, "\"" + path + "\" is not an absolute path");
      }
    }
    return paths;
  }

  void unknown(const toml::key &key, const std::string &dotted, const char *allowed) const {
    fail(key.source(), dotted, std::string("unknown key; allowed: ") + allowed);
  }

 private:
  static const char *type_name(const toml::node &node) {
    switch (node.type()) {
      case toml::node_type::table:
        return "a table";
      case toml::node_type::array:
        return "an array";
      case toml::node_type::string:
        return "a string";
      case toml::node_type::integer:
        return "an integer";
      case toml::node_type::floating_point:
        return "a float";
      case toml::node_type::boolean:
        return "a boolean";
      default:
        return "a date or time";
    }
  }
  std::string file_;
};

void read_backends(const Reader &r, const toml::table &t, Config &config) {
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    if (name == "enabled") {
      config.backends_enabled = r.module_names(node, "backends.enabled");
    } else if (name == "priority") {
      config.backend_priority = r.module_names(node, "backends.priority");
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

void read_audit(const Reader &r, const toml::table &t, Config &config) {
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

PluginConfig read_plugin(const Reader &r, const toml::table &t, const std::string &prefix) {
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
      std::string network = r.string(node, dotted, "\"none\" or \"outbound\"");
      plugin.network = parse_network(network);
      if (!plugin.network) {
        r.fail(node.source(), dotted,
               "\"" + network + "\" is not a network; allowed: \"none\", \"outbound\"");
      }
    } else if (name == "read") {
      plugin.read = r.absolute_paths(node, dotted);
    } else {
      r.unknown(key, dotted, "sandbox, network, read");
    }
  }
  return plugin;
}

// Names that must refer to enabled backends do.
void cross_check(const Reader &r, const toml::table &root, const Config &config) {
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
}

}  // namespace

Config default_config() {
  Config config;
  fs::path near_exe = executable_dir() / ".." / SANDBOX_HOST_MODULE_SUBDIR;
  config.module_dirs.push_back(near_exe.lexically_normal());
  fs::path installed = SANDBOX_HOST_INSTALL_MODULE_DIR;
  if (installed != config.module_dirs.front()) config.module_dirs.push_back(installed);
  config.backends_enabled.assign(kKnownBackends.begin(), kKnownBackends.end());
  config.backend_priority = {"namespaces", "landlock", "seatbelt"};
  config.ops_enabled = {"ping"};
  return config;
}

Config load_config(const fs::path &path) {
  const std::string file = path.string();
  Reader r(file);
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
      for (auto &&[op_key, op_node] : r.table(node, name)) {
        if (op_key.str() != "enabled")
          r.unknown(op_key, "ops." + std::string(op_key.str()), "enabled");
        config.ops_enabled = r.module_names(op_node, "ops.enabled");
      }
    } else if (name == "audit") {
      read_audit(r, r.table(node, name), config);
    } else if (name == "plugins") {
      for (auto &&[plugin_key, plugin_node] : r.table(node, name)) {
        std::string prefix = "plugins." + std::string(plugin_key.str());
        config.plugins[std::string(plugin_key.str())] =
            read_plugin(r, r.table(plugin_node, prefix), prefix);
      }
    } else {
      r.unknown(key, name, "module_dirs, backends, ops, audit, plugins");
    }
  }
  if (!priority_written) {
    // The default order, of the backends this file enables.
    std::erase_if(config.backend_priority, [&](const std::string &name) {
      return std::find(config.backends_enabled.begin(), config.backends_enabled.end(), name) ==
             config.backends_enabled.end();
    });
  }
  cross_check(r, root, config);
  return config;
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
