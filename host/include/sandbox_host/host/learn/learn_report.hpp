// The summary `run --learn` prints when the plugin ended: what its Spec refused, grouped by
// the grant that would give it, and the config lines that would (docs/why-denied.md,
// "Learning what a plugin needs"). As text for people and as JSON for tools.
#pragma once

#include <sandbox_host/host/learn/findings.hpp>
#include <sandbox_host/host/learn/grant_advice.hpp>
#include <sandbox_host/spec.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::learn {

struct ReportContext {
  std::string plugin;   // the name of its [plugins.<name>] table
  std::string backend;  // the mode it ran under
  Network network = Network::none;
  // The read paths the launch had (the config's, then --read's): the suggested key keeps them.
  std::vector<std::string> read_paths;
  bool egress_table = false;              // whether the config has [egress]
  std::vector<std::string> egress_allow;  // its allow list
  std::vector<std::string> egress_allow_addresses;
  // How many items each group lists; the rest are counted.
  std::size_t max_items = 20;
};

struct PathItem {
  std::string path;
  std::string use;                 // look, read, exec, write
  std::vector<std::string> calls;  // the system calls that named it
  std::size_t count = 0;
  std::string note;  // why it is not suggested, or how it was reached
};

// One suggested read grant and the paths the plugin named that it covers.
struct ReadGrant {
  std::string path;
  std::vector<std::string> covers;
};

struct EndpointItem {
  std::string endpoint;  // "10.0.0.1:443"
  std::size_t count = 0;
  std::string name;  // from DNS or /etc/hosts, where known
  std::string note;
};

struct NameItem {
  std::string name;
  std::vector<std::string> sources;  // "dns", "proxy"
  std::vector<std::uint16_t> ports;
  bool allowed = false;  // by the config's [egress] allow as it is
  std::string note;      // why it cannot be an allow entry
};

struct LearnReport {
  std::string plugin, backend, network;
  std::size_t calls = 0, probes = 0;
  std::vector<ReadGrant> read;          // suggested grants
  std::vector<PathItem> not_suggested;  // refused paths no grant is suggested for
  std::vector<PathItem> writes;         // need a write grant
  std::vector<PathItem> unknown;        // the host's user cannot see them itself
  std::vector<EndpointItem> endpoints;  // connects the network refused
  std::vector<NameItem> names;
  // The lines that grant what can be granted; empty when none would.
  std::vector<std::string> plugin_lines;  // under [plugins.<plugin>]
  std::vector<std::string> egress_lines;  // under [egress]
  std::vector<std::string> notes;         // what else to do
  std::size_t max_items = 20;
};

LearnReport make_report(const Findings &findings, const ReportContext &context,
                        const SpecGrants &grants, const GrantAdvice &advice);

// A TOML basic string holding text (valid UTF-8): quotes, backslashes and controls escaped.
std::string toml_string(const std::string &text);
// name as one TOML key: bare where it is letters, digits, '_' and '-' only, else quoted (a
// plugin named after python3.11 is [plugins."python3.11"], not a table python3 holding 11).
std::string toml_key(const std::string &name);

std::string render_text(const LearnReport &report);
std::string render_json(const LearnReport &report);

}  // namespace sandbox_host::learn
