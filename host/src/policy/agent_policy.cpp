// The agent policy's file (TOML, docs/agent-policy.md), its validation and the deny mount
// points. Every error names the file, the line where toml++ knows it, the entry and what was
// wrong, in the config's own wording (config.cpp).
#include <sandbox_host/host/policy/agent_env.hpp>
#include <sandbox_host/host/policy/agent_policy.hpp>

#include "config/config_reader.hpp"
#include "config/toml_type_name.hpp"

#include <toml++/toml.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace sandbox_host::policy {
namespace {

constexpr const char *kAllowedKeys =
    "home, runtime, harness, exe, egress, read, write, deny, tool_write, domains, proxy_port, "
    "vars";

// A value as a message shows it: quoted, with quotes, backslashes and control characters
// escaped, so a stray newline or NUL is visible.
std::string shown(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\0') {
      out += "\\0";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string indexed(const std::string &key, size_t index) {
  return key + "[" + std::to_string(index) + "]";
}

// A vars entry as a dotted key names it: bare when TOML allows that, else quoted.
std::string var_entry(const std::string &name) {
  const bool bare = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return "vars." + (bare ? name : shown(name));
}

// Upper case only: Claude Code's settings take no other name in "env" (its schema's
// propertyNames), and the drop-in must carry every variable the policy sets.
bool valid_var_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

// path with "//", "." and trailing "/" dropped and ".." taken lexically: what a clean
// entry would look like.
std::string lexically_clean(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (auto part : parts) (out += '/') += part;
  return out.empty() ? "/" : out;
}

// Throws PolicyError unless path is absolute and clean, and (without allow_glob) free of
// glob characters.
void check_path(const std::string &source, const std::string &entry, const std::string &path,
                bool allow_glob) {
  if (path.find('\0') != std::string::npos || path.find('\n') != std::string::npos) {
    throw PolicyError(source, entry, shown(path) + " holds a NUL or newline");
  }
  if (path.empty() || path.front() != '/') {
    throw PolicyError(source, entry, shown(path) + " is not an absolute path");
  }
  const std::string clean = lexically_clean(path);
  if (clean != path) {
    throw PolicyError(source, entry,
                      shown(path) + " is not clean (no \".\", \"..\", \"//\" or trailing \"/\"); " +
                          "its clean form is " + shown(clean));
  }
  const size_t glob = path.find_first_of("*?[");
  if (!allow_glob && glob != std::string::npos) {
    throw PolicyError(source, entry,
                      shown(path) + " holds the glob character '" + path[glob] +
                          "'; globs are allowed in tool_write only");
  }
}

void check_paths(const std::string &source, const std::string &key,
                 const std::vector<std::string> &paths, bool allow_glob = false) {
  for (size_t i = 0; i < paths.size(); ++i) {
    check_path(source, indexed(key, i), paths[i], allow_glob);
  }
}

// A host name or "*.domain", as Claude Code's allowedDomains takes it: no scheme, path or
// port.
void check_domain(const std::string &source, const std::string &entry, const std::string &domain) {
  const std::string allowed = "allowed: a host name or \"*.domain\", without scheme, path or port";
  if (domain.empty()) throw PolicyError(source, entry, "is empty; " + allowed);
  const std::string_view name = std::string_view(domain).substr(domain.starts_with("*.") ? 2 : 0);
  for (char c : name) {
    const bool space =
        c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\0';
    if (space || c == '/' || c == ':' || c == '*') {
      throw PolicyError(source, entry, shown(domain) + " is not a domain; " + allowed);
    }
  }
  if (name.empty()) {
    throw PolicyError(source, entry, shown(domain) + " names no domain; " + allowed);
  }
}

// Reads a parsed file into a Policy with the config's own reader, remembering each entry's
// line for validate()'s errors, and failing with PolicyError instead of ConfigError.
class Reader {
 public:
  explicit Reader(std::string file)
      : file_(std::move(file)),
        toml_(file_, [this](int line, const std::string &key, const std::string &what) {
          throw PolicyError(at_line(line), key, what);
        }) {}
  Reader(const Reader &) = delete;
  Reader &operator=(const Reader &) = delete;

  // file:line for an entry read, just file for any other.
  std::string located(const std::string &entry) const {
    auto it = lines_.find(entry);
    return it == lines_.end() ? file_ : at_line(it->second);
  }

  std::string string(const toml::node &node, const std::string &key, const std::string &allowed) {
    std::string value = toml_.string(node, key, allowed);
    remember(key, node);
    return value;
  }

  std::vector<std::string> strings(const toml::node &node, const std::string &key,
                                   const std::string &allowed) {
    std::vector<std::string> values = toml_.strings(node, key, allowed);
    remember(key, node);
    for (size_t i = 0; i < values.size(); ++i) {
      lines_[indexed(key, i)] = static_cast<int>(ConfigReader::element_source(node, i).begin.line);
    }
    return values;
  }

  int port(const toml::node &node, const std::string &key) {
    const auto port = static_cast<int>(toml_.integer(node, key, 0, 65535, "0 for none"));
    remember(key, node);
    return port;
  }

  std::map<std::string, std::string> vars(const toml::node &node) {
    const auto *table = node.as_table();
    if (table == nullptr) {
      toml_.fail(node.source(), "vars",
                 "must be a table of strings (variable = \"value\"), not " +
                     std::string(toml_type_name(node)));
    }
    remember("vars", node);
    std::map<std::string, std::string> out;
    for (auto &&[key, value] : *table) {
      const std::string name(key.str());
      out[name] = string(value, var_entry(name), "the variable's value");
    }
    return out;
  }

  [[noreturn]] void unknown(const toml::key &key) const {
    toml_.unknown(key, std::string(key.str()), kAllowedKeys);
  }

 private:
  void remember(const std::string &key, const toml::node &node) {
    lines_[key] = static_cast<int>(node.source().begin.line);
  }
  std::string at_line(int line) const {
    return line > 0 ? file_ + ":" + std::to_string(line) : file_;
  }

  std::string file_;
  ConfigReader toml_;
  std::map<std::string, int> lines_;
};

}  // namespace

PolicyError::PolicyError(const std::string &source, const std::string &entry,
                         const std::string &what)
    : std::runtime_error((source.empty() ? std::string() : source + ": ") +
                         (entry.empty() ? std::string() : entry + ": ") + what),
      entry_(entry) {}

void Policy::validate() const {
  if (home.empty()) throw PolicyError(source, "home", "is missing; allowed: an absolute path");
  check_path(source, "home", home, false);
  for (const auto &[key, path] : {std::pair{"runtime", &runtime}, std::pair{"harness", &harness},
                                  std::pair{"exe", &exe}, std::pair{"egress", &egress}}) {
    if (!path->empty()) check_path(source, key, *path, false);
  }
  check_paths(source, "read", read);
  check_paths(source, "write", write);
  check_paths(source, "deny", deny);
  check_paths(source, "tool_write", tool_write, true);
  for (size_t i = 0; i < domains.size(); ++i)
    check_domain(source, indexed("domains", i), domains[i]);
  if (proxy_port < 0 || proxy_port > 65535) {
    throw PolicyError(
        source, "proxy_port",
        std::to_string(proxy_port) + " is out of range; allowed: 0 to 65535, 0 for none");
  }
  for (const auto &[name, value] : vars) {
    if (!valid_var_name(name)) {
      throw PolicyError(source, var_entry(name),
                        shown(name) +
                            " is not an environment variable name; allowed: A-Z, 0-9 and _, not "
                            "starting with a digit (the names Claude Code's settings take)");
    }
    if (name == kEnvSandbox || name == kEnvBrokered || name == kEnvRuntime) {
      throw PolicyError(source, var_entry(name),
                        "is set by the policy itself; allowed: any other variable");
    }
    if (value.find('\0') != std::string::npos) {
      throw PolicyError(source, var_entry(name), "the value holds a NUL");
    }
  }
}

namespace {

// Each missing component made 0700, parents included: whatever the sandbox mounts there is
// this user's alone, also where nothing is mounted.
void make_mount_point(const std::string &path, const std::string &entry) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      throw std::system_error(errno, std::generic_category(),
                              "creating the mount point " + prefix + " of " + entry + " " + path);
    }
    if (slash == std::string::npos) break;
  }
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "the mount point " + path + " of " + entry);
  }
}

}  // namespace

void Policy::mount_points(ViewFor who) const {
  for (const auto &path : deny) make_mount_point(path, "a deny entry");
  if (who != ViewFor::harness) return;
  // The harness inside the sandbox writes its ToolWrite directories itself, inside a
  // harness directory that is read-only there: each must exist before it starts.
  for (const auto &path : tool_write) {
    if (path.find_first_of("*?[") == std::string::npos) make_mount_point(path, "tool_write entry");
  }
}

std::map<std::string, std::string> Policy::environment() const {
  std::map<std::string, std::string> out = vars;
  for (auto &[name, value] : egress_vars(egress)) out[name] = value;
  out[std::string(kEnvSandbox)] = "1";
  return out;
}

Policy parse_policy(std::string_view toml, const std::string &source) {
  Reader r(source);
  toml::table root;
  try {
    root = toml::parse(toml, source);
  } catch (const toml::parse_error &e) {
    const int line = static_cast<int>(e.source().begin.line);
    throw PolicyError(line > 0 ? source + ":" + std::to_string(line) : source, "",
                      "not valid TOML: " + std::string(e.description()));
  }

  Policy policy;
  policy.source = source;
  for (auto &&[key, value] : root) {
    const std::string name(key.str());
    const toml::node &node = value;  // a lambda may not capture a structured binding in clang 14
    auto optional_path = [&](const char *empty_means) {
      return r.string(node, name, std::string("an absolute path, or \"\" for ") + empty_means);
    };
    if (name == "home") {
      policy.home = r.string(node, name, "an absolute path");
    } else if (name == "runtime") {
      policy.runtime = optional_path("none");
    } else if (name == "harness") {
      policy.harness = optional_path("none");
    } else if (name == "exe") {
      policy.exe = optional_path("none");
    } else if (name == "egress") {
      policy.egress = optional_path("none");
    } else if (name == "read") {
      policy.read = r.strings(node, name, "absolute paths");
    } else if (name == "write") {
      policy.write = r.strings(node, name, "absolute paths");
    } else if (name == "deny") {
      policy.deny = r.strings(node, name, "absolute paths");
    } else if (name == "tool_write") {
      policy.tool_write = r.strings(node, name, "absolute paths, components may be globs");
    } else if (name == "domains") {
      policy.domains = r.strings(node, name, "host names or *.domain patterns");
    } else if (name == "proxy_port") {
      policy.proxy_port = r.port(node, name);
    } else if (name == "vars") {
      policy.vars = r.vars(node);
    } else {
      r.unknown(key);
    }
  }
  if (!root.contains("home")) {
    throw PolicyError(source, "home", "is missing; allowed: an absolute path");
  }
  // validate() knows the entry, the reader its line: a copy without a source says what was
  // wrong as "<entry>: <what>", and the error is thrown again at the entry's line.
  Policy unnamed = policy;
  unnamed.source.clear();
  try {
    unnamed.validate();
  } catch (const PolicyError &e) {
    const std::string what = e.what();
    throw PolicyError(r.located(e.entry()), e.entry(), what.substr(e.entry().size() + 2));
  }
  return policy;
}

Policy load_policy(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw PolicyError(
        file.string(), "",
        "cannot be read: " + std::error_code(errno, std::generic_category()).message());
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw PolicyError(file.string(), "", "cannot be read");
  return parse_policy(text.str(), file.string());
}

}  // namespace sandbox_host::policy
