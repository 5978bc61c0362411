// A backend for pool tests whose prepared sandboxes are never usable, while its cold launches
// work (stage 1 execs the plugin as it is). Prepared for network "none" the setup fails at
// once; prepared for "outbound" it never reports ready.
#include <sandbox_host/module.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

extern char **environ;

namespace {

class PrepareFailsBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override { return {true, "", "", "", 0}; }

  void build_command(const sandbox_host::Spec &, sandbox_host::CommandBuilder &command) override {
    command.reexec_stage1();
  }

  void stage1(const sandbox_host::Spec &spec) override {
    std::vector<char *> argv{const_cast<char *>(spec.binary_path.c_str())};
    for (const auto &arg : spec.args) argv.push_back(const_cast<char *>(arg.c_str()));
    argv.push_back(nullptr);
    ::execve(spec.binary_path.c_str(), argv.data(), environ);
    throw std::runtime_error(std::string("exec: ") + std::strerror(errno));
  }

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
