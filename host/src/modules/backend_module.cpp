#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/spec_abi.hpp>
#include <sandbox_host/strings.hpp>

#include <cstddef>
#include <sstream>

namespace sandbox_host {

BackendModule::BackendModule(std::shared_ptr<const LoadedModule> module)
    : module_(std::move(module)), table_(static_cast<const sh_backend_v1 *>(module_->table())) {}

ProbeReport BackendModule::probe() const {
  StringSink reason, hint, warning, bounds;
  sh_probe_report raw{
      sizeof(sh_probe_report), 0, 0, *reason.writer(), *hint.writer(), *warning.writer(),
      *bounds.writer()};
  ProbeReport report;
  if (table_->probe(module_->instance(), &raw) != SH_OK) {
    report.reason = "its probe failed: " + reason.text();
    return report;
  }
  report.available = raw.available != 0;
  report.landlock_abi = raw.landlock_abi;
  report.reason = reason.text();
  report.hint = hint.text();
  report.warning = warning.text();
  std::istringstream lines(bounds.text());
  for (std::string line; std::getline(lines, line);) {
    const std::size_t first = line.find('\t');
    const std::size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos) continue;
    report.bounds.push_back({line.substr(0, first),
                             line.substr(first + 1, second - first - 1) == "1",
                             line.substr(second + 1)});
  }
  return report;
}

namespace {

struct CommandCollector {
  BackendCommand command;

  static CommandCollector &of(void *ctx) { return *static_cast<CommandCollector *>(ctx); }
  static void set_program(void *ctx, sh_str path) noexcept {
    try {
      of(ctx).command.program = to_view(path);
    } catch (...) {
    }
  }
  static void add_arg(void *ctx, sh_str arg) noexcept {
    try {
      of(ctx).command.args.emplace_back(to_view(arg));
    } catch (...) {
    }
  }
  static void set_env(void *ctx, sh_str name, sh_str value) noexcept {
    try {
      of(ctx).command.env.emplace_back(to_view(name), to_view(value));
    } catch (...) {
    }
  }
  static void reexec_stage1(void *ctx) noexcept { of(ctx).command.reexec_stage1 = true; }
};

}  // namespace

BackendCommand BackendModule::build_command(const Spec &spec) const {
  CommandCollector collector;
  sh_command_builder raw{sizeof(sh_command_builder),     &collector,
                         &CommandCollector::set_program, &CommandCollector::add_arg,
                         &CommandCollector::set_env,     &CommandCollector::reexec_stage1};
  SpecAbiView view(spec);
  StringSink error;
  if (table_->build_command(module_->instance(), view.get(), &raw, error.writer()) != SH_OK) {
    throw std::runtime_error("backend " + name() + ": cannot build the command for plugin \"" +
                             spec.plugin_name + "\": " + error.text());
  }
  if (!collector.command.reexec_stage1 && collector.command.program.empty()) {
    throw std::runtime_error("backend " + name() + " named no program to start");
  }
  return std::move(collector.command);
}

std::string BackendModule::stage1(const Spec &spec) const {
  SpecAbiView view(spec);
  StringSink error;
  table_->stage1(module_->instance(), view.get(), error.writer());
  return error.text().empty() ? "stage1: backend " + name() + " returned without exec'ing"
                              : error.text();
}

bool BackendModule::prepares() const noexcept {
  // A module built against ABI 1.0 has a shorter table: the field is not there to read.
  return table_->struct_size >=
             offsetof(sh_backend_v1, stage1_prepared) + sizeof(table_->stage1_prepared) &&
         table_->stage1_prepared != nullptr;
}

std::string BackendModule::stage1_prepared(Network network, const sh_launch_source &source) const {
  if (!prepares()) return "prepare: backend " + name() + " does not prepare sandboxes";
  StringSink error;
  table_->stage1_prepared(module_->instance(), to_sh_str(to_string(network)), &source,
                          error.writer());
  return error.text().empty() ? "stage1: backend " + name() + " returned without exec'ing"
                              : error.text();
}

}  // namespace sandbox_host
