#include "egress_config.hpp"

#include "egress_parent_config.hpp"
#include "module_name.hpp"
#include "ops_config.hpp"
#include "schema_key.hpp"

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

void read_resolve(const ConfigReader &r, const toml::node &node, const std::string &,
                  const ConfigKeyDoc &, EgressConfig &egress) {
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

// A leaf certificate the proxy issues must not outlive the CA that signs it; checked once
// both keys are read, whichever came first.
void check_leaf_within_ca(const ConfigReader &r, const toml::table &t, const EgressConfig &egress) {
  if (egress.leaf_validity <= egress.ca_validity) return;
  const auto *leaf = t.get("leaf_validity_hours");
  r.fail(leaf != nullptr ? leaf->source() : t.source(), "egress.leaf_validity_hours",
         std::to_string(egress.leaf_validity.count()) +
             " hours is longer than the CA's validity (egress.ca_validity_days = " +
             std::to_string(egress.ca_validity.count()) + ", " +
             std::to_string(std::chrono::hours(egress.ca_validity).count()) +
             " hours); a leaf must not outlive its CA");
}

void read_implementation(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                         const ConfigKeyDoc &, EgressConfig &egress) {
  const std::string allowed =
      "\"" + std::string(kBuiltinEgress) + "\" (the built-in proxy) or an egress module's name";
  egress.implementation = r.string(node, dotted, allowed);
  if (!egress.builtin() && !is_module_name(egress.implementation)) {
    r.fail(node.source(), dotted,
           "\"" + egress.implementation + "\" is not a module name; allowed: " + allowed +
               " (a-z, 0-9 and -)");
  }
}

void read_listen(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, EgressConfig &egress) {
  egress.listen = read_loopback_listen(r, node, dotted, 3128);
}

void read_socket(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, EgressConfig &egress) {
  egress.socket = r.socket_path(node, dotted);
}

void read_allow(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                const ConfigKeyDoc &, EgressConfig &egress) {
  egress.allow = r.non_empty_strings(node, dotted, "host names or *.domain patterns");
  parse_entries<egress::HostAllowList>(r, node, dotted, egress.allow,
                                       &egress::HostAllowList::parse);
}

void read_allow_addresses(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                          const ConfigKeyDoc &, EgressConfig &egress) {
  egress.allow_addresses = r.strings(node, dotted, "IP addresses or CIDRs");
  parse_entries<egress::AddressPolicy>(r, node, dotted, egress.allow_addresses,
                                       &egress::AddressPolicy::parse);
}

// Named hosts only; whether egress.allow lets each through is check_inject's, once both
// keys are read.
void read_inject(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, EgressConfig &egress) {
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
}

void read_token_command(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                        const ConfigKeyDoc &, EgressConfig &egress) {
  egress.token_command = r.strings(node, dotted, "an absolute path and its arguments");
  const std::string *program =
      egress.token_command.empty() ? nullptr : &egress.token_command.front();
  if (program != nullptr && (program->empty() || program->front() != '/')) {
    r.fail(node.source(), dotted + "[0]",
           "\"" + egress.token_command.front() + "\" is not an absolute path");
  }
}

void read_renew_backoff(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                        const ConfigKeyDoc &doc, EgressConfig &egress) {
  egress.renew_backoff.clear();
  for (auto wait : r.integers(node, dotted, doc.bounds->first, doc.bounds->second)) {
    egress.renew_backoff.emplace_back(wait);
  }
}

void read_upstream_ca_bundle(const ConfigReader &r, const toml::node &node,
                             const std::string &dotted, const ConfigKeyDoc &,
                             EgressConfig &egress) {
  egress.upstream_ca_bundle = r.optional_path(node, dotted, "the system's roots");
}

void read_runtime_dir(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                      const ConfigKeyDoc &, EgressConfig &egress) {
  egress.runtime_dir = r.optional_path(node, dotted, "$XDG_RUNTIME_DIR");
}

void read_parent_table(const ConfigReader &r, const toml::node &node, const std::string &,
                       const ConfigKeyDoc &, EgressConfig &egress) {
  read_parent(r, node, egress.parent.emplace());
}

constexpr SchemaKey<EgressConfig> kEgressKeys[] = {
    {{"implementation", "string", "\"proxy\"", std::nullopt,
      "\"proxy\" (the built-in proxy) or an egress module's name"},
     &read_implementation},
    {{"listen", "string", "\"127.0.0.1:3128\"", std::nullopt,
      "loopback address and port of the TCP listener, or \"\" for none"},
     &read_listen},
    {{"socket", "absolute path", "", std::nullopt,
      "the unix socket listener; by default egress.sock in broker.state_dir"},
     &read_socket},
    {{"allow", "array of strings", "[]", std::nullopt,
      "hosts commands reach: names or `*.domain` patterns, with an optional `:port`"},
     &read_allow},
    {{"allow_addresses", "array of strings", "[]", std::nullopt,
      "IP addresses or CIDRs allowed although special"},
     &read_allow_addresses},
    {{"inject", "array of strings", "[]", std::nullopt,
      "hosts whose port-443 requests get the token"},
     &read_inject},
    {{"resolve", "table", "{}", std::nullopt, "host name to IP addresses, instead of DNS"},
     &read_resolve},
    {{"token_command", "array of strings", "[]", std::nullopt,
      "an absolute path and its arguments that print the token"},
     &read_token_command},
    integer_key<&EgressConfig::renew_every>("renew_every_s", "300", 10, 86400,
                                            "seconds between reads of the token"),
    integer_key<&EgressConfig::renew_bound>(
        "renew_bound_s", "30", 1, 3600, "seconds a read may take while the proxy holds a token"),
    integer_key<&EgressConfig::renew_cold_bound>("renew_cold_bound_s", "120", 1, 3600,
                                                 "seconds a read may take while it holds none"),
    {{"renew_backoff_s", "array of integers", "[5, 15, 60]", std::pair{1, 86400},
      "seconds to wait before each retry of a failed read"},
     &read_renew_backoff},
    {{"upstream_ca_bundle", "string", "\"\"", std::nullopt,
      "a PEM file of the roots upstream certificates are checked against, or \"\" for the "
      "system's"},
     &read_upstream_ca_bundle},
    {{"runtime_dir", "string", "\"\"", std::nullopt,
      "where the egress directory goes, or \"\" for `$XDG_RUNTIME_DIR`"},
     &read_runtime_dir},
    boolean_key<&EgressConfig::same_user>("same_user", "true",
                                          "refuse connections of other local users"),
    boolean_key<&EgressConfig::log_connections>("log_connections", "false",
                                                "one line on stderr per allowed connection"),
    integer_key<&EgressConfig::connect_timeout>("connect_timeout_s", "10", 1, 600,
                                                "seconds to connect upstream"),
    integer_key<&EgressConfig::head_timeout>("head_timeout_s", "10", 1, 600,
                                             "seconds to receive a request's head"),
    integer_key<&EgressConfig::idle_timeout>("idle_timeout_s", "300", 1, 86400,
                                             "seconds of silence before a connection is closed"),
    integer_key<&EgressConfig::max_tunnels>("max_tunnels", "20000", 1, 1000000,
                                            "tunnels open at once"),
    integer_key<&EgressConfig::ca_validity>("ca_validity_days", "30", 1, 3650,
                                            "days the proxy's CA is valid"),
    integer_key<&EgressConfig::leaf_validity>(
        "leaf_validity_hours", "24", 1, 8760,
        "hours each leaf certificate is valid, within the CA's"),
    {{"parent", "table", "", std::nullopt, "the parent proxy to dial through (`[egress.parent]`)"},
     &read_parent_table},
};

// implementation comes first, whatever its place in the file: it decides whether the
// other keys are the built-in proxy's.
void read_chosen_implementation(const ConfigReader &r, const toml::table &t, EgressConfig &egress) {
  if (const toml::node *implementation = t.get("implementation")) {
    read_implementation(r, *implementation, "egress.implementation", kEgressKeys[0].doc, egress);
  }
}

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

}  // namespace

void read_egress(const ConfigReader &r, const toml::table &t, EgressConfig &egress) {
  read_chosen_implementation(r, t, egress);
  if (!egress.builtin()) return read_egress_module(r, t, egress);
  // Every key by its schema entry; implementation's is read again, to the same value.
  read_keys(r, t, "egress", kEgressKeys, egress);
  check_inject(r, t, egress);
  check_leaf_within_ca(r, t, egress);
}

ConfigTableDoc egress_schema() {
  return {"egress", key_docs(kEgressKeys)};
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
