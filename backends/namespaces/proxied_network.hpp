// Network proxied, around the relay itself (proxy_forwarder.hpp): what the plugin's clients
// are told, and the proxy's socket checked before the sandbox counts on it.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sandbox_host::namespaces {

// The variables that send the plugin's clients to the relay on 127.0.0.1:<proxy_port>
// (HTTP and SOCKS5 on one port), with nothing exempt, and, where the egress directory
// exists, to its CA bundle. Built from the Spec alone, never from the host's environment.
std::vector<std::pair<std::string, std::string>> proxy_environment(const Spec &spec);

// Between leave_host_root() and finish_mount_tree(): the proxy's socket is there on the
// host. Throws SetupError naming it and what to do otherwise.
void require_proxy_socket(const Spec &spec);

}  // namespace sandbox_host::namespaces
