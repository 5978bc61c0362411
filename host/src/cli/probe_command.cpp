#include "commands.hpp"
#include "line_wrap.hpp"

#include <sandbox_host/host/egress.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/landlock_audit.hpp>
#include <sandbox_host/host/limits/limit_report.hpp>
#include <sandbox_host/host/op_report.hpp>

#include <sandbox_host/coverage_gaps.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace sandbox_host::cli {
namespace {

struct ProbeOptions {
  std::optional<std::string> config;
  bool json = false;
  bool verbose = false;
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

// Why probe chose what it chose, in a few words: forced, or the first of the priority that
// works, with the reason and hint of each one before it that does not (what would give more).
struct Choice {
  std::string why;
  std::vector<const BackendStatus *> passed_over;
};

Choice choice_of(const Host &host, const std::vector<BackendStatus> &statuses,
                 const std::optional<Availability> &chosen, const char *forced) {
  Choice choice;
  const auto &priority = host.config().backend_priority;
  if (forced != nullptr && *forced != '\0') {
    choice.why = std::string("forced: ") + std::string(kEnvBackend) + "=" + forced +
                 " (a forced backend never falls through)";
    return choice;
  }
  if (!chosen) return choice;
  for (const auto &name : priority) {
    if (name == chosen->mode) break;
    for (const auto &s : statuses) {
      if (s.name == name && !s.available) choice.passed_over.push_back(&s);
    }
  }
  const std::string order = "backends.priority (" + boost::algorithm::join(priority, ", ") + ")";
  choice.why = choice.passed_over.empty() ? "first of " + order + " that works here"
                                          : "first of " + order + " that works here; before it:";
  return choice;
}

// A backend's gaps, one per line: what each lets a plugin do, and what closes it. A close
// shared by a run of three or more gaps is said once, under them, rather than on each line.
void print_gaps(const Coverage &coverage, const std::string &indent) {
  const auto &gaps = coverage.gaps;
  for (std::size_t i = 0; i < gaps.size();) {
    std::size_t end = i + 1;
    while (end < gaps.size() && gaps[end].close == gaps[i].close) ++end;
    if (end - i >= 3 && !gaps[i].close.empty()) {
      for (std::size_t k = i; k < end; ++k) {
        std::cout << wrapped(gaps[k].what, indent + "- ", indent + "    ");
      }
      std::cout << wrapped(
          gaps[i].close,
          indent + "  close (the " + std::to_string(end - i) + " above): ", indent + "    ");
    } else {
      for (std::size_t k = i; k < end; ++k) {
        // The close on the gap's own line where both fit, else on the line below it.
        const std::string line = indent + "- " + gaps[k].what +
                                 (gaps[k].close.empty() ? "" : " — close: " + gaps[k].close);
        if (line.size() <= kTextWidth) {
          std::cout << line << "\n";
        } else {
          std::cout << wrapped(gaps[k].what, indent + "- ", indent + "    ");
          if (!gaps[k].close.empty()) {
            std::cout << wrapped(gaps[k].close, indent + "    close: ", indent + "      ");
          }
        }
      }
    }
    i = end;
  }
}

// One line per backend: its state, and why not or what it leaves out, in a few words.
void print_backend_rows(const std::vector<BackendStatus> &statuses,
                        const std::vector<const BackendStatus *> &said_above) {
  for (const auto &s : statuses) {
    std::ostringstream head;
    head << "  " << std::left << std::setw(11) << s.name << std::setw(12)
         << (s.available ? "available" : "unavailable");
    std::string note;
    if (s.name == kModeOff && s.available) {
      note = "explicit only: runs unsandboxed, never chosen by probe";
    } else if (std::find(said_above.begin(), said_above.end(), &s) != said_above.end()) {
      note = "(why: above)";
    } else if (!s.available) {
      note = s.reason;
    } else if (const Coverage coverage = parse_coverage(s.warning); !coverage.gaps.empty()) {
      note = (coverage.heading.empty() ? std::string("degraded") : coverage.heading) + ": " +
             std::to_string(coverage.gaps.size()) + (coverage.gaps.size() == 1 ? " gap" : " gaps") +
             " (--verbose lists them)";
    }
    if (note.empty()) {
      std::string line = head.str();
      std::cout << line.substr(0, line.find_last_not_of(' ') + 1) << "\n";
    } else {
      std::cout << wrapped(note, head.str(), std::string(25, ' '));
    }
  }
}

void print_summary(const Host &host, const std::vector<BackendStatus> &statuses,
                   const std::optional<Availability> &chosen, const std::string &error,
                   const char *forced, const std::vector<LimitRow> &chosen_limits) {
  const Choice choice = choice_of(host, statuses, chosen, forced);
  if (!chosen) {
    std::cout << wrapped(error, "chosen: none: ", "  ");
    if (!choice.why.empty()) std::cout << wrapped(choice.why, "why: ", "  ");
  } else {
    std::cout << "chosen: " << chosen->mode << "\n";
    std::cout << wrapped(choice.why, "why: ", "  ");
    for (const BackendStatus *s : choice.passed_over) {
      std::cout << wrapped(s->reason, "  " + s->name + ": ", "    ");
      if (!s->hint.empty()) std::cout << wrapped(s->hint, "    hint: ", "      ");
    }
    const Coverage coverage = parse_coverage(chosen->warning);
    if (coverage.gaps.empty()) {
      std::cout << "not covered: nothing its probe names (docs/security-model.md has what no "
                   "backend covers)\n";
    } else {
      std::cout << wrapped(coverage.heading.empty() ? std::string("not covered:")
                                                    : "not covered (" + coverage.heading + "):",
                           "", "  ");
      print_gaps(coverage, "  ");
    }
    std::vector<std::string> not_held;
    for (const LimitRow &row : chosen_limits) {
      // A bound the config leaves off ("unlimited") is no bound the backend fails to hold.
      if (!row.enforced && row.value != "unlimited") not_held.push_back(row.limit);
    }
    if (!not_held.empty()) {
      std::cout << wrapped(boost::algorithm::join(not_held, ", ") + " (--verbose says why)",
                           "limits not held: ", "  ");
    }
  }
  std::cout << "backends:\n";
  print_backend_rows(statuses, choice.passed_over);
  std::cout << "config: "
            << (host.config().source.empty() ? "built-in defaults" : host.config().source) << "\n";
}

// The limits of one backend, a row per bound; a reason the row above gave is not repeated.
void print_limit_rows(const std::vector<LimitRow> &rows) {
  std::string previous;
  for (const LimitRow &row : rows) {
    std::string how;
    for (const auto &h : row.how) how += (how.empty() ? "" : "; ") + h;
    const std::string said = std::string(row.enforced ? "held: " : "NOT held: ") + how;
    std::ostringstream head;
    // Wide enough for the longest name, scratch_files, and for "unlimited".
    head << "    " << std::left << std::setw(14) << row.limit << std::setw(11) << row.value;
    std::cout << wrapped(
        said == previous ? std::string(row.enforced ? "held: " : "NOT held: ") + "as above" : said,
        head.str(), std::string(31, ' '));
    previous = said;
  }
}

// What probe found, once, for either output: each backend's status, the one chosen (or
// why none), the Landlock audit, ops, egress and where launches' cgroups go.
struct Findings {
  const Host &host;
  std::vector<BackendStatus> statuses;
  std::optional<Availability> chosen;
  std::string error;  // why none was chosen
  int landlock_abi = 0;
  LandlockAudit audit;
  const char *forced = nullptr;  // CLAWPATROL_SANDBOX_BACKEND, as set
  std::vector<OpLine> ops;
  std::optional<EgressLine> egress;
  const CgroupPlacement &cgroups;

  bool is_forced() const { return forced != nullptr && *forced != '\0'; }
  std::string config_source() const {
    return host.config().source.empty() ? "built-in defaults" : host.config().source;
  }
  std::vector<LimitRow> rows_of(const BackendStatus &s) const {
    return limit_rows(s, host.config().limits, cgroups);
  }
};

Findings find_out(Host &host) {
  auto statuses = host.probe_all();
  std::optional<Availability> chosen;
  std::string error;
  try {
    chosen = host.probe();
  } catch (const ProbeError &e) {
    error = e.what();
  }
  const int landlock_abi = reported_landlock_abi(statuses);
  LandlockAudit audit = landlock_audit(landlock_abi, kernel_audit_state());
  const char *forced = ::getenv(std::string(kEnvBackend).c_str());
  auto ops = op_lines(host);
  auto egress = egress_line(host);
  return {host,
          std::move(statuses),
          std::move(chosen),
          std::move(error),
          landlock_abi,
          std::move(audit),
          forced,
          std::move(ops),
          std::move(egress),
          host.cgroup_placement()};
}

boost::json::array gaps_json(const std::string &warning) {
  boost::json::array gaps;
  for (const CoverageGap &gap : parse_coverage(warning).gaps) {
    gaps.push_back(boost::json::object{{"what", gap.what}, {"close", gap.close}});
  }
  return gaps;
}

boost::json::array backends_json(const Findings &found) {
  boost::json::array backends;
  for (const auto &s : found.statuses) {
    backends.push_back(boost::json::object{{"name", s.name},
                                           {"loaded", s.loaded},
                                           {"available", s.available},
                                           {"explicit_only", s.name == kModeOff},
                                           {"reason", s.reason},
                                           {"hint", s.hint},
                                           {"warning", s.warning},
                                           {"gaps", gaps_json(s.warning)},
                                           {"landlock_abi", s.landlock_abi},
                                           {"file", s.file},
                                           {"version", s.version}});
  }
  return backends;
}

boost::json::array ops_json(const std::vector<OpLine> &ops) {
  boost::json::array out;
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
    out.push_back(std::move(entry));
  }
  return out;
}

boost::json::value egress_json(const Findings &found) {
  const auto &egress = found.egress;
  if (!egress) return nullptr;
  boost::json::object entry{{"implementation", egress->implementation},
                            {"built_in", found.host.config().egress->builtin()}};
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
  return entry;
}

boost::json::object limits_json(const Findings &found) {
  const CgroupPlacement &cgroups = found.cgroups;
  boost::json::object limits_out;
  boost::json::object cgroup{
      {"version", cgroups.version() == CgroupPlacement::Version::v2   ? "v2"
                  : cgroups.version() == CgroupPlacement::Version::v1 ? "v1"
                                                                      : "none"},
      {"description", cgroups.description()},
      {"hint", cgroups.hint()}};
  limits_out["cgroup"] = std::move(cgroup);
  boost::json::object per_backend;
  for (const auto &s : found.statuses) {
    if (!s.available) continue;
    boost::json::array rows;
    for (const LimitRow &row : found.rows_of(s)) {
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
  return limits_out;
}

// The chosen backend, its gaps and why, or the error that left none.
void add_choice_json(boost::json::object &out, const Findings &found) {
  if (!found.chosen) {
    out["chosen"] = nullptr;
    out["error"] = found.error;
    out["gaps"] = boost::json::array{};
    return;
  }
  const Choice choice = choice_of(found.host, found.statuses, found.chosen, found.forced);
  out["chosen"] = found.chosen->mode;
  out["warning"] = found.chosen->warning;
  out["gaps"] = gaps_json(found.chosen->warning);
  boost::json::array passed_over;
  for (const BackendStatus *s : choice.passed_over) {
    passed_over.push_back(boost::json::string(s->name));
  }
  out["why"] = boost::json::object{{"text", choice.why}, {"passed_over", std::move(passed_over)}};
}

boost::json::object probe_json(const Findings &found) {
  boost::json::object out;
  out["config"] = found.config_source();
  if (found.is_forced()) out["forced"] = found.forced;
  out["backends"] = backends_json(found);
  out["landlock_abi"] = found.landlock_abi;
  const LandlockAudit &audit = found.audit;
  out["landlock_audit"] = boost::json::object{{"denials_logged", audit.denials_logged},
                                              {"readable", audit.readable},
                                              {"kernel_audit", to_string(audit.kernel_audit)},
                                              {"recorded", audit.recorded},
                                              {"summary", audit.summary}};
  out["ops"] = ops_json(found.ops);
  out["egress"] = egress_json(found);
  out["limits"] = limits_json(found);
  add_choice_json(out, found);
  return out;
}

// Each backend's state, its reason or its hint, and its gaps, in full.
void print_backend_details(const std::vector<BackendStatus> &statuses) {
  std::cout << "backends:\n";
  for (const auto &s : statuses) {
    std::ostringstream head;
    head << "  " << std::left << std::setw(11) << s.name;
    std::string note;
    if (s.name == kModeOff && s.available) {
      note = "explicit only: runs unsandboxed, never chosen by probe";
    } else if (!s.available) {
      note = s.reason;
    }
    if (note.empty()) {
      std::cout << head.str() << (s.available ? "available" : "unavailable") << "\n";
    } else {
      head << std::setw(12) << (s.available ? "available" : "unavailable");
      std::cout << wrapped(note, head.str(), std::string(25, ' '));
    }
    // An available backend's hint says what would give it more (a degraded one's).
    if (!s.hint.empty())
      std::cout << wrapped(s.hint, std::string(25, ' ') + "hint: ", std::string(31, ' '));
    const Coverage coverage = parse_coverage(s.warning);
    if (!coverage.gaps.empty()) {
      std::cout << wrapped((coverage.heading.empty() ? std::string("not covered")
                                                     : coverage.heading + "; not covered") +
                               ":",
                           "    ", "      ");
      print_gaps(coverage, "    ");
    }
  }
}

void print_ops(const std::vector<OpLine> &ops) {
  if (!ops.empty()) std::cout << "ops:\n";
  for (const OpLine &op : ops) {
    std::cout << "  " << op.name << ": "
              << (op.module ? "loaded (" + op.module->version() + ")" : "not loaded: " + op.failure)
              << "\n";
    for (const auto &[key, value] : op.report.facts) {
      std::cout << "    " << key << ": " << value << "\n";
    }
    if (!op.report.error.empty()) std::cout << "    report failed: " << op.report.error << "\n";
  }
}

void print_egress(const Findings &found) {
  const auto &egress = found.egress;
  if (!egress) {
    std::cout << "egress: none (no [egress] table: network proxied is refused)\n";
    return;
  }
  std::cout << "egress: " << egress->implementation
            << (egress->module ? " (module " + egress->module->version() + ", " +
                                     egress->module->file().string() + ")"
                : found.host.config().egress->builtin() ? " (built in)"
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

void print_limits(const Findings &found) {
  const CgroupPlacement &cgroups = found.cgroups;
  std::cout << "limits ([limits]; a plugin's own table may change the values):\n"
            << wrapped(cgroups.description(), "  cgroup: ", "          ");
  if (!cgroups.hint().empty())
    std::cout << wrapped(cgroups.hint(), "          hint: ", "                ");
  for (const auto &s : found.statuses) {
    if (!s.available) continue;
    std::cout << "  " << s.name << ":\n";
    print_limit_rows(found.rows_of(s));
  }
}

// --verbose, after the summary: everything probe found, in full.
void print_details(const Findings &found) {
  std::cout << "\ndetails:\n";
  if (found.is_forced()) std::cout << "forced: " << kEnvBackend << "=" << found.forced << "\n";
  print_backend_details(found.statuses);
  std::cout << "landlock ABI: " << found.landlock_abi << "\n";
  std::cout << wrapped(found.audit.summary, "landlock audit: ", "  ");
  print_ops(found.ops);
  print_egress(found);
  print_limits(found);
}

// The chosen backend's limits, for the summary's "limits not held".
std::vector<LimitRow> chosen_limits(const Findings &found) {
  std::vector<LimitRow> rows;
  for (const auto &s : found.statuses) {
    if (found.chosen && s.name == found.chosen->mode && s.available) rows = found.rows_of(s);
  }
  return rows;
}

int run_probe(const ProbeOptions &options) {
  Host host(load_config_or_defaults(options.config));
  const Findings found = find_out(host);
  const int status = found.chosen ? 0 : 1;
  if (options.json) {
    std::cout << boost::json::serialize(probe_json(found)) << "\n";
    return status;
  }
  print_summary(host, found.statuses, found.chosen, found.error, found.forced,
                chosen_limits(found));
  if (!options.verbose) {
    std::cout << "more: sandbox-host probe --verbose (each backend's hints and gaps, the limits, "
                 "ops, egress)\n";
    return status;
  }
  print_details(found);
  return status;
}

}  // namespace

Command add_probe_command(CLI::App &app) {
  auto options = std::make_shared<ProbeOptions>();
  auto *sub = app.add_subcommand("probe", "Show which sandbox backends work on this host");
  sub->add_option("--config", options->config,
                  "Config file (default: " + std::string(kDefaultConfigPath) +
                      " if present, else built-in defaults)");
  sub->add_flag("--json", options->json, "Print JSON instead of text");
  sub->add_flag("--verbose,-v", options->verbose,
                "After the summary, every backend's reasons, hints and gaps, the Landlock "
                "audit, ops, egress and the limits table");
  return {sub, [options] { return run_probe(*options); }};
}

}  // namespace sandbox_host::cli
