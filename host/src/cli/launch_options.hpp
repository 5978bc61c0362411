// The launch options (launch_option_table.hpp) on `sandbox-host run`'s command line.
#pragma once

#include <sandbox_host/host/launch_client/launch_client.hpp>

#include <CLI/CLI.hpp>

namespace sandbox_host {

// Registers them, and the command they launch, on the run subcommand.
void add_launch_options(CLI::App &app, LaunchOptions &options);

}  // namespace sandbox_host
