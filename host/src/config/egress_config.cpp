#include "egress_config.hpp"

#include <sandbox_host/egress/destination/destination.hpp>
#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/egress/destination/ip_address.hpp>
#include <sandbox_host/host/spec_check.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace sandbox_host {
namespace {

constexpr const char *kEgressKeys =
    "implementation, listen, socket, allow, allow_addresses, inject, resolve, token_command, "
    "renew_every_s, renew_bound_s, renew_cold_bound_s, renew_backoff_s, upstream_ca_bundle, "
    "runtime_dir, same_user, log_connections, connect_timeout_s, head_timeout_s, "
    "idle_timeout_s, max_tunnels, ca_validity_days, leaf_validity_hours, parent";
constexpr const char *kParentKeys = "url, credential_file, credential_command";

// Runs parse over the list at node; its EntryError is named by the entry's index, at the
// entry's own line.
template <typename Parsed, typename Parse>
Parsed parse_entries(const ConfigReader &r, const toml::node &node, const std::string &key,
                     const std::vector<std::string> &entries, Parse parse) {
  try {
    return parse(entries);
  } catch (const egress::EntryError &e) {
    r.fail(ConfigReader::element_source(node, e.index()),
           key + "[" + std::to_string(e.index()) + "]",
           "\"" + entries[e.index()] + "\": " + e.problem());
  }
}

void read_resolve(const ConfigReader &r, const toml::node &node, EgressConfig &egress) {
  std::set<std::string> hosts;
  for (auto &&[name_key, addresses] : r.table(node, "egress.resolve")) {
    const std::string name(name_key.str());
    const std::string dotted = "egress.resolve." + key_part(name);
    if (name.empty()) r.fail(name_key.source(), dotted, "is not a host name");
    std::string host;
    try {
      host = egress::normalize_host_name(name);
    } catch (const std::invalid_argument &e) {
      r.fail(name_key.source(), dotted, e.what());
    }
    if (!hosts.insert(host).second) {
      r.fail(name_key.source(), dotted,
             "names " + host + ", which an earlier key of egress.resolve names too");
    }
    auto values = r.strings(addresses, dotted, "IP addresses");
    if (values.empty()) {
      r.fail(addresses.source(), dotted, "names no address; allowed: one or more IP addresses");
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!egress::parse_ip_literal(values[i])) {
        r.fail(ConfigReader::element_source(addresses, i), dotted + "[" + std::to_string(i) + "]",
               "\"" + values[i] + "\" is not an IP address (like \"127.0.0.1\" or \"::1\")");
      }
    }
    egress.resolve[name] = std::move(values);
  }
}

// "http://proxy.example:3128", "http://10.0.0.1:3128/", "http://[fd00::1]:8080".
void read_parent_url(const ConfigReader &r, const toml::node &node, ParentProxyConfig &parent) {
  const std::string key = "egress.parent.url";
  const std::string url = r.string(node, key, "\"http://<host>:<port>\"");
  auto bad = [&](const std::string &why) { r.fail(node.source(), key, "\"" + url + "\" " + why); };
  constexpr std::string_view kScheme = "http://";
  if (url.starts_with("https://")) {
    bad("is https; the parent is spoken to in plain HTTP (each CONNECT tunnel carries its "
        "connection's own TLS end to end): write http://");
  }
  if (!url.starts_with(kScheme)) bad("is not an http:// URL; allowed: \"http://<host>:<port>\"");
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.find('@') != std::string_view::npos) {
    bad("holds credentials, which would show wherever the config is shown; put them in "
        "egress.parent.credential_file or credential_command");
  }
  if (rest.find_first_of("/?#") != std::string_view::npos) {
    bad("has a path, query or fragment; a proxy URL is \"http://<host>:<port>\"");
  }
  std::string_view host = rest;
  std::string_view port_text;
  if (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) bad("has a \"[\" without \"]\"");
    host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':')
      port_text = rest.substr(close + 2);
    else if (close + 1 != rest.size())
      bad("has something other than \":<port>\" after \"]\"");
    const auto literal = egress::parse_ip_literal(host);
    if (!literal || literal->family != AF_INET6) bad("has no IPv6 address between \"[\" and \"]\"");
  } else if (const std::size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
  }
  if (port_text.empty()) {
    bad("names no port; write the parent's port, as in \"http://proxy.example:3128\"");
  }
  const long port = std::all_of(port_text.begin(), port_text.end(),
                                [](char c) { return c >= '0' && c <= '9'; }) &&
                            port_text.size() <= 5
                        ? std::stol(std::string(port_text))
                        : -1;
  if (port < 1 || port > 65535)
    bad("has port \"" + std::string(port_text) + "\"; allowed: 1 to 65535");
  try {
    parent.host = egress::normalize_host_name(host);
  } catch (const std::invalid_argument &e) {
    bad(std::string("has no host the proxy can dial: ") + e.what());
  }
  parent.port = static_cast<std::uint16_t>(port);
}

void read_parent(const ConfigReader &r, const toml::node &node, ParentProxyConfig &parent) {
  const toml::table &t = r.table(node, "egress.parent");
  for (auto &&[key, value] : t) {
    const std::string name(key.str());
    const std::string dotted = "egress.parent." + name;
    if (name == "url") {
      read_parent_url(r, value, parent);
    } else if (name == "credential_file") {
      parent.credential_file = r.optional_path(value, dotted, "none");
    } else if (name == "credential_command") {
      parent.credential_command = r.strings(value, dotted, "an absolute path and its arguments");
      if (!parent.credential_command.empty() &&
          !parent.credential_command.front().starts_with('/')) {
        r.fail(value.source(), dotted + "[0]",
               "\"" + parent.credential_command.front() + "\" is not an absolute path");
      }
    } else {
      r.unknown(key, dotted, kParentKeys);
    }
  }
  if (parent.host.empty()) {
    r.fail(t.source(), "egress.parent.url",
           "is missing; the parent proxy is \"http://<host>:<port>\"");
  }
  if (!parent.credential_file.empty() && !parent.credential_command.empty()) {
    r.fail(t.get("credential_command")->source(), "egress.parent.credential_command",
           "and egress.parent.credential_file are both set; the credential comes from one");
  }
}

// Each inject host is a name the proxy terminates TLS for on port 443, so the allow list
// must let it through there; checked once both keys are read, whichever came first.
void check_inject(const ConfigReader &r, const toml::table &t, const EgressConfig &egress) {
  const toml::node *inject = t.get("inject");
  if (inject == nullptr) return;
  const egress::HostAllowList allow = egress::HostAllowList::parse(egress.allow);
  for (std::size_t i = 0; i < egress.inject.size(); ++i) {
    const std::string &host = egress.inject[i];
    const egress::AllowDecision decision = allow.decide(host, 443);
    if (!decision.allowed) {
      r.fail(ConfigReader::element_source(*inject, i), "egress.inject[" + std::to_string(i) + "]",
             "\"" + host + "\" is not allowed on port 443 by egress.allow (" + decision.rule +
                 "); a host that gets the token must also be allowed");
    }
  }
}

}  // namespace

// implementation = "<module>": the module's own table, and no key of the built-in proxy,
// which would configure nothing.
void read_egress_module(const ConfigReader &r, const toml::table &t, EgressConfig &egress) {
  const std::string &module = egress.implementation;
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    if (name == "implementation") continue;
    const std::string dotted = "egress." + key_part(name);
    if (name == module) {
      egress.module_settings = read_module_entries(r, r.table(node, dotted), dotted);
      continue;
    }
    r.fail(key.source(), dotted,
           "is not read with implementation = \"" + module + "\": the egress module " + module +
               " takes its settings from [egress." + module +
               "], and this key is the built-in proxy's (implementation = \"" +
               std::string(kBuiltinEgress) + "\")");
  }
}

void read_egress(const ConfigReader &r, const toml::table &t, EgressConfig &egress) {
  if (const toml::node *implementation = t.get("implementation")) {
    const std::string allowed =
        "\"" + std::string(kBuiltinEgress) + "\" (the built-in proxy) or an egress module's name";
    egress.implementation = r.string(*implementation, "egress.implementation", allowed);
    if (!egress.builtin() && !is_module_name(egress.implementation)) {
      r.fail(implementation->source(), "egress.implementation",
             "\"" + egress.implementation + "\" is not a module name; allowed: " + allowed +
                 " (a-z, 0-9 and -)");
    }
    if (!egress.builtin()) return read_egress_module(r, t, egress);
  }
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    const std::string dotted = "egress." + name;
    if (name == "implementation") continue;
    auto seconds = [&, &node = node](std::int64_t min, std::int64_t max) {
      return std::chrono::seconds(r.integer(node, dotted, min, max));
    };
    if (name == "listen") {
      egress.listen = read_loopback_listen(r, node, dotted, 3128);
    } else if (name == "socket") {
      egress.socket = r.socket_path(node, dotted);
    } else if (name == "allow") {
      egress.allow = r.non_empty_strings(node, dotted, "host names or *.domain patterns");
      parse_entries<egress::HostAllowList>(r, node, dotted, egress.allow,
                                           &egress::HostAllowList::parse);
    } else if (name == "allow_addresses") {
      egress.allow_addresses = r.strings(node, dotted, "IP addresses or CIDRs");
      parse_entries<egress::AddressPolicy>(r, node, dotted, egress.allow_addresses,
                                           &egress::AddressPolicy::parse);
    } else if (name == "inject") {
      egress.inject = r.non_empty_strings(node, dotted, "host names");
      for (std::size_t i = 0; i < egress.inject.size(); ++i) {
        const std::string &host = egress.inject[i];
        const std::string indexed = dotted + "[" + std::to_string(i) + "]";
        if (host.find('*') != std::string::npos) {
          r.fail(ConfigReader::element_source(node, i), indexed,
                 "\"" + host + "\" is a pattern; the token goes to named hosts only");
        }
        try {
          egress::normalize_host_name(host);
        } catch (const std::invalid_argument &e) {
          r.fail(ConfigReader::element_source(node, i), indexed, e.what());
        }
      }
    } else if (name == "resolve") {
      read_resolve(r, node, egress);
    } else if (name == "token_command") {
      egress.token_command = r.strings(node, dotted, "an absolute path and its arguments");
      const std::string *program =
          egress.token_command.empty() ? nullptr : &egress.token_command.front();
      if (program != nullptr && (program->empty() || program->front() != '/')) {
        r.fail(node.source(), dotted + "[0]",
               "\"" + egress.token_command.front() + "\" is not an absolute path");
      }
    } else if (name == "renew_every_s") {
      egress.renew_every = seconds(10, 86400);
    } else if (name == "renew_bound_s") {
      egress.renew_bound = seconds(1, 3600);
    } else if (name == "renew_cold_bound_s") {
      egress.renew_cold_bound = seconds(1, 3600);
    } else if (name == "renew_backoff_s") {
      egress.renew_backoff.clear();
      for (auto wait : r.integers(node, dotted, 1, 86400)) {
        egress.renew_backoff.emplace_back(wait);
      }
    } else if (name == "upstream_ca_bundle") {
      egress.upstream_ca_bundle = r.optional_path(node, dotted, "the system's roots");
    } else if (name == "runtime_dir") {
      egress.runtime_dir = r.optional_path(node, dotted, "$XDG_RUNTIME_DIR");
    } else if (name == "same_user") {
      egress.same_user = r.boolean(node, dotted);
    } else if (name == "log_connections") {
      egress.log_connections = r.boolean(node, dotted);
    } else if (name == "connect_timeout_s") {
      egress.connect_timeout = seconds(1, 600);
    } else if (name == "head_timeout_s") {
      egress.head_timeout = seconds(1, 600);
    } else if (name == "idle_timeout_s") {
      egress.idle_timeout = seconds(1, 86400);
    } else if (name == "max_tunnels") {
      egress.max_tunnels = static_cast<std::size_t>(r.integer(node, dotted, 1, 1000000));
    } else if (name == "ca_validity_days") {
      egress.ca_validity = std::chrono::days(r.integer(node, dotted, 1, 3650));
    } else if (name == "leaf_validity_hours") {
      egress.leaf_validity = std::chrono::hours(r.integer(node, dotted, 1, 8760));
    } else if (name == "parent") {
      read_parent(r, node, egress.parent.emplace());
    } else {
      r.unknown(key, dotted, kEgressKeys);
    }
  }
  check_inject(r, t, egress);
  if (egress.leaf_validity > egress.ca_validity) {
    const auto *leaf = t.get("leaf_validity_hours");
    r.fail(leaf != nullptr ? leaf->source() : t.source(), "egress.leaf_validity_hours",
           std::to_string(egress.leaf_validity.count()) +
               " hours is longer than the CA's validity (egress.ca_validity_days = " +
               std::to_string(egress.ca_validity.count()) + ", " +
               std::to_string(std::chrono::hours(egress.ca_validity).count()) +
               " hours); a leaf must not outlive its CA");
  }
}

void default_egress_socket(const ConfigReader &r, const toml::table &root, Config &config) {
  if (!config.egress || !config.egress->builtin() || !config.egress->socket.empty()) return;
  config.egress->socket = config.broker.state_dir / "egress.sock";
  if (config.egress->socket.string().size() > kMaxSocketPath) {
    r.fail(root["egress"].node()->source(), "egress.socket",
           "the default \"" + config.egress->socket.string() +
               "\" (under broker.state_dir) is longer than a unix socket address holds (" +
               std::to_string(kMaxSocketPath) + " bytes); set egress.socket");
  }
}

std::optional<egress::LoopbackEndpoint> read_loopback_listen(const ConfigReader &r,
                                                             const toml::node &node,
                                                             const std::string &key,
                                                             std::uint16_t example_port) {
  const std::string text = r.string(node, key, "\"<loopback address>:<port>\", or \"\" for none");
  if (text.empty()) return std::nullopt;
  auto endpoint = egress::LoopbackEndpoint::parse(text);
  if (!endpoint) {
    const std::string port = std::to_string(example_port);
    r.fail(node.source(), key,
           "\"" + text + "\" is not a loopback address and port; allowed: \"127.0.0.1:" + port +
               "\" (any address of 127.0.0.0/8), \"[::1]:" + port +
               "\", port 0 for any, or \"\" for none");
  }
  return endpoint;
}

}  // namespace sandbox_host
