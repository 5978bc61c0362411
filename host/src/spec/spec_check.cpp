#include <sandbox_host/host/spec_check.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

namespace sandbox_host {

SpecError::SpecError(const std::string &plugin, const std::string &field, const std::string &what)
    : std::runtime_error("plugin \"" + plugin + "\": spec " + field + ": " + what), field_(field) {}

namespace {

bool printable_line(const std::string &s) {
  return s.find('\0') == std::string::npos && s.find('\n') == std::string::npos;
}

// Absolute and already what realpath() makes of it: no symlink, "..", "." or "//" left.
void check_resolved(const Spec &spec, const std::string &field, const std::string &path) {
  if (path.empty()) throw SpecError(spec.plugin_name, field, "is empty");
  if (!printable_line(path)) throw SpecError(spec.plugin_name, field, "contains NUL or newline");
  if (path.front() != '/') {
    throw SpecError(spec.plugin_name, field, "\"" + path + "\" is not an absolute path");
  }
  std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                       &std::free);
  if (!resolved) {
    throw SpecError(spec.plugin_name, field, "\"" + path + "\" does not exist or is unreadable");
  }
  if (path != resolved.get()) {
    throw SpecError(
        spec.plugin_name, field,
        "\"" + path + "\" is not symlink-resolved (it resolves to \"" + resolved.get() + "\")");
  }
}

void check_directory(const Spec &spec, const std::string &field, const std::string &path) {
  check_resolved(spec, field, path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw SpecError(spec.plugin_name, field, "\"" + path + "\" is not a directory");
  }
}

// A path that may not exist yet: absolute and clean (no ".", ".." or "//" left) and, where
// it exists, symlink-resolved.
void check_clean(const Spec &spec, const std::string &field, const std::string &path) {
  if (path.empty()) throw SpecError(spec.plugin_name, field, "is empty");
  if (!printable_line(path)) throw SpecError(spec.plugin_name, field, "contains NUL or newline");
  if (path.front() != '/') {
    throw SpecError(spec.plugin_name, field, "\"" + path + "\" is not an absolute path");
  }
  const std::string normal = std::filesystem::path(path).lexically_normal().string();
  if (path != normal) {
    throw SpecError(spec.plugin_name, field,
                    "\"" + path + "\" is not a clean path (it would be \"" + normal + "\")");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) check_resolved(spec, field, path);
}

// ProxySocket, ProxyPort and EgressDir: set for network proxied, and only for it. Whether the
// socket exists is stage 1's to say: the proxy may start after the Spec was made.
void check_proxy(const Spec &spec) {
  if (spec.network != Network::proxied) {
    const std::string only =
        "is set, but only network proxied goes through the egress proxy "
        "(network is \"" +
        std::string(to_string(spec.network)) + "\")";
    if (!spec.proxy_socket.empty()) throw SpecError(spec.plugin_name, "ProxySocket", only);
    if (spec.proxy_port != 0) throw SpecError(spec.plugin_name, "ProxyPort", only);
    if (!spec.egress_dir.empty()) throw SpecError(spec.plugin_name, "EgressDir", only);
    return;
  }
  check_clean(spec, "ProxySocket", spec.proxy_socket);
  if (spec.proxy_socket.size() > kMaxSocketPath) {
    throw SpecError(spec.plugin_name, "ProxySocket",
                    "\"" + spec.proxy_socket + "\" is longer than a unix socket address holds (" +
                        std::to_string(kMaxSocketPath) + " bytes)");
  }
  if (spec.proxy_port == 0) {
    throw SpecError(spec.plugin_name, "ProxyPort",
                    "is 0; network proxied needs the port inside the sandbox that leads to the "
                    "egress proxy (1 to 65535)");
  }
  if (!spec.egress_dir.empty()) check_clean(spec, "EgressDir", spec.egress_dir);
}

// Every rule's path exists (a Deny path that did not is made by Policy::mount_points before
// the launch) and is symlink-resolved, and no path has two rules.
void check_view(const Spec &spec) {
  std::set<std::string> seen;
  for (size_t i = 0; i < spec.view.size(); ++i) {
    const std::string field = "View[" + std::to_string(i) + "]";
    check_resolved(spec, field, spec.view[i].path);
    if (!seen.insert(spec.view[i].path).second) {
      throw SpecError(spec.plugin_name, field, "\"" + spec.view[i].path + "\" has a rule already");
    }
  }
}

}  // namespace

void check_spec(const Spec &spec) {
  if (!printable_line(spec.plugin_name)) {
    throw SpecError(spec.plugin_name, "PluginName", "contains NUL or newline");
  }
  check_resolved(spec, "BinaryPath", spec.binary_path);
  struct stat st {};
  if (::stat(spec.binary_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      ::access(spec.binary_path.c_str(), X_OK) != 0) {
    throw SpecError(spec.plugin_name, "BinaryPath",
                    "\"" + spec.binary_path + "\" is not an executable regular file");
  }
  check_directory(spec, "SocketDir", spec.socket_dir);
  check_directory(spec, "TmpDir", spec.tmp_dir);
  for (size_t i = 0; i < spec.read_paths.size(); ++i) {
    check_resolved(spec, "ReadPaths[" + std::to_string(i) + "]", spec.read_paths[i]);
  }
  for (size_t i = 0; i < spec.args.size(); ++i) {
    if (spec.args[i].find('\0') != std::string::npos) {
      throw SpecError(spec.plugin_name, "Args[" + std::to_string(i) + "]", "contains NUL");
    }
  }
  check_proxy(spec);
  check_view(spec);
}

}  // namespace sandbox_host
