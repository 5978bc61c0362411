#include "proxied_network.hpp"

#include "mount_tree.hpp"

#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/egress_client.hpp>

#include <sys/stat.h>

#include <cerrno>

namespace sandbox_host::namespaces {
namespace {

bool is_directory(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> proxy_environment(const Spec &spec) {
  EnvPairs env = proxy_url_env(static_cast<int>(spec.proxy_port));
  // Without an egress directory, no variable points at a file that is not there.
  if (!spec.egress_dir.empty() && is_directory(spec.egress_dir)) {
    for (auto &entry : egress_client_env(spec.egress_dir)) env.push_back(std::move(entry));
  }
  return env;
}

void require_proxy_socket(const Spec &spec) {
  struct stat st {};
  if (::stat(host_view(spec.proxy_socket).c_str(), &st) != 0) {
    if (errno == ENOENT) {
      throw backends::SetupError(
          "proxy", "the egress proxy's socket " + spec.proxy_socket +
                       " does not exist; start the egress proxy (sandbox-host egress or "
                       "serve), or set [egress] socket to the one it listens on");
    }
    backends::throw_errno("proxy", "the egress proxy's socket " + spec.proxy_socket);
  }
  if (!S_ISSOCK(st.st_mode)) {
    throw backends::SetupError(
        "proxy", "the egress proxy's socket " + spec.proxy_socket + " is not a unix socket");
  }
}

}  // namespace sandbox_host::namespaces
