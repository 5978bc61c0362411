#include <sandbox_host/host/learn/learn_report.hpp>

#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/egress/destination/ip_address.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

namespace sandbox_host::learn {
namespace {

namespace fs = std::filesystem;

std::string real_path(const std::string &path) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  return real ? std::string(real.get()) : path;
}

PathItem item_of(const std::string &path, const PathFinding &finding, std::string note = {}) {
  return PathItem{path, std::string(to_string(finding.use)),
                  std::vector<std::string>(finding.calls.begin(), finding.calls.end()),
                  finding.count, std::move(note)};
}

std::string toml_list(const std::vector<std::string> &items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += ", ";
    out += toml_string(items[i]);
  }
  return out + "]";
}

// The names /etc/hosts gives each address, the first one per address.
std::map<std::string, std::string> hosts_file_names() {
  std::map<std::string, std::string> names;
  std::ifstream hosts("/etc/hosts");
  std::string line;
  while (std::getline(hosts, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string address, name;
    if (!(words >> address >> name)) continue;
    try {
      const auto ip = egress::parse_ip_literal(address);
      if (ip) names.emplace(ip->to_string(), name);
    } catch (...) {
    }
  }
  return names;
}

// The read grants: each refused path's real path (what `run` binds), then a directory for
// several files of it where the advice allows, then nothing that another grant covers.
void suggest_reads(const Findings &findings, const ReportContext &context, const SpecGrants &grants,
                   const GrantAdvice &advice, LearnReport &report) {
  std::map<std::string, std::vector<std::string>> wanted;  // real path -> paths named
  for (const auto &[path, finding] : findings.reads) {
    // A directory on the way to what the plugin needs (python stats and lists each one up
    // to its module directory): granting what lies below it is what works, not it whole.
    const bool on_the_way =
        grants.on_the_way(path) ||
        std::any_of(findings.reads.begin(), findings.reads.end(), [&](const auto &other) {
          return other.first != path && covers(path, other.first);
        });
    if (on_the_way) continue;
    if (auto why = advice.refusal(path)) {
      report.not_suggested.push_back(item_of(path, finding, *why));
      continue;
    }
    const std::string real = real_path(path);
    if (real != path) {
      if (auto why = advice.refusal(real)) {
        report.not_suggested.push_back(
            item_of(path, finding, "a symlink to " + real + ": " + *why));
        continue;
      }
      if (grants.grants(real, finding.use)) {
        report.not_suggested.push_back(item_of(
            path, finding,
            "a symlink to " + real +
                ", which the Spec grants; the namespaces backend shows a granted path at its "
                "real path only: have the plugin name " +
                real));
        continue;
      }
    }
    wanted[real].push_back(path);
  }
  // Several files of one directory: the directory, where it may stand for them.
  std::map<std::string, std::vector<std::string>> by_parent;
  for (const auto &[real, named] : wanted) {
    by_parent[fs::path(real).parent_path().string()].push_back(real);
  }
  std::map<std::string, std::vector<std::string>> chosen;
  for (const auto &[parent, reals] : by_parent) {
    if (reals.size() >= GrantAdvice::kFilesForDirectory && advice.may_cover(parent)) {
      auto &covered = chosen[parent];
      for (const auto &real : reals) {
        covered.insert(covered.end(), wanted[real].begin(), wanted[real].end());
      }
    } else {
      for (const auto &real : reals) chosen[real] = wanted[real];
    }
  }
  std::vector<std::string> line = context.read_paths;
  for (const auto &[path, covered] : chosen) {
    const bool within = std::any_of(chosen.begin(), chosen.end(), [&](const auto &other) {
      return other.first != path && covers(other.first, path);
    });
    if (within) {
      // Its paths go to the grant that covers it.
      for (auto &[other, more] : chosen) {
        if (other != path && covers(other, path)) {
          more.insert(more.end(), covered.begin(), covered.end());
          break;
        }
      }
      continue;
    }
    line.push_back(path);
  }
  for (const auto &path : line) {
    if (std::find(context.read_paths.begin(), context.read_paths.end(), path) !=
        context.read_paths.end()) {
      continue;
    }
    auto covered = chosen[path];
    std::sort(covered.begin(), covered.end());
    covered.erase(std::unique(covered.begin(), covered.end()), covered.end());
    report.read.push_back({path, std::move(covered)});
  }
  if (!report.read.empty()) {
    line.erase(std::unique(line.begin(), line.end()), line.end());
    report.plugin_lines.push_back("read = " + toml_list(line));
  }
}

std::string allow_entry(const std::string &host, std::uint16_t port) {
  const bool literal_v6 = host.find(':') != std::string::npos;
  if (port == 0 || port == 80 || port == 443) return host;
  return (literal_v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

void suggest_network(const Findings &findings, const ReportContext &context, LearnReport &report) {
  std::optional<egress::HostAllowList> allow;
  try {
    allow = egress::HostAllowList::parse(context.egress_allow);
  } catch (...) {
  }
  auto allowed = [&](const std::string &host, std::uint16_t port) {
    return allow && allow->decide(host, port).allowed;
  };
  std::vector<std::string> new_allow, new_addresses;
  auto add_allow = [&](const std::string &entry) {
    if (std::find(context.egress_allow.begin(), context.egress_allow.end(), entry) ==
            context.egress_allow.end() &&
        std::find(new_allow.begin(), new_allow.end(), entry) == new_allow.end()) {
      new_allow.push_back(entry);
    }
  };
  bool needs_out = false;
  std::string resolver;
  const auto hosts = hosts_file_names();
  for (const auto &[endpoint, count] : findings.endpoints) {
    EndpointItem item{endpoint.describe(), count, {}, {}};
    if (!endpoint.internet()) {
      item.note =
          "a unix socket outside SocketDir: a plugin reaches the sockets in its SocketDir "
          "only; have the service listen there";
      report.endpoints.push_back(std::move(item));
      continue;
    }
    if (const auto name = hosts.find(endpoint.address); name != hosts.end()) {
      item.name = name->second;
    }
    if (endpoint.port == 53) {
      item.note =
          "a DNS resolver: under network " + report.network + " the query never left the sandbox";
      resolver = endpoint.describe();
      needs_out = true;
      report.endpoints.push_back(std::move(item));
      continue;
    }
    if (context.network == Network::proxied) {
      item.note =
          "a direct connection, past the proxy: under network proxied only the proxy at "
          "127.0.0.1 is reachable (the plugin's HTTPS_PROXY and ALL_PROXY name it)";
    } else if (endpoint.loopback() && context.backend == "namespaces") {
      item.note = "the sandbox's loopback is its own, not the host's";
    }
    needs_out = true;
    const std::string host = item.name.empty() ? endpoint.address : item.name;
    if (!allowed(host, endpoint.port)) add_allow(allow_entry(host, endpoint.port));
    // The proxy refuses loopback, private and other special addresses, a name that leads
    // to one included, unless allow_addresses lists it.
    try {
      const auto ip = egress::parse_ip_literal(endpoint.address);
      const auto &listed = context.egress_allow_addresses;
      if (ip && egress::special_range(*ip) &&
          std::find(listed.begin(), listed.end(), endpoint.address) == listed.end() &&
          std::find(new_addresses.begin(), new_addresses.end(), endpoint.address) ==
              new_addresses.end()) {
        new_addresses.push_back(endpoint.address);
      }
    } catch (...) {
    }
    if (item.name.empty()) item.note += item.note.empty() ? "name unknown" : "; name unknown";
    report.endpoints.push_back(std::move(item));
  }
  for (const auto &[raw, finding] : findings.names) {
    NameItem item{raw,
                  {finding.sources.begin(), finding.sources.end()},
                  {finding.ports.begin(), finding.ports.end()},
                  false,
                  {}};
    std::string name;
    try {
      name = egress::normalize_host_name(raw);
    } catch (const std::exception &e) {
      item.note = e.what();
      report.names.push_back(std::move(item));
      continue;
    }
    std::vector<std::uint16_t> ports = item.ports;
    if (ports.empty()) ports.push_back(443);
    item.allowed = std::all_of(ports.begin(), ports.end(),
                               [&](std::uint16_t port) { return allowed(name, port); });
    if (!item.allowed) {
      needs_out = true;
      for (const auto port : item.ports.empty() ? std::vector<std::uint16_t>{0} : item.ports) {
        if (!allowed(name, port == 0 ? 443 : port)) add_allow(allow_entry(name, port));
      }
    }
    report.names.push_back(std::move(item));
  }
  if (!needs_out) return;
  if (context.network != Network::proxied) report.plugin_lines.push_back("network = \"proxied\"");
  if (!new_allow.empty()) {
    std::vector<std::string> all = context.egress_allow;
    all.insert(all.end(), new_allow.begin(), new_allow.end());
    report.egress_lines.push_back("allow = " + toml_list(all));
  }
  if (!new_addresses.empty()) {
    std::vector<std::string> all = context.egress_allow_addresses;
    all.insert(all.end(), new_addresses.begin(), new_addresses.end());
    report.egress_lines.push_back("allow_addresses = " + toml_list(all));
  }
  if (!resolver.empty() && findings.names.empty()) {
    report.notes.push_back(
        "The plugin asked the resolver at " + resolver +
        " for names that stayed unknown: the query never left. Apply the lines above and run "
        "--learn again (network proxied): the names it then asks the proxy for are listed, "
        "with the allow entries they need.");
  }
  if (!context.egress_table) {
    report.notes.push_back(
        "The config has no [egress] table: add one (docs/egress.md), and run the proxy "
        "(sandbox-host serve, or sandbox-host egress) for network proxied.");
  }
  if (context.backend != "namespaces") {
    report.notes.push_back("Network proxied needs the namespaces backend; " + context.backend +
                           " refuses it. Its only wider network is \"outbound\", the host's "
                           "whole network.");
  }
}

}  // namespace

std::string toml_string(const std::string &text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string toml_key(const std::string &name) {
  const bool bare = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return bare ? name : toml_string(name);
}

LearnReport make_report(const Findings &findings, const ReportContext &context,
                        const SpecGrants &grants, const GrantAdvice &advice) {
  LearnReport report;
  report.plugin = context.plugin;
  report.backend = context.backend;
  report.network = std::string(to_string(context.network));
  report.calls = findings.calls;
  report.probes = findings.probes;
  report.max_items = context.max_items;
  suggest_reads(findings, context, grants, advice, report);
  for (const auto &[path, finding] : findings.writes) {
    report.writes.push_back(item_of(path, finding));
  }
  for (const auto &[path, finding] : findings.unknown) {
    report.unknown.push_back(item_of(
        path, finding, "sandbox-host's own user cannot reach it either, so no grant would help"));
  }
  suggest_network(findings, context, report);
  return report;
}

}  // namespace sandbox_host::learn
