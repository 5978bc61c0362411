// The policy rendered into Claude Code's managed settings and installed as a drop-in of
// managed-settings.d. Every key emitted is one of the published settings schema's
// (SchemaStore claude-code-settings.json); none of the schema's ways to run a command
// outside the sandbox (excludedCommands, allowUnsandboxedCommands true,
// enableWeakerNestedSandbox, ignoreViolations, allowAllUnixSockets) is ever written.
#include <sandbox_host/host/file_replace.hpp>
#include <sandbox_host/host/policy/claude_settings.hpp>
#include <sandbox_host/host/policy/permission_rules.hpp>
#include <sandbox_host/host/shell_quote.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>
#include <system_error>
#include <vector>

namespace sandbox_host::policy {
namespace fs = std::filesystem;
namespace {

// Claude Code gives a PreToolUse hook 600 seconds by default; the hook answers from local
// files, so a call it has not answered in 10 is stuck, and a stuck hook must not stall the
// session for ten minutes.
constexpr int kHookTimeoutSeconds = 10;
// The hook's matcher: a regular expression over tool names, anchored by Claude Code.
std::string hooked_tool_matcher() {
  std::string matcher;
  for (const auto tool : kFileTools) {
    if (!matcher.empty()) matcher += '|';
    matcher += tool;
  }
  return matcher + "|" + std::string(kBashTool);
}

[[noreturn]] void fail(const std::string &what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

bool is_below(const std::string &path, const std::string &dir) {
  return !dir.empty() && path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (dir.back() == '/' || path[dir.size()] == '/');
}

// A path in the settings' own syntax: "~/x" below home, "//x" for any other absolute path
// (a single leading "/" would be relative to the settings file). Home itself is written
// absolute: "~" alone is no prefix the settings define.
std::string settings_path(const Policy &policy, const std::string &path) {
  if (is_below(path, policy.home)) return "~" + path.substr(policy.home.size());
  return "/" + path;
}

void append_path(boost::json::array &paths, const Policy &policy, const std::string &path) {
  if (path.empty()) return;
  boost::json::string rendered(settings_path(policy, path));
  for (const auto &existing : paths) {
    if (existing.as_string() == rendered) return;
  }
  paths.emplace_back(std::move(rendered));
}

// Sets key to paths unless there are none: an empty list says nothing the absent key does
// not, and the same policy always renders the same keys.
void set_paths(boost::json::object &object, std::string_view key, boost::json::array paths) {
  if (!paths.empty()) object[key] = std::move(paths);
}

boost::json::object filesystem_settings(const Policy &policy) {
  boost::json::array deny_read, allow_read, allow_write, deny_write;
  append_path(deny_read, policy, policy.home);
  append_path(deny_read, policy, policy.runtime);
  for (const auto &path : policy.deny) append_path(deny_read, policy, path);
  for (const auto &path : policy.read) append_path(allow_read, policy, path);
  append_path(allow_read, policy, policy.egress);
  for (const auto &path : policy.write) append_path(allow_write, policy, path);
  // Home and runtime too, though denyRead already gives commands a throwaway tmpfs there:
  // Claude Code's sandbox makes a session's working directory writable over every rule, and
  // only this leaves a session started in the home itself without Bash where the hook that
  // refuses it does not run (--bare).
  append_path(deny_write, policy, policy.home);
  append_path(deny_write, policy, policy.runtime);
  for (const auto &path : policy.deny) append_path(deny_write, policy, path);
  append_path(deny_write, policy, policy.harness);
  // Entries under the harness directory are denied with it already.
  for (const auto &path : policy.tool_write) {
    if (path != policy.harness && !is_below(path, policy.harness)) {
      append_path(deny_write, policy, path);
    }
  }
  boost::json::object filesystem;
  set_paths(filesystem, "denyRead", std::move(deny_read));
  set_paths(filesystem, "allowRead", std::move(allow_read));
  set_paths(filesystem, "allowWrite", std::move(allow_write));
  set_paths(filesystem, "denyWrite", std::move(deny_write));
  // Only these paths may be re-allowed: a user's or project's allowRead is ignored.
  filesystem["allowManagedReadPathsOnly"] = true;
  return filesystem;
}

boost::json::object network_settings(const Policy &policy) {
  boost::json::object network;
  boost::json::array domains;
  for (const auto &domain : policy.domains) domains.emplace_back(domain);
  // Without domains the key stays out and allowManagedDomainsOnly leaves no host reachable.
  if (!domains.empty()) network["allowedDomains"] = std::move(domains);
  network["allowManagedDomainsOnly"] = true;
  if (policy.proxy_port != 0) {
    // The egress proxy speaks HTTP CONNECT and SOCKS5 on the same port.
    network["httpProxyPort"] = policy.proxy_port;
    network["socksProxyPort"] = policy.proxy_port;
  }
  return network;
}

// The binary the hook runs: the policy's exe, or the sandbox-host that renders.
std::string hook_executable(const Policy &policy) {
  if (!policy.exe.empty()) return policy.exe;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    throw std::runtime_error("cannot tell which sandbox-host the hook runs (/proc/self/exe: " +
                             ec.message() + "); set exe in the policy");
  }
  return self.string();
}

boost::json::object hook_settings(const Policy &policy, const fs::path &policy_file) {
  // Absolute: Claude Code runs the hook in the session's working directory.
  const std::string command = shell_quoted(hook_executable(policy)) + " hook --policy " +
                              shell_quoted(fs::absolute(policy_file).lexically_normal().string());
  boost::json::object hook{{"type", "command"}, {"command", command}};
  hook["timeout"] = kHookTimeoutSeconds;
  boost::json::object matcher{{"matcher", hooked_tool_matcher()}};
  matcher["hooks"] = boost::json::array{std::move(hook)};
  boost::json::object hooks;
  hooks["PreToolUse"] = boost::json::array{std::move(matcher)};
  return hooks;
}

// JSON with two-space indentation, keys in the order they were inserted.
void write_indented(std::string &out, const boost::json::value &value, int depth) {
  const std::string indent(static_cast<std::size_t>(depth + 1) * 2, ' ');
  const std::string closing(static_cast<std::size_t>(depth) * 2, ' ');
  if (value.is_object() && !value.get_object().empty()) {
    out += "{\n";
    bool first = true;
    for (const auto &entry : value.get_object()) {
      if (!first) out += ",\n";
      first = false;
      out += indent + boost::json::serialize(boost::json::string(entry.key())) + ": ";
      write_indented(out, entry.value(), depth + 1);
    }
    out += "\n" + closing + "}";
  } else if (value.is_array() && !value.get_array().empty()) {
    out += "[\n";
    bool first = true;
    for (const auto &element : value.get_array()) {
      if (!first) out += ",\n";
      first = false;
      out += indent;
      write_indented(out, element, depth + 1);
    }
    out += "\n" + closing + "]";
  } else {
    out += boost::json::serialize(value);
  }
}

std::string octal_mode(mode_t mode) {
  return (std::ostringstream() << '0' << std::oct << (mode & 07777)).str();
}

// Refuses a directory that another user than root or this one owns, or that group or
// others may write: whoever could write it could replace the policy of every session.
void check_directory_owner_and_mode(const struct stat &status, const fs::path &dir) {
  if (status.st_uid != 0 && status.st_uid != ::geteuid()) {
    fail("managed settings directory " + dir.string() + " belongs to uid " +
             std::to_string(status.st_uid) + ", neither root nor this user",
         EPERM);
  }
  if ((status.st_mode & 022) != 0) {
    fail("managed settings directory " + dir.string() +
             " may be written by group or others (mode " + octal_mode(status.st_mode) +
             "); make it 0755",
         EPERM);
  }
}

// Opens managed (creating it 0755 with its parents when missing; it may be a symbolic link,
// as /etc entries sometimes are) and checks it.
UniqueFd open_managed_dir(const fs::path &managed) {
  std::error_code ec;
  if (!fs::exists(managed, ec)) {
    fs::create_directories(managed, ec);
    if (ec) fail("cannot create managed settings directory " + managed.string(), ec.value());
    // Exactly 0755 whatever the umask: every user's Claude Code reads it.
    if (::chmod(managed.c_str(), 0755) != 0) fail("cannot chmod " + managed.string());
  }
  UniqueFd fd(::open(managed.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) fail("cannot open managed settings directory " + managed.string());
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) fail("cannot stat " + managed.string());
  check_directory_owner_and_mode(status, managed);
  return fd;
}

// Opens managed-settings.d under managed_fd, creating it 0755 when missing; refuses a
// symbolic link, which would carry the drop-in wherever it points.
UniqueFd open_drop_in_dir(int managed_fd, const fs::path &shown) {
  const bool created = ::mkdirat(managed_fd, shown.filename().c_str(), 0755) == 0;
  if (!created && errno != EEXIST) fail("cannot create " + shown.string());
  struct stat link {};
  if (::fstatat(managed_fd, shown.filename().c_str(), &link, AT_SYMLINK_NOFOLLOW) != 0) {
    fail("cannot stat " + shown.string());
  }
  if (S_ISLNK(link.st_mode)) {
    fail(shown.string() + " is a symbolic link; it must be a directory of its own", ELOOP);
  }
  if (!S_ISDIR(link.st_mode)) fail(shown.string() + " is not a directory", ENOTDIR);
  UniqueFd fd(::openat(managed_fd, shown.filename().c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) fail("cannot open " + shown.string());
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) fail("cannot stat " + shown.string());
  // Exactly 0755 whatever the umask: every user's Claude Code reads it.
  if (created && ::fchmod(fd.get(), 0755) != 0) fail("cannot chmod " + shown.string());
  if (!created) check_directory_owner_and_mode(status, shown);
  return fd;
}

// Whether name in dir_fd is already a regular 0644 file holding exactly contents.
bool holds(int dir_fd, const std::string &name, std::string_view contents) {
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0 || !S_ISREG(status.st_mode) ||
      (status.st_mode & 07777) != 0644 ||
      static_cast<std::size_t>(status.st_size) != contents.size()) {
    return false;
  }
  std::string existing(contents.size() + 1, '\0');
  std::size_t read = 0;
  while (read < existing.size()) {
    const ssize_t n = ::read(fd.get(), existing.data() + read, existing.size() - read);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    read += static_cast<std::size_t>(n);
  }
  return read == contents.size() && existing.compare(0, read, contents) == 0;
}

}  // namespace

fs::path managed_dir() {
#ifdef __APPLE__
  return "/Library/Application Support/ClaudeCode";
#else
  return "/etc/claude-code";
#endif
}

fs::path drop_in_path(const fs::path &managed) {
  return managed / "managed-settings.d" / kDropIn;
}

boost::json::object claude_settings(const Policy &policy, const fs::path &policy_file) {
  boost::json::object sandbox;
  sandbox["enabled"] = true;
  // A machine without the sandbox's dependencies refuses to start a session rather than
  // run its commands unsandboxed.
  sandbox["failIfUnavailable"] = true;
  // dangerouslyDisableSandbox is ignored: every command runs sandboxed.
  sandbox["allowUnsandboxedCommands"] = false;
  sandbox["autoAllowBashIfSandboxed"] = true;
  sandbox["filesystem"] = filesystem_settings(policy);
  sandbox["network"] = network_settings(policy);

  boost::json::object env;
  for (const auto &[name, value] : policy.environment()) env[name] = value;

  // What holds where hooks do not run (--bare): managed deny rules, which every session
  // obeys, permission prompts skipped or not.
  boost::json::array deny;
  for (auto &rule : hookless_rules(policy).deny) deny.emplace_back(std::move(rule));

  boost::json::object settings;
  settings["sandbox"] = std::move(sandbox);
  settings["env"] = std::move(env);
  settings["hooks"] = hook_settings(policy, policy_file);
  if (!deny.empty()) settings["permissions"] = boost::json::object{{"deny", std::move(deny)}};
  return settings;
}

std::string render_claude_settings(const Policy &policy, const fs::path &policy_file) {
  std::string out;
  write_indented(out, claude_settings(policy, policy_file), 0);
  return out + "\n";
}

bool install_drop_in(const Policy &policy, const fs::path &policy_file, const fs::path &managed) {
  const std::string contents = render_claude_settings(policy, policy_file);
  const fs::path path = drop_in_path(managed);
  const UniqueFd managed_fd = open_managed_dir(managed);
  const UniqueFd dir_fd = open_drop_in_dir(managed_fd.get(), path.parent_path());
  if (holds(dir_fd.get(), path.filename().string(), contents)) return false;
  replace_file(dir_fd.get(), path, contents, 0644);
  return true;
}

}  // namespace sandbox_host::policy
