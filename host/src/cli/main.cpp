#include "commands.hpp"

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/stage1.hpp>

#include <algorithm>
#include <iostream>
#include <vector>

int main(int argc, char **argv) {
  sandbox_host::stage1();
  namespace cli = sandbox_host::cli;

  CLI::App app{"sandbox-host: runs untrusted plugins inside OS sandboxes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SANDBOX_HOST_VERSION);
  const std::vector<cli::Command> commands{cli::add_probe_command(app), cli::add_run_command(app),
                                           cli::add_modules_command(app)};
  auto known = [&](const std::string &name) {
    return std::any_of(commands.begin(), commands.end(),
                       [&](const cli::Command &c) { return c.app->get_name() == name; });
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "sandbox-host: unknown command \"" << argv[1]
              << "\"; commands: probe, run, modules (see --help)\n";
    return cli::kHostFailure;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : cli::kHostFailure;
  }
  for (const auto &command : commands) {
    if (!command.app->parsed()) continue;
    try {
      return command.run();
    } catch (const sandbox_host::ConfigError &e) {
      // No config, so no configured sink: the refusal goes to stderr as text.
      sandbox_host::AuditSink(sandbox_host::AuditFormat::text)
          .record({"config", "", "config-file", e.what(),
                   "fix the file; `sandbox-host probe --config FILE` checks it"});
      return cli::kHostFailure;
    } catch (const std::exception &e) {
      std::cerr << "sandbox-host " << command.app->get_name() << ": " << e.what() << "\n";
      return cli::kHostFailure;
    }
  }
  return cli::kHostFailure;
}
