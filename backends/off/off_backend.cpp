// The `off` backend: the plugin runs unconfined, by the operator's explicit choice. The
// host still gives it BaseEnv alone, no descriptor but 0-2, its own session and death with
// its parent; those come from the spawn path every backend shares. Network "proxied"
// promises that the egress proxy is the only way out, which nothing here could keep: such
// a plugin is refused.
#include <sandbox_host/module.hpp>

#include <stdexcept>

namespace {

class OffBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override {
    sandbox_host::ProbeReport report;
    report.available = true;
    report.warning =
        "no confinement: the plugin reads and writes whatever its user can, and reaches the "
        "network (close: a confining backend, namespaces or landlock)";
    for (const char *limit :
         {"processes", "open_files", "file_size", "tmp_size", "tmp_inodes", "shm_size"}) {
      report.bounds.push_back(
          {limit, false, "the off backend runs the plugin as it is, with sandbox-host's rlimits"});
    }
    for (const char *scratch : {"scratch_size", "scratch_files"}) {
      report.bounds.push_back(
          {scratch, false,
           "the off backend confines no writes: the plugin writes wherever its user can"});
    }
    return report;
  }

  void build_command(const sandbox_host::Spec &spec,
                     sandbox_host::CommandBuilder &command) override {
    if (spec.network == sandbox_host::Network::proxied) {
      throw std::invalid_argument(
          "network \"proxied\" needs an empty network namespace whose only way out is the "
          "egress proxy, and the off backend confines nothing; it is refused rather than run "
          "with the host's network (the namespaces backend runs it)");
    }
    if (!spec.view.empty()) {
      throw std::invalid_argument(
          "an agent policy holds a command to its view of the file system, and the off backend "
          "confines nothing; it is refused rather than run unconfined (the namespaces and "
          "landlock backends enforce it)");
    }
    command.program(spec.binary_path);
    for (const auto &arg : spec.args) command.arg(arg);
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(OffBackend, "off", "0.1.0",
                            "runs the plugin unsandboxed (explicit operator opt-out)")
