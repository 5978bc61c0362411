#include "commands.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/limits/limit_report.hpp>

#include <cap_driver_choice.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {

struct ProbeOptions {
  std::optional<std::string> config;
  bool json = false;
};

// The memory cap driver of cap-slot and scope (plugins/cap): for whom ("host" when no op
// says, else the op), the driver or nullopt, and why (or why none).
struct CapDriverLine {
  std::string who;
  std::optional<std::string> driver;
  std::string why;
};

// The host's own choice, then that of each enabled cap op by its [ops.<name>] settings,
// as the op module makes it when it loads (it also checks the parent, which this does not).
std::vector<CapDriverLine> cap_driver_lines(const Config &config) {
  const auto host = cap::HostCgroups::of_this_host();
  std::vector<CapDriverLine> lines;
  const auto choose = [&](const std::string &who, const auto &settings_of) {
    try {
      const cap::DriverChoice choice = cap::choose_driver(settings_of(), host);
      lines.push_back({who, std::string(cap::to_string(choice.kind)), choice.why});
    } catch (const std::exception &e) {
      lines.push_back({who, std::nullopt, e.what()});
    }
  };
  choose("host", [] { return cap::DriverSettings{}; });
  for (const std::string op : {"cap-slot", "scope"}) {
    if (std::find(config.ops_enabled.begin(), config.ops_enabled.end(), op) ==
        config.ops_enabled.end()) {
      continue;
    }
    choose(op, [&] {
      cap::DriverSettings settings;
      const auto table = config.op_settings.find(op);
      if (table == config.op_settings.end()) return settings;
      for (const auto &[key, values] : table->second.entries) {
        if (values.size() != 1) continue;
        if (key == "driver") settings.forced = cap::driver_named(values.front());
        if (key == "bus") settings.bus = values.front();
        if (key == "parent" && values.front().starts_with("/")) settings.parent = values.front();
      }
      return settings;
    });
  }
  return lines;
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
  const int landlock_abi = kernel_landlock_abi();
  const char *forced = ::getenv(std::string(kEnvBackend).c_str());
  const auto cap_drivers = cap_driver_lines(host.config());
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
                                             {"file", s.file},
                                             {"version", s.version}});
    }
    out["backends"] = std::move(backends);
    out["landlock_abi"] = landlock_abi;
    boost::json::object cap_driver;
    for (const auto &line : cap_drivers) {
      boost::json::object entry;
      if (line.driver) {
        entry["driver"] = *line.driver;
        entry["why"] = line.why;
      } else {
        entry["driver"] = nullptr;
        entry["error"] = line.why;
      }
      cap_driver[line.who] = std::move(entry);
    }
    out["cap_driver"] = std::move(cap_driver);
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
      if (!s.available && !s.hint.empty())
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
    for (const auto &line : cap_drivers) {
      std::cout << (line.who == "host" ? "cap driver: " : "  " + line.who + ": ")
                << (line.driver ? *line.driver + " (" + line.why + ")" : "none: " + line.why)
                << "\n";
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
