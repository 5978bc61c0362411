// The lab kubeconfig's rewrite: a kind lab's API server listens on the host's
// loopback, which every HTTP client exempts from the proxy environment, and which a
// proxied sandbox's empty network namespace does not have. So the lab's kubeconfig names
// the sandbox's SOCKS5 proxy on each loopback cluster (proxy-url), and kubectl's tunnel
// ends at the egress proxy, held to its allow list like any other connection.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace sandbox_host::kubeconfig {

struct ProxiedKubeconfig {
  std::string document;  // the kubeconfig to write
  bool changed = false;  // whether any cluster's proxy-url was set or replaced
};

// Sets proxy-url to proxy on every cluster of the kubeconfig raw whose server is on
// loopback: 127.0.0.0/8 in any spelling the egress proxy's IP parser takes (127.1,
// 0x7f.0.0.1, 2130706433, ...), ::1, ::ffff:127.x.y.z, and localhost; the server with or
// without a scheme, as kubectl takes it. Other clusters, and everything else of the
// document, keep their keys, key order and values. Unchanged, the document is raw itself,
// byte for byte, so a second pass over its own output changes nothing; changed, it is
// written again by yaml-cpp, which drops comments and a scalar's block style (its value
// stays). Throws std::invalid_argument naming what is wrong: YAML that does not parse (line
// and column), not one mapping, clusters that are not a list, and a cluster without a
// server, or whose server is not a string or has no host (naming the cluster).
ProxiedKubeconfig proxy_kubeconfig(std::string_view raw, std::string_view proxy);

// The value of a variable of the calling process's environment, "" when it is not set.
using Getenv = std::function<std::string(const std::string &name)>;

// The SOCKS5 proxy URL of the proxied sandbox the calling process runs in, as kubeconfig's
// proxy-url takes it: "socks5://127.0.0.1:<port>", from ALL_PROXY (or all_proxy), which the
// proxied network sets to "socks5h://127.0.0.1:<port>". kubectl accepts only http, https
// and socks5 as a proxy-url's scheme, and its SOCKS5 client sends the server's host name to
// the proxy unresolved, so socks5:// in a kubeconfig already means what socks5h:// means
// elsewhere. Throws std::invalid_argument naming the variable and what is wrong: neither is
// set, another scheme, no port, or a proxy that is not on loopback (no proxied sandbox's).
std::string socks_proxy(const Getenv &getenv);

}  // namespace sandbox_host::kubeconfig
