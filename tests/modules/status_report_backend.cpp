// A backend for pool tests of the status a prepared sandbox reports (module ABI 1.5): its
// prepared stage 1 takes the launch and, by the plugin's name, reports a status and stays
// ("report-and-stay", as a sandbox whose own processes are slow to end), reports one out of
// range and exits 7 ("report-out-of-range"), or exits 5 without a report (any other name).
// Stage 1 exits 90 when status_descriptor() was not -1 before the launch, 91 when it is -1
// after it. Cold launches exec the plugin as it is.
#include "exec_as_is.hpp"

#include <sandbox_host/module.hpp>

#include <unistd.h>

namespace {

class StatusReportBackend final : public sandbox_host::test_modules::ExecAsIsBackend {
 public:
  void stage1_prepared(sandbox_host::Network, sandbox_host::LaunchSource &source) override {
    if (source.status_descriptor() != -1) ::_exit(90);
    const sandbox_host::Spec spec = source.await_launch();
    if (source.status_descriptor() < 0) ::_exit(91);
    if (spec.plugin_name == "report-and-stay") {
      source.report_status(42);
      for (;;) ::pause();
    }
    if (spec.plugin_name == "report-out-of-range") {
      source.report_status(1000);
      ::_exit(7);
    }
    ::_exit(5);
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(StatusReportBackend, "reports", "0.0.1",
                            "pool test backend whose prepared sandboxes report a status")
