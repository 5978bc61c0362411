#include "commands.hpp"

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>

#include <iostream>

namespace sandbox_host::cli {

int run_command_line(CLI::App &app, const std::vector<Command> &commands, int argc, char **argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : kHostFailure;
  }
  for (const auto &command : commands) {
    if (!command.app->parsed()) continue;
    try {
      return command.run();
    } catch (const ConfigError &e) {
      // No config, so no configured sink: the refusal goes to stderr as text.
      AuditSink(AuditFormat::text)
          .record({"config", "", "config-file", e.what(),
                   "fix the file; `sandbox-host probe --config FILE` checks it"});
      return kHostFailure;
    } catch (const std::exception &e) {
      std::cerr << "sandbox-host " << command.app->get_name() << ": " << e.what() << "\n";
      return kHostFailure;
    }
  }
  return kHostFailure;
}

}  // namespace sandbox_host::cli
