// The learn report as text (stderr, after the plugin's own output) and as JSON. Every path,
// endpoint and name came from the plugin: text shows them through escape_text, so that none
// can move the cursor or start a line of its own.
#include <sandbox_host/host/learn/learn_report.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <boost/json.hpp>

#include <sstream>

namespace sandbox_host::learn {
namespace {

std::string joined(const std::vector<std::string> &items, const char *separator = ", ") {
  std::string out;
  for (const auto &item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::string times(std::size_t count) {
  return count > 1 ? " x" + std::to_string(count) : std::string();
}

void path_lines(std::ostringstream &out, const std::vector<PathItem> &items, std::size_t max) {
  for (std::size_t i = 0; i < items.size() && i < max; ++i) {
    const PathItem &item = items[i];
    out << "  " << escape_text(item.path) << " (" << item.use << ": " << joined(item.calls)
        << times(item.count) << ")";
    if (!item.note.empty()) out << ": " << escape_text(item.note);
    out << "\n";
  }
  if (items.size() > max) out << "  ... and " << items.size() - max << " more\n";
}

boost::json::array path_array(const std::vector<PathItem> &items, std::size_t max) {
  boost::json::array out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) {
    const PathItem &item = items[i];
    boost::json::array calls;
    for (const auto &call : item.calls) calls.emplace_back(call);
    boost::json::object entry{{"path", escape_text(item.path)},
                              {"use", item.use},
                              {"calls", std::move(calls)},
                              {"count", item.count}};
    if (!item.note.empty()) entry["note"] = escape_text(item.note);
    out.push_back(std::move(entry));
  }
  return out;
}

boost::json::object group(boost::json::array items, std::size_t total) {
  const std::size_t shown = items.size();
  return {{"items", std::move(items)}, {"more", total - shown}};
}

boost::json::array strings(const std::vector<std::string> &items) {
  boost::json::array out;
  for (const auto &item : items) out.emplace_back(item);
  return out;
}

}  // namespace

std::string render_text(const LearnReport &report) {
  std::ostringstream out;
  const std::size_t max = report.max_items;
  out << "sandbox-host run --learn: plugin \"" << escape_text(report.plugin) << "\" under "
      << report.backend << ", network " << report.network << ": " << report.calls
      << " calls traced; " << report.probes
      << " named paths missing on the host too (probes, not listed)\n";
  const bool nothing = report.read.empty() && report.not_suggested.empty() &&
                       report.writes.empty() && report.unknown.empty() &&
                       report.endpoints.empty() && report.names.empty();
  if (nothing) {
    out << "Nothing refused: the Spec grants everything the plugin tried.\n";
    return out.str();
  }
  if (!report.read.empty()) {
    out << "\nNot granted, needs a read grant:\n";
    for (std::size_t i = 0; i < report.read.size() && i < max; ++i) {
      const ReadGrant &grant = report.read[i];
      out << "  " << escape_text(grant.path);
      if (grant.covers.size() != 1 || grant.covers.front() != grant.path) {
        out << " (for " << grant.covers.size() << ": ";
        std::vector<std::string> shown;
        for (std::size_t j = 0; j < grant.covers.size() && j < 5; ++j) {
          shown.push_back(escape_text(grant.covers[j]));
        }
        out << joined(shown) << (grant.covers.size() > 5 ? ", ..." : "") << ")";
      }
      out << "\n";
    }
    if (report.read.size() > max) out << "  ... and " << report.read.size() - max << " more\n";
  }
  if (!report.writes.empty()) {
    out << "\nWrites outside TmpDir and SocketDir: needs a write grant, which plugins never get: "
           "use TmpDir (HOME and TMPDIR point there):\n";
    path_lines(out, report.writes, max);
  }
  if (!report.not_suggested.empty()) {
    out << "\nNot granted, and no grant suggested:\n";
    path_lines(out, report.not_suggested, max);
  }
  if (!report.unknown.empty()) {
    out << "\nNot granted, and hidden from sandbox-host's own user too:\n";
    path_lines(out, report.unknown, max);
  }
  if (!report.endpoints.empty()) {
    out << "\nRefused by network " << report.network << ":\n";
    for (std::size_t i = 0; i < report.endpoints.size() && i < max; ++i) {
      const EndpointItem &item = report.endpoints[i];
      out << "  " << escape_text(item.endpoint) << times(item.count);
      if (!item.name.empty()) out << " (" << escape_text(item.name) << ")";
      if (!item.note.empty()) out << ": " << item.note;
      out << "\n";
    }
    if (report.endpoints.size() > max) {
      out << "  ... and " << report.endpoints.size() - max << " more\n";
    }
  }
  if (!report.names.empty()) {
    out << "\nHost names asked for:\n";
    for (std::size_t i = 0; i < report.names.size() && i < max; ++i) {
      const NameItem &item = report.names[i];
      out << "  " << escape_text(item.name) << " (" << joined(item.sources);
      for (const auto port : item.ports) out << ", port " << port;
      out << ")" << (item.allowed ? ": allowed by [egress] allow already" : "");
      if (!item.note.empty()) out << ": " << escape_text(item.note);
      out << "\n";
    }
    if (report.names.size() > max) out << "  ... and " << report.names.size() - max << " more\n";
  }
  if (!report.plugin_lines.empty() || !report.egress_lines.empty()) {
    out << "\nConfig lines that grant this (each key replaces the one the config has):\n";
    if (!report.plugin_lines.empty()) {
      out << "[plugins." << toml_key(report.plugin) << "]\n";
      for (const auto &line : report.plugin_lines) out << line << "\n";
    }
    if (!report.egress_lines.empty()) {
      if (!report.plugin_lines.empty()) out << "\n";
      out << "[egress]\n";
      for (const auto &line : report.egress_lines) out << line << "\n";
    }
  }
  for (const auto &note : report.notes) out << "\n" << note << "\n";
  return out.str();
}

std::string render_json(const LearnReport &report) {
  const std::size_t max = report.max_items;
  boost::json::array read;
  for (std::size_t i = 0; i < report.read.size() && i < max; ++i) {
    boost::json::array covers;
    for (const auto &path : report.read[i].covers) covers.emplace_back(escape_text(path));
    read.push_back(
        boost::json::object{{"path", report.read[i].path}, {"covers", std::move(covers)}});
  }
  boost::json::array endpoints;
  for (std::size_t i = 0; i < report.endpoints.size() && i < max; ++i) {
    const EndpointItem &item = report.endpoints[i];
    boost::json::object entry{{"endpoint", escape_text(item.endpoint)}, {"count", item.count}};
    if (!item.name.empty()) entry["name"] = escape_text(item.name);
    if (!item.note.empty()) entry["note"] = item.note;
    endpoints.push_back(std::move(entry));
  }
  boost::json::array names;
  for (std::size_t i = 0; i < report.names.size() && i < max; ++i) {
    const NameItem &item = report.names[i];
    boost::json::array ports;
    for (const auto port : item.ports) ports.emplace_back(port);
    boost::json::object entry{{"name", escape_text(item.name)},
                              {"sources", strings(item.sources)},
                              {"ports", std::move(ports)},
                              {"allowed", item.allowed}};
    if (!item.note.empty()) entry["note"] = escape_text(item.note);
    names.push_back(std::move(entry));
  }
  boost::json::object config;
  if (!report.plugin_lines.empty()) {
    config["plugin"] =
        boost::json::object{{"table", escape_text("plugins." + toml_key(report.plugin))},
                            {"lines", strings(report.plugin_lines)}};
  }
  if (!report.egress_lines.empty()) {
    config["egress"] =
        boost::json::object{{"table", "egress"}, {"lines", strings(report.egress_lines)}};
  }
  boost::json::object out{
      {"plugin", escape_text(report.plugin)},
      {"backend", report.backend},
      {"network", report.network},
      {"calls", report.calls},
      {"probes", report.probes},
      {"read", group(std::move(read), report.read.size())},
      {"writes", group(path_array(report.writes, max), report.writes.size())},
      {"not_suggested", group(path_array(report.not_suggested, max), report.not_suggested.size())},
      {"unknown", group(path_array(report.unknown, max), report.unknown.size())},
      {"endpoints", group(std::move(endpoints), report.endpoints.size())},
      {"names", group(std::move(names), report.names.size())},
      {"config", std::move(config)},
      {"notes", strings(report.notes)},
  };
  return boost::json::serialize(out) + "\n";
}

}  // namespace sandbox_host::learn
