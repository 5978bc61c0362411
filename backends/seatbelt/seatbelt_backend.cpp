// The `seatbelt` backend (mode "seatbelt"): the plugin runs under Apple's
// sandbox-exec with a deny-by-default profile made from its Spec (seatbelt_profile.cpp).
// Nothing is re-executed: sandbox-exec applies the profile and execs the plugin itself.
// Network "proxied" is refused: macOS has no network namespace to leave empty, and a
// profile that lets the plugin reach the proxy's loopback port alone was never run on
// macOS, so it would be a promise nobody has checked.
#include "seatbelt_probe.hpp"
#include "seatbelt_profile.hpp"

#include <sandbox_host/module.hpp>

#include <stdexcept>

namespace {

class SeatbeltBackend final : public sandbox_host::Backend {
 public:
  sandbox_host::ProbeReport probe() override {
    return sandbox_host::seatbelt::probe_sandbox_exec({});
  }

  void build_command(const sandbox_host::Spec &spec,
                     sandbox_host::CommandBuilder &command) override {
    if (spec.network == sandbox_host::Network::proxied) {
      throw std::invalid_argument(
          "network \"proxied\" needs an empty network namespace whose only way out is the "
          "egress proxy, and sandbox-exec has none; it is refused rather than run with the "
          "host's network (the namespaces backend runs it, on Linux)");
    }
    const auto profile = sandbox_host::seatbelt::make_profile(spec);
    command.program(sandbox_host::seatbelt::kSandboxExec);
    for (const auto &define : sandbox_host::seatbelt::define_arguments(profile.parameters)) {
      command.arg(define);
    }
    command.arg("-p");
    command.arg(profile.text);
    // "--" ends sandbox-exec's options whichever getopt it uses, so an argument of the
    // plugin's that looks like one (-p, -D) reaches the plugin instead of sandbox-exec.
    command.arg("--");
    command.arg(spec.binary_path);
    for (const auto &arg : spec.args) command.arg(arg);
  }
};

}  // namespace

SANDBOX_HOST_BACKEND_MODULE(SeatbeltBackend, "seatbelt", "0.1.0",
                            "runs the plugin under macOS sandbox-exec with a deny-by-default "
                            "profile made from its Spec")
