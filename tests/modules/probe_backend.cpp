// A backend for probe tests, built twice (as "alpha" and "beta"): it works while the
// variable TEST_BACKEND_<NAME> is "1", counts its probes in its warning, and reports the
// Landlock ABI that TEST_BACKEND_<NAME>_LANDLOCK_ABI says (as the Landlock backend reports
// the kernel's).
#include <sandbox_host/module.hpp>

#include <cstdlib>
#include <string>

namespace {

class ProbeBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override {
    ++calls_;
    sandbox_host::ProbeReport report;
    const char *value = std::getenv(TEST_BACKEND_VARIABLE);
    report.available = value != nullptr && std::string(value) == "1";
    if (!report.available) {
      report.reason = std::string(TEST_BACKEND_VARIABLE) + " is not 1";
      report.hint = std::string("export ") + TEST_BACKEND_VARIABLE + "=1";
    }
    report.warning = "probe call " + std::to_string(calls_);
    const char *abi = std::getenv((std::string(TEST_BACKEND_VARIABLE) + "_LANDLOCK_ABI").c_str());
    report.landlock_abi = abi == nullptr ? 0 : std::atoi(abi);
    return report;
  }
  void build_command(const sandbox_host::Spec &spec,
                     sandbox_host::CommandBuilder &command) override {
    command.program(spec.binary_path);
    for (const auto &arg : spec.args) command.arg(arg);
  }

 private:
  int calls_ = 0;
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(ProbeBackend, TEST_BACKEND_NAME, "0.0.1", "probe test backend")
