// sandbox-host-broker: `sandbox-host serve`, `ask`, `egress` and `sandbox ...`, which
// sandbox-host runs through this binary so that the broker's and the egress proxy's
// libraries (OpenSSL) stay out of every plugin launch's start-up.
#include "commands.hpp"

int main(int argc, char **argv) {
  namespace cli = sandbox_host::cli;
  CLI::App app{"sandbox-host broker: serve, ask, egress and sandbox"};
  app.name("sandbox-host");
  app.require_subcommand(1);
  CLI::App &sandbox = cli::add_sandbox_group(app);
  const std::vector<cli::Command> commands{
      cli::add_serve_command(app), cli::add_ask_command(app), cli::add_egress_command(app),
      cli::add_sandbox_scope_command(sandbox), cli::add_sandbox_gpg_command(sandbox)};
  return cli::run_command_line(app, commands, argc, argv);
}

namespace sandbox_host::cli {

CLI::App &add_sandbox_group(CLI::App &app) {
  auto *sandbox = app.add_subcommand(
      "sandbox", "What a process inside a sandbox asks the broker for (scope, gpg)");
  sandbox->require_subcommand(1);
  return *sandbox;
}

}  // namespace sandbox_host::cli
