// sandbox-host-broker: `sandbox-host serve` and `sandbox-host ask`, which sandbox-host runs
// through this binary so that the broker's libraries (Poco) stay out of every plugin
// launch's start-up.
#include "commands.hpp"

int main(int argc, char **argv) {
  namespace cli = sandbox_host::cli;
  CLI::App app{"sandbox-host broker: serve, ask and egress"};
  app.name("sandbox-host");
  app.require_subcommand(1);
  const std::vector<cli::Command> commands{cli::add_serve_command(app), cli::add_ask_command(app),
                                           cli::add_egress_command(app)};
  return cli::run_command_line(app, commands, argc, argv);
}
