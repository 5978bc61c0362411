// The `off` backend: the plugin runs unconfined, by the operator's explicit choice. The
// host still gives it BaseEnv alone, no descriptor but 0-2, its own session and death with
// its parent; those come from the spawn path every backend shares.
#include <sandbox_host/module.hpp>

namespace {

class OffBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override {
    sandbox_host::ProbeReport report;
    report.available = true;
    report.warning =
        "no confinement: the plugin reads and writes whatever its user can, and reaches the "
        "network";
    return report;
  }

  void build_command(const sandbox_host::Spec &spec,
                     sandbox_host::CommandBuilder &command) override {
    command.program(spec.binary_path);
    for (const auto &arg : spec.args) command.arg(arg);
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(OffBackend, "off", "0.1.0",
                            "runs the plugin unsandboxed (explicit operator opt-out)")
