// sandbox-host-launch: `sandbox-host run --via` as a program of its own, for gateways that
// launch through the launch service: it links neither the module loader nor the config
// reader, so that its start-up, part of every launch, stays small (docs/benchmarks.md).
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launcher/launch_client.hpp>

#include "launch_options.hpp"

#include <cstdlib>
#include <iostream>

int main(int argc, char **argv) {
  namespace sh = sandbox_host;
  CLI::App app{
      "sandbox-host-launch: launch one plugin through the launch service of `sandbox-host "
      "serve` ([launcher]); its stdio is this program's and its exit status this program's "
      "(125: refused or no service, 87: the sandbox could not be set up)"};
  app.name("sandbox-host-launch");
  std::optional<std::string> via;
  sh::LaunchOptions options;
  app.add_option("--via", via,
                 "The launch service's socket (default: " + std::string(sh::kEnvLauncher) + ")");
  sh::add_launch_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : sh::kHostFailure;
  }
  if (!via) {
    const char *socket = std::getenv(std::string(sh::kEnvLauncher).c_str());
    if (socket == nullptr || *socket == '\0') {
      std::cerr << "sandbox-host-launch: no launch service: name its socket with --via or "
                << sh::kEnvLauncher << "\n";
      return sh::kHostFailure;
    }
    via = socket;
  }
  sh::LaunchRequest request;
  try {
    request = sh::make_launch_request(options);
  } catch (const std::exception &e) {
    std::cerr << "sandbox-host-launch: " << e.what() << "\n";
    return sh::kHostFailure;
  }
  return sh::launch_via("sandbox-host-launch", *via, request);
}
