#include "launch_options.hpp"

#include "../launch_client/launch_option_table.hpp"

#include <sandbox_host/host/env_names.hpp>

#include <string>
#include <string_view>

namespace sandbox_host {

static_assert(std::string_view(kLaunchOptionFields[1].help).find(kEnvBackend) !=
                  std::string_view::npos,
              "--backend's help names the variable that forces a backend");

void add_launch_options(CLI::App &app, LaunchOptions &options) {
  for (const LaunchOptionField &field : kLaunchOptionFields) {
    const std::string flag = std::string("--") + field.name;
    if (field.once != nullptr) {
      app.add_option(flag, options.*field.once, field.help);
    } else {
      app.add_option(flag, options.*field.repeated, field.help);
    }
  }
  app.add_option("command", options.command, kLaunchCommandHelp)->required();
  app.positionals_at_end();
}

}  // namespace sandbox_host
