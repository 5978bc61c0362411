#include "proxied_network.hpp"

#include "mount_tree.hpp"

#include <sandbox_host/backends/setup_error.hpp>

#include <sys/stat.h>

#include <cerrno>

namespace sandbox_host::namespaces {
namespace {

// The file of the egress directory that holds the system's roots and the proxy's CA
// (seed 000's EgressBundle).
constexpr const char *kEgressBundle = "bundle.pem";

bool is_directory(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> proxy_environment(const Spec &spec) {
  const std::string port = std::to_string(spec.proxy_port);
  const std::string http = "http://127.0.0.1:" + port;
  const std::string socks = "socks5h://127.0.0.1:" + port;
  std::vector<std::pair<std::string, std::string>> env{
      {"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"http_proxy", http}, {"https_proxy", http},
      {"ALL_PROXY", socks}, {"all_proxy", socks},  {"NO_PROXY", ""},     {"no_proxy", ""},
  };
  if (!spec.egress_dir.empty() && is_directory(spec.egress_dir)) {
    const std::string bundle = spec.egress_dir + "/" + kEgressBundle;
    for (const char *name : {"SSL_CERT_FILE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
                             "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"}) {
      env.emplace_back(name, bundle);
    }
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
