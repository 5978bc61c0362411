// A backend for stage-1 tests: asks for the host's re-exec and, in stage 1, execs the plugin
// as it is. A plugin named "fail-setup" makes its setup fail.
#include <sandbox_host/module.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

extern char **environ;

namespace {

class ReexecBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override { return {true, "", "", "", 0}; }

  void build_command(const sandbox_host::Spec &, sandbox_host::CommandBuilder &command) override {
    command.env("REEXEC_TEST_BACKEND", "1");
    command.reexec_stage1();
  }

  void stage1(const sandbox_host::Spec &spec) override {
    if (spec.plugin_name == "fail-setup") {
      throw std::runtime_error("mount: refused on purpose by the test backend\nsecond line");
    }
    std::vector<char *> argv{const_cast<char *>(spec.binary_path.c_str())};
    for (const auto &arg : spec.args) argv.push_back(const_cast<char *>(arg.c_str()));
    argv.push_back(nullptr);
    ::execve(spec.binary_path.c_str(), argv.data(), environ);
    throw std::runtime_error(std::string("exec: ") + std::strerror(errno));
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(ReexecBackend, "reexec", "0.0.1", "stage-1 test backend")
