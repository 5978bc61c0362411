// A backend whose initialisation fails, as one whose device is missing would.
#include <sandbox_host/module.hpp>

#include <stdexcept>

namespace {

class InitFailsBackend final : public sandbox_host::Backend {
 public:
  explicit InitFailsBackend(const sandbox_host::HostInfo &) {
    throw std::runtime_error("cannot open /dev/frobnicator");
  }
  sandbox_host::ProbeReport probe() override { return {}; }
  void build_command(const sandbox_host::Spec &, sandbox_host::CommandBuilder &) override {}
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(InitFailsBackend, "initfails", "0.0.1", "fails to initialise")
