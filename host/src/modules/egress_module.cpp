#include "egress_module.hpp"

#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/host/text_escape.hpp>
#include <sandbox_host/strings.hpp>

#include <stdexcept>

namespace sandbox_host {
namespace {

std::string describe(const LoadedModule &module) {
  return "egress module " + module.name() + " (" + module.file().string() + ")";
}

// The sinks the module calls from its threads, alive until its stop() returned.
struct Sinks {
  AuditSink &audit;
  std::function<void(const std::string &)> log;

  static void refused(void *ctx, sh_str rule, sh_str attempted, sh_str hint) noexcept {
    auto *self = static_cast<Sinks *>(ctx);
    try {
      self->audit.record({"egress", "", std::string(to_view(rule)), std::string(to_view(attempted)),
                          std::string(to_view(hint))});
    } catch (...) {
      // A record that cannot be written must not unwind into the module.
    }
  }
  static void log_line(void *ctx, sh_str line) noexcept {
    auto *self = static_cast<Sinks *>(ctx);
    try {
      if (self->log) self->log(std::string(to_view(line)));
    } catch (...) {
    }
  }
};

class RunningModule final : public RunningEgress {
 public:
  RunningModule(std::shared_ptr<const LoadedModule> module, const sh_egress_v1 *table,
                const EgressServing &serving, std::string where,
                std::shared_ptr<std::atomic<bool>> serving_flag)
      : serving_flag_(std::move(serving_flag)),
        module_(std::move(module)),
        table_(table),
        sinks_{serving.audit, serving.log},
        raw_{sizeof(sh_egress_sinks), &sinks_, &Sinks::refused, &Sinks::log_line},
        where_(std::move(where)) {
    if (serving_flag_->exchange(true)) {
      throw std::logic_error(describe(*module_) + ": started again before it was stopped");
    }
    StringSink error;
    if (table_->start(module_->instance(), &raw_, error.writer()) != SH_OK) {
      serving_flag_->store(false);
      throw std::runtime_error(describe(*module_) + ": start: " +
                               (error.text().empty() ? "no reason given" : error.text()));
    }
  }
  ~RunningModule() override {
    table_->stop(module_->instance());
    serving_flag_->store(false);
  }
  RunningModule(const RunningModule &) = delete;
  RunningModule &operator=(const RunningModule &) = delete;

  std::string description() const override {
    return "egress module " + module_->name() + " " + module_->version() + " on " + where_;
  }

 private:
  std::shared_ptr<std::atomic<bool>> serving_flag_;
  std::shared_ptr<const LoadedModule> module_;
  const sh_egress_v1 *table_;
  Sinks sinks_;
  sh_egress_sinks raw_;
  std::string where_;
};

}  // namespace

ModuleEgress::ModuleEgress(std::shared_ptr<const LoadedModule> module)
    : module_(std::move(module)),
      table_(static_cast<const sh_egress_v1 *>(module_->table())),
      serving_(std::make_shared<std::atomic<bool>>(false)) {}

EgressRoute ModuleEgress::route() const {
  StringSink socket, directory, error;
  sh_egress_route out{sizeof(sh_egress_route), *socket.writer(), *directory.writer(), 0};
  const std::string who = describe(*module_) + ": route: ";
  if (table_->route(module_->instance(), &out, error.writer()) != SH_OK) {
    throw std::runtime_error(who + (error.text().empty() ? "no reason given" : error.text()));
  }
  auto bad = [&](const std::string &what) { return std::runtime_error(who + what); };
  const std::string &path = socket.text();
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) {
    throw bad("the socket \"" + escape_text(path) + "\" is not an absolute path");
  }
  if (path.size() > kMaxSocketPath) {
    throw bad("the socket " + escape_text(path) + " is longer than a unix socket address holds (" +
              std::to_string(kMaxSocketPath) + " bytes)");
  }
  const std::string &dir = directory.text();
  if (!dir.empty() && (dir.front() != '/' || dir.find('\0') != std::string::npos)) {
    throw bad("the egress directory \"" + escape_text(dir) + "\" is not an absolute path");
  }
  if (out.port == 0 || out.port > 65535) {
    throw bad("port " + std::to_string(out.port) + " is not a port of 1 to 65535");
  }
  return {path, dir, static_cast<std::uint16_t>(out.port)};
}

std::unique_ptr<RunningEgress> ModuleEgress::start(const EgressServing &serving) const {
  const EgressRoute where = route();
  return std::make_unique<RunningModule>(
      module_, table_, serving,
      where.socket + (where.directory.empty() ? "" : "; egress directory " + where.directory),
      serving_);
}

}  // namespace sandbox_host
