// What a client held to the egress proxy gets
// (docs/design.md#egress-directory-and-credential-headers): the files of the egress directory and
// the variables that point clients at them and at the proxy. One place, used by the host for a
// policy's commands and by a backend for a proxied plugin, so the two cannot drift.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host {

// The proxy's CA certificate.
inline constexpr std::string_view kEgressCa = "ca.pem";
// The CA followed by the system's roots, for clients that take one file of roots (OpenSSL,
// curl, git, Go).
inline constexpr std::string_view kEgressBundle = "bundle.pem";
// gh's configuration directory: a login whose token is a fixed word, since the proxy
// replaces the header gh sends.
inline constexpr std::string_view kEgressGh = "gh";
// git's gpg.program in the sandbox: runs `sandbox-host sandbox gpg`, which has the broker
// sign out of the sandbox's reach.
inline constexpr std::string_view kEgressGpg = "gpg";

// Where a proxied launch's network leads, as an egress implementation decides it
// (sh_egress_route): the unix socket on the host that the sandbox's 127.0.0.1:<port> is
// relayed to, and the egress directory, bound read-only, whose files the variables below
// point at.
struct EgressRoute {
  std::string socket;     // absolute
  std::string directory;  // absolute; empty for none
  std::uint16_t port = 3128;
};

// The egress directory below a runtime directory, a path clients outside this repository
// know (docs/design.md#egress-directory-and-credential-headers):
// runtime_dir/clawpatrol-sandbox/egress; empty for an empty runtime_dir.
inline std::string egress_dir_below(const std::string &runtime_dir) {
  if (runtime_dir.empty()) return {};
  return runtime_dir + (runtime_dir.ends_with('/') ? "" : "/") + "clawpatrol-sandbox/egress";
}

using EnvPairs = std::vector<std::pair<std::string, std::string>>;

// The variables that make clients trust the proxy and use the egress directory's files:
// the bundle for OpenSSL-, curl-, git- and Python-based clients, the CA alone for Node
// (which adds it to its own roots), gh's login, and git's settings through its
// environment, above every config file: GitHub's ssh remotes over https (the proxy's one
// way to GitHub), no credential helper handing out a token the proxy sets anyway, commits
// signed out of the sandbox's reach. None for an empty egress_dir.
inline EnvPairs egress_client_env(const std::string &egress_dir) {
  if (egress_dir.empty()) return {};
  auto in_dir = [&](std::string_view name) { return egress_dir + "/" + std::string(name); };
  const std::string bundle = in_dir(kEgressBundle);
  EnvPairs env{
      {"SSL_CERT_FILE", bundle},
      {"CURL_CA_BUNDLE", bundle},
      {"GIT_SSL_CAINFO", bundle},
      {"REQUESTS_CA_BUNDLE", bundle},
      {"NODE_EXTRA_CA_CERTS", in_dir(kEgressCa)},
      {"GH_CONFIG_DIR", in_dir(kEgressGh)},
  };
  const std::pair<std::string, std::string> git[] = {
      {"url.https://github.com/.insteadOf", "git@github.com:"},
      {"url.https://github.com/.insteadOf", "ssh://git@github.com/"},
      {"credential.https://github.com.helper", ""},
      {"gpg.program", in_dir(kEgressGpg)},
  };
  for (std::size_t i = 0; i < std::size(git); ++i) {
    env.emplace_back("GIT_CONFIG_KEY_" + std::to_string(i), git[i].first);
    env.emplace_back("GIT_CONFIG_VALUE_" + std::to_string(i), git[i].second);
  }
  env.emplace_back("GIT_CONFIG_COUNT", std::to_string(std::size(git)));
  return env;
}

// The proxy variables for a proxy at 127.0.0.1:port inside the client's network: HTTP
// CONNECT and forward proxying for HTTP(S), SOCKS5 with names resolved by the proxy for
// the rest, and no host exempted.
inline EnvPairs proxy_url_env(int port) {
  const std::string http = "http://127.0.0.1:" + std::to_string(port);
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(port);
  return {{"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"http_proxy", http}, {"https_proxy", http},
          {"ALL_PROXY", socks}, {"all_proxy", socks},  {"NO_PROXY", ""},     {"no_proxy", ""}};
}

}  // namespace sandbox_host
