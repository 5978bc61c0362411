#include "commands.hpp"

#include <sandbox_host/host/egress.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/limits/limit_report.hpp>
#include <sandbox_host/host/op_report.hpp>

#include <boost/json.hpp>

#include <iomanip>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {

struct ProbeOptions {
  std::optional<std::string> config;
  bool json = false;
};

// An enabled op as probe shows it: its module, or why it did not load, and what it reports.
struct OpLine {
  std::string name;
  std::shared_ptr<const LoadedModule> module;  // nullptr: not loaded, for failure
  std::string failure;
  OpReport report;
};

std::vector<OpLine> op_lines(const Host &host) {
  std::vector<OpLine> lines;
  for (const std::string &name : host.config().ops_enabled) {
    OpLine line{name, host.operation(name), {}, {}};
    if (line.module) {
      line.report = op_report(*line.module);
    } else {
      line.failure = host.registry().failure(ModuleKind::broker_op, name);
      if (line.failure.empty()) line.failure = "not loaded";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

// The config's egress as probe shows it: where a proxied launch would lead, or why it
// could not.
struct EgressLine {
  std::string implementation;
  std::shared_ptr<const LoadedModule> module;  // nullptr for the built-in proxy
  std::optional<EgressRoute> route;
  std::string error;
};

std::optional<EgressLine> egress_line(const Host &host) {
  if (!host.config().egress) return std::nullopt;
  EgressLine line{host.config().egress->implementation, nullptr, std::nullopt, {}};
  try {
    line.route = host.egress()->route();
  } catch (const std::exception &e) {
    line.error = e.what();
  }
  if (!host.config().egress->builtin()) {
    line.module = host.registry().find(ModuleKind::egress, line.implementation);
  }
  return line;
}

int run_probe(const ProbeOptions &options) {
  Host host(load_config_or_defaults(options.config));
  const auto statuses = host.probe_all();
  std::optional<Availability> chosen;
  std::string error;
  try {
    chosen = host.probe();
  } catch (const ProbeError &e) {
    error = e.what();
  }
  const int landlock_abi = reported_landlock_abi(statuses);
  const char *forced = ::getenv(std::string(kEnvBackend).c_str());
  const auto ops = op_lines(host);
  const auto egress = egress_line(host);
  const CgroupPlacement &cgroups = host.cgroup_placement();
  const LaunchLimits &limits = host.config().limits;
  const auto rows_of = [&](const BackendStatus &s) { return limit_rows(s, limits, cgroups); };

  if (options.json) {
    boost::json::object out;
    out["config"] = host.config().source.empty() ? "built-in defaults" : host.config().source;
    if (forced != nullptr && *forced != '\0') out["forced"] = forced;
    boost::json::array backends;
    for (const auto &s : statuses) {
      backends.push_back(boost::json::object{{"name", s.name},
                                             {"loaded", s.loaded},
                                             {"available", s.available},
                                             {"explicit_only", s.name == kModeOff},
                                             {"reason", s.reason},
                                             {"hint", s.hint},
                                             {"warning", s.warning},
                                             {"landlock_abi", s.landlock_abi},
                                             {"file", s.file},
                                             {"version", s.version}});
    }
    out["backends"] = std::move(backends);
    out["landlock_abi"] = landlock_abi;
    boost::json::array ops_out;
    for (const OpLine &op : ops) {
      boost::json::object entry{{"name", op.name}, {"loaded", op.module != nullptr}};
      if (op.module) {
        entry["file"] = op.module->file().string();
        entry["version"] = op.module->version();
        boost::json::object facts;
        for (const auto &[key, value] : op.report.facts) facts[key] = value;
        entry["report"] = std::move(facts);
        if (!op.report.error.empty()) entry["report_error"] = op.report.error;
      } else {
        entry["error"] = op.failure;
      }
      ops_out.push_back(std::move(entry));
    }
    out["ops"] = std::move(ops_out);
    if (egress) {
      boost::json::object entry{{"implementation", egress->implementation},
                                {"built_in", host.config().egress->builtin()}};
      if (egress->module) {
        entry["file"] = egress->module->file().string();
        entry["version"] = egress->module->version();
      }
      if (egress->route) {
        entry["socket"] = egress->route->socket;
        entry["port"] = egress->route->port;
        entry["directory"] = egress->route->directory;
      } else {
        entry["error"] = egress->error;
      }
      out["egress"] = std::move(entry);
    } else {
      out["egress"] = nullptr;
    }
    boost::json::object limits_out;
    boost::json::object cgroup{
        {"version", cgroups.version() == CgroupPlacement::Version::v2   ? "v2"
                    : cgroups.version() == CgroupPlacement::Version::v1 ? "v1"
                                                                        : "none"},
        {"description", cgroups.description()},
        {"hint", cgroups.hint()}};
    limits_out["cgroup"] = std::move(cgroup);
    boost::json::object per_backend;
    for (const auto &s : statuses) {
      if (!s.available) continue;
      boost::json::array rows;
      for (const LimitRow &row : rows_of(s)) {
        boost::json::array how;
        for (const auto &h : row.how) how.push_back(boost::json::string(h));
        rows.push_back(boost::json::object{{"limit", row.limit},
                                           {"value", row.value},
                                           {"enforced", row.enforced},
                                           {row.enforced ? "by" : "why_not", std::move(how)}});
      }
      per_backend[s.name] = std::move(rows);
    }
    limits_out["backends"] = std::move(per_backend);
    out["limits"] = std::move(limits_out);
    if (chosen) {
      out["chosen"] = chosen->mode;
      out["warning"] = chosen->warning;
    } else {
      out["chosen"] = nullptr;
      out["error"] = error;
    }
    std::cout << boost::json::serialize(out) << "\n";
  } else {
    std::cout << "config: "
              << (host.config().source.empty() ? "built-in defaults" : host.config().source)
              << "\n";
    if (forced != nullptr && *forced != '\0') {
      std::cout << "forced: " << kEnvBackend << "=" << forced << "\n";
    }
    std::cout << "backends:\n";
    for (const auto &s : statuses) {
      std::string note;
      if (s.name == kModeOff && s.available) {
        note = "explicit only: runs unsandboxed, never chosen by probe";
      } else if (!s.available) {
        note = s.reason;
      }
      std::cout << "  " << std::left << std::setw(11) << s.name;
      if (note.empty()) {
        std::cout << (s.available ? "available" : "unavailable") << "\n";
      } else {
        std::cout << std::setw(12) << (s.available ? "available" : "unavailable") << note << "\n";
      }
      // An available backend's hint says what would give it more (a degraded one's).
      if (!s.hint.empty())
        std::cout << std::setw(25) << ""
                  << "hint: " << s.hint << "\n";
      if (!s.warning.empty())
        std::cout << std::setw(25) << ""
                  << "warning: " << s.warning << "\n";
    }
    std::cout << "landlock ABI: " << landlock_abi << "\n";
    if (chosen) {
      std::cout << "chosen: " << chosen->mode << "\n";
      if (!chosen->warning.empty()) std::cout << "warning: " << chosen->warning << "\n";
    } else {
      std::cout << "chosen: none: " << error << "\n";
    }
    if (!ops.empty()) std::cout << "ops:\n";
    for (const OpLine &op : ops) {
      std::cout << "  " << op.name << ": "
                << (op.module ? "loaded (" + op.module->version() + ")"
                              : "not loaded: " + op.failure)
                << "\n";
      for (const auto &[key, value] : op.report.facts) {
        std::cout << "    " << key << ": " << value << "\n";
      }
      if (!op.report.error.empty()) std::cout << "    report failed: " << op.report.error << "\n";
    }
    if (!egress) {
      std::cout << "egress: none (no [egress] table: network proxied is refused)\n";
    } else {
      std::cout << "egress: " << egress->implementation
                << (egress->module ? " (module " + egress->module->version() + ", " +
                                         egress->module->file().string() + ")"
                    : host.config().egress->builtin() ? " (built in)"
                                                      : "")
                << "\n";
      if (egress->route) {
        std::cout << "  a proxied sandbox's 127.0.0.1:" << egress->route->port << " leads to "
                  << egress->route->socket << "\n";
        if (!egress->route->directory.empty()) {
          std::cout << "  egress directory: " << egress->route->directory << "\n";
        }
      } else {
        std::cout << "  unusable: " << egress->error << "\n";
      }
    }
    std::cout << "limits ([limits]; a plugin's own table may change the values):\n"
              << "  cgroup: " << cgroups.description() << "\n";
    if (!cgroups.hint().empty()) std::cout << "          hint: " << cgroups.hint() << "\n";
    for (const auto &s : statuses) {
      if (!s.available) continue;
      std::cout << "  " << s.name << ":\n";
      for (const LimitRow &row : rows_of(s)) {
        std::string how;
        for (const auto &h : row.how) how += (how.empty() ? "" : "; ") + h;
        // Wide enough for the longest name, scratch_files, and for "unlimited".
        std::cout << "    " << std::left << std::setw(14) << row.limit << std::setw(11) << row.value
                  << (row.enforced ? "held: " : "NOT held: ") << how << "\n";
      }
    }
  }
  return chosen ? 0 : 1;
}

}  // namespace

Command add_probe_command(CLI::App &app) {
  auto options = std::make_shared<ProbeOptions>();
  auto *sub = app.add_subcommand("probe", "Show which sandbox backends work on this host");
  sub->add_option("--config", options->config,
                  "Config file (default: " + std::string(kDefaultConfigPath) +
                      " if present, else built-in defaults)");
  sub->add_flag("--json", options->json, "Print JSON instead of text");
  return {sub, [options] { return run_probe(*options); }};
}

}  // namespace sandbox_host::cli
