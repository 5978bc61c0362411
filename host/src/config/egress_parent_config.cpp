#include "egress_parent_config.hpp"

#include "schema_key.hpp"

#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/egress/destination/ip_address.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <string_view>

namespace sandbox_host {
namespace {

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

void read_url(const ConfigReader &r, const toml::node &node, const std::string &,
              const ConfigKeyDoc &, ParentProxyConfig &parent) {
  read_parent_url(r, node, parent);
}

void read_credential_file(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                          const ConfigKeyDoc &, ParentProxyConfig &parent) {
  parent.credential_file = r.optional_path(node, dotted, "none");
}

void read_credential_command(const ConfigReader &r, const toml::node &node,
                             const std::string &dotted, const ConfigKeyDoc &,
                             ParentProxyConfig &parent) {
  parent.credential_command = r.strings(node, dotted, "an absolute path and its arguments");
  if (!parent.credential_command.empty() && !parent.credential_command.front().starts_with('/')) {
    r.fail(node.source(), dotted + "[0]",
           "\"" + parent.credential_command.front() + "\" is not an absolute path");
  }
}

constexpr SchemaKey<ParentProxyConfig> kParentKeys[] = {
    {{"url", "string", "", std::nullopt, "required: `\"http://<host>:<port>\"`"}, &read_url},
    {{"credential_file", "string", "\"\"", std::nullopt,
      "a file of user:password on one line, or \"\" for none"},
     &read_credential_file},
    {{"credential_command", "array of strings", "[]", std::nullopt,
      "an absolute path and its arguments that print user:password"},
     &read_credential_command},
};

}  // namespace

void read_parent(const ConfigReader &r, const toml::node &node, ParentProxyConfig &parent) {
  const toml::table &t = r.table(node, "egress.parent");
  read_keys(r, t, "egress.parent", kParentKeys, parent);
  if (parent.host.empty()) {
    r.fail(t.source(), "egress.parent.url",
           "is missing; the parent proxy is \"http://<host>:<port>\"");
  }
  if (!parent.credential_file.empty() && !parent.credential_command.empty()) {
    r.fail(t.get("credential_command")->source(), "egress.parent.credential_command",
           "and egress.parent.credential_file are both set; the credential comes from one");
  }
}

ConfigTableDoc egress_parent_schema() {
  return {"egress.parent", key_docs(kParentKeys)};
}

}  // namespace sandbox_host
