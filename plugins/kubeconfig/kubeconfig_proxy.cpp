// The kubeconfig rewrite and the sandbox's SOCKS5 proxy (kubeconfig_proxy.hpp). Loopback is
// judged by the SDK's IP literal parser, the one the egress proxy reads hosts with, so that
// an address the proxy would take as 127.0.0.1 is one this rewrite takes as loopback too.
#include "kubeconfig_proxy.hpp"

#include <sandbox_host/command_op.hpp>
#include <sandbox_host/ip_literal.hpp>
#include <sandbox_host/request_pattern.hpp>

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host::kubeconfig {
namespace {

bool is_loopback_address(const ip::IpAddress &address) {
  static const ip::IpAddress loopback4 = *ip::parse_ip_literal("127.0.0.0");
  static const ip::IpAddress loopback6 = *ip::parse_ip_literal("::1");
  if (address == loopback6) return true;
  const ip::IpAddress judged = ip::unmapped_ipv4(address).value_or(address);
  return judged.family == AF_INET && ip::in_block(judged, loopback4, 8);
}

// localhost in any case, with one trailing dot as in a name, or a loopback IP literal.
bool is_loopback_host(std::string host) {
  for (char &c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (host == "localhost" || host == "localhost.") return true;
  const auto address = ip::parse_ip_literal(host);
  return address && is_loopback_address(*address);
}

struct Authority {
  std::string host;  // as written; an IPv6 literal keeps its brackets
  std::string port;  // "" without one
  bool has_userinfo = false;
};

// The host and port of url, which may lack a scheme ("127.0.0.1:6443", as kubectl takes a
// server without one). Throws std::invalid_argument saying what is missing or wrong.
Authority authority_of(std::string_view url) {
  std::string_view rest = url;
  if (const auto scheme = rest.find("://"); scheme != std::string_view::npos) {
    rest.remove_prefix(scheme + 3);
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  Authority authority;
  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    authority.has_userinfo = true;
    rest.remove_prefix(at + 1);
  }
  std::string_view host = rest;
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) throw std::invalid_argument("has an unclosed [");
    host = rest.substr(0, close + 1);
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty() && after.front() != ':') {
      throw std::invalid_argument("has " + in_quotes(after) + " after its IPv6 address");
    }
    if (!after.empty()) authority.port = after.substr(1);
  } else if (const auto colon = rest.find(':');
             colon != std::string_view::npos &&
             rest.find(':', colon + 1) == std::string_view::npos) {
    host = rest.substr(0, colon);
    authority.port = rest.substr(colon + 1);
  }
  if (host.empty()) throw std::invalid_argument("has no host");
  authority.host = host;
  return authority;
}

// A plain scalar that YAML (as kubectl's sigs.k8s.io/yaml reads it, YAML 1.1) takes for
// null, a boolean or a number, which kubectl refuses where it wants a string.
bool reads_as_non_string(const YAML::Node &scalar) {
  if (scalar.Tag() != "?") return false;
  static const RequestPattern non_string(
      "|~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|"
      "off|Off|OFF|[-+]?(0b[01_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(\\.[0-9_]*)?([eE][-+]?[0-9]+)?|"
      "\\.[0-9_]+([eE][-+]?[0-9]+)?|\\.(inf|Inf|INF))|\\.(nan|NaN|NAN)");
  return non_string.matches(scalar.Scalar());
}

const char *type_name(const YAML::Node &node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Undefined:
      break;
  }
  return "undefined";
}

// How a message names the cluster at index of clusters: by its name, or by its place.
std::string cluster_label(const YAML::Node &entry, std::size_t index) {
  const YAML::Node name = entry.IsMap() ? entry["name"] : YAML::Node();
  if (name.IsDefined() && name.IsScalar()) return "cluster " + in_quotes(name.Scalar());
  return "cluster #" + std::to_string(index + 1) + " (without a name)";
}

// Whether the cluster entry's server is on loopback. Throws std::invalid_argument naming
// the cluster for a server kubectl could not dial.
bool on_loopback(const YAML::Node &entry, std::size_t index) {
  const std::string label = cluster_label(entry, index);
  if (!entry.IsMap()) {
    throw std::invalid_argument(label + " is " + type_name(entry) + ", not a mapping");
  }
  const YAML::Node cluster = entry["cluster"];
  if (!cluster.IsDefined() || !cluster.IsMap()) {
    throw std::invalid_argument(label + " has no cluster mapping (its cluster is " +
                                (cluster.IsDefined() ? type_name(cluster) : "missing") + ")");
  }
  const YAML::Node server = cluster["server"];
  if (!server.IsDefined() || server.IsNull()) throw std::invalid_argument(label + " has no server");
  if (!server.IsScalar() || reads_as_non_string(server)) {
    const std::string what = server.IsScalar()
                                 ? in_quotes(server.Scalar()) + ", which YAML reads as no string"
                                 : std::string(type_name(server));
    throw std::invalid_argument(label + ": its server is " + what + ", not a string");
  }
  try {
    return is_loopback_host(authority_of(server.Scalar()).host);
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(label + ": its server " + in_quotes(server.Scalar()) + " " +
                                e.what());
  }
}

// The node as it was read: mappings in their key order, and each scalar quoted when it was
// quoted (a quoted "true" stays a string) and with its explicit tag when it had one.
void emit(YAML::Emitter &out, const YAML::Node &node) {
  const std::string &tag = node.Tag();
  if (!tag.empty() && tag != "?" && tag != "!") out << YAML::VerbatimTag(tag);
  switch (node.Type()) {
    case YAML::NodeType::Map:
      if (node.size() == 0) out << YAML::Flow;  // "{}" on the key's line, as kind writes it
      out << YAML::BeginMap;
      for (const auto &entry : node) {
        out << YAML::Key;
        emit(out, entry.first);
        out << YAML::Value;
        emit(out, entry.second);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      if (node.size() == 0) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto &item : node) emit(out, item);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      if (tag == "!") out << YAML::DoubleQuoted;
      out << node.Scalar();
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      out << YAML::Null;
      break;
  }
}

std::string emitted(const YAML::Node &document) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, document);
  if (!out.good()) {
    throw std::runtime_error("cannot write the kubeconfig again: " + out.GetLastError());
  }
  return std::string(out.c_str()) + "\n";
}

std::vector<YAML::Node> documents_of(std::string_view raw) {
  try {
    return YAML::LoadAll(std::string(raw));
  } catch (const YAML::Exception &e) {
    throw std::invalid_argument("the kubeconfig is not YAML: " + e.msg + " (line " +
                                std::to_string(e.mark.line + 1) + ", column " +
                                std::to_string(e.mark.column + 1) + ")");
  }
}

std::optional<std::uint16_t> port_number(std::string_view text) {
  unsigned number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || number == 0 ||
      number > 65535) {
    return std::nullopt;
  }
  return static_cast<std::uint16_t>(number);
}

// "socks5://<loopback host>:<port>" for the SOCKS5 URL value of variable name.
std::string proxy_url_from(const std::string &name, const std::string &value) {
  // A value with a user may hold a password, which is nothing to repeat in a refusal.
  const bool has_user = value.find('@') != std::string::npos;
  const std::string variable = has_user ? name : name + " (" + in_quotes(value) + ")";
  const auto scheme_end = value.find("://");
  std::string scheme = value.substr(0, scheme_end);
  for (char &c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme_end == std::string::npos || (scheme != "socks5h" && scheme != "socks5")) {
    throw std::invalid_argument(variable +
                                " is no SOCKS5 proxy URL (socks5h://host:port or socks5://)");
  }
  const std::string_view after = std::string_view(value).substr(scheme_end + 3);
  if (const auto path = after.find_first_of("/?#");
      path != std::string_view::npos && after.substr(path) != "/") {
    throw std::invalid_argument(variable + " has a path; a SOCKS5 proxy URL is host:port");
  }
  Authority authority;
  try {
    authority = authority_of(value);
  } catch (const std::invalid_argument &e) {
    throw std::invalid_argument(variable + " " + e.what());
  }
  if (authority.has_userinfo) {
    throw std::invalid_argument(name + " names a user; the sandbox's proxy takes none");
  }
  if (!port_number(authority.port)) {
    throw std::invalid_argument(variable + " has no port from 1 to 65535");
  }
  if (!is_loopback_host(authority.host)) {
    throw std::invalid_argument(variable + " is not on loopback, so it is no proxied sandbox's " +
                                "SOCKS5 proxy (that is 127.0.0.1:<port> in the sandbox)");
  }
  const auto address = ip::parse_ip_literal(authority.host);
  std::string host = authority.host;
  if (address) {
    host = address->family == AF_INET6 ? "[" + address->to_string() + "]" : address->to_string();
  }
  return "socks5://" + host + ":" + authority.port;
}

}  // namespace

ProxiedKubeconfig proxy_kubeconfig(std::string_view raw, std::string_view proxy) {
  if (proxy.empty()) throw std::invalid_argument("no proxy URL to set on the loopback clusters");
  const std::vector<YAML::Node> documents = documents_of(raw);
  if (documents.size() != 1) {
    throw std::invalid_argument("the kubeconfig holds " + std::to_string(documents.size()) +
                                " YAML documents; a kubeconfig is one");
  }
  YAML::Node document = documents.front();
  if (!document.IsMap()) {
    throw std::invalid_argument("the kubeconfig is " + std::string(type_name(document)) +
                                ", not a mapping of clusters, contexts and users");
  }
  const YAML::Node clusters = std::as_const(document)["clusters"];
  if (!clusters.IsDefined() || clusters.IsNull()) return {std::string(raw), false};
  if (!clusters.IsSequence()) {
    throw std::invalid_argument("the kubeconfig's clusters are " +
                                std::string(type_name(clusters)) + ", not a list");
  }
  bool changed = false;
  for (std::size_t i = 0; i < clusters.size(); ++i) {
    const YAML::Node entry = clusters[i];
    if (!on_loopback(entry, i)) continue;
    YAML::Node cluster = entry["cluster"];
    const YAML::Node current = std::as_const(cluster)["proxy-url"];
    if (current.IsDefined() && current.IsScalar() && current.Scalar() == proxy) continue;
    cluster["proxy-url"] = std::string(proxy);
    changed = true;
  }
  if (!changed) return {std::string(raw), false};
  return {emitted(document), true};
}

std::string socks_proxy(const Getenv &getenv) {
  for (const std::string name : {"ALL_PROXY", "all_proxy"}) {
    const std::string value = getenv(name);
    if (!value.empty()) return proxy_url_from(name, value);
  }
  throw std::invalid_argument(
      "no SOCKS5 proxy: neither ALL_PROXY nor all_proxy is set, as a sandbox of network "
      "\"proxied\" sets them (socks5h://127.0.0.1:<port>)");
}

}  // namespace sandbox_host::kubeconfig
