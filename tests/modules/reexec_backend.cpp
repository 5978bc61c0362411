// A backend for stage-1 tests: asks for the host's re-exec and, in stage 1, execs the plugin
// as it is. A plugin named "fail-setup" makes its setup fail.
#include "exec_as_is.hpp"

#include <sandbox_host/module.hpp>

#include <stdexcept>

namespace {

class ReexecBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override { return {true, "", "", "", 0, {}}; }

  void build_command(const sandbox_host::Spec &, sandbox_host::CommandBuilder &command) override {
    command.env("REEXEC_TEST_BACKEND", "1");
    command.reexec_stage1();
  }

  void stage1(const sandbox_host::Spec &spec) override {
    if (spec.plugin_name == "fail-setup") {
      throw std::runtime_error("mount: refused on purpose by the test backend\nsecond line");
    }
    sandbox_host::test_modules::exec_as_is(spec);
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(ReexecBackend, "reexec", "0.0.1", "stage-1 test backend")
