// The options `sandbox-host run` and sandbox-host-launch share, on their command lines.
#pragma once

#include <sandbox_host/host/launcher/launch_client.hpp>

#include <CLI/CLI.hpp>

namespace sandbox_host {

// Registers the options on a subcommand (run) or a program (sandbox-host-launch).
void add_launch_options(CLI::App &app, LaunchOptions &options);

}  // namespace sandbox_host
