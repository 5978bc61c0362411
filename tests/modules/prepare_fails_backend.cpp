// A backend for pool tests whose prepared sandboxes are never usable, while its cold launches
// work (stage 1 execs the plugin as it is). Prepared for network "none" the setup fails at
// once; prepared for "outbound" it never reports ready.
#include "exec_as_is.hpp"

#include <sandbox_host/module.hpp>

#include <unistd.h>

#include <stdexcept>

namespace {

class PrepareFailsBackend final : public sandbox_host::test_modules::ExecAsIsBackend {
 public:
  void stage1_prepared(sandbox_host::Network network, sandbox_host::LaunchSource &) override {
    if (network == sandbox_host::Network::none) {
      throw std::runtime_error("mount: refused on purpose by the test backend");
    }
    for (;;) ::pause();
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(PrepareFailsBackend, "preparefails", "0.0.1",
                            "pool test backend whose prepared sandboxes never work")
