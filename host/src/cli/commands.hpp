// The sandbox-host subcommands; each registers its options on the app and runs on its own.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::cli {

// Exit status of sandbox-host itself failing (bad config, Spec, no backend), as docker
// run does, so it stays apart from the plugin's own statuses that run passes through.
inline constexpr int kHostFailure = 125;

struct Command {
  CLI::App *app;
  std::function<int()> run;
};

// Parses the command line and runs the command it names; a refused config is reported as
// an audit record on stderr, any other failure as "sandbox-host <command>: <what>".
int run_command_line(CLI::App &app, const std::vector<Command> &commands, int argc, char **argv);

Command add_probe_command(CLI::App &app);
Command add_run_command(CLI::App &app);
Command add_modules_command(CLI::App &app);
// In sandbox-host-broker (broker_main.cpp).
Command add_serve_command(CLI::App &app);
Command add_ask_command(CLI::App &app);

}  // namespace sandbox_host::cli
