// The sandbox-host subcommands; each registers its options on the app and runs on its own.
#pragma once

#include <sandbox_host/host/env_names.hpp>

#include <CLI/CLI.hpp>

#include <signal.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sandbox_host {
class Host;
class RunningEgress;
}  // namespace sandbox_host

namespace sandbox_host::cli {

using ::sandbox_host::kHostFailure;

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
// Agent policies (docs/agent-policy.md): Claude Code's PreToolUse hook for the file tools,
// the shell's environment hygiene and `sandbox-host policy render|install|check`, each
// registering on the group that add_policy_group makes.
Command add_hook_command(CLI::App &app);  // hook_command.cpp
Command add_env_command(CLI::App &app);   // env_command.cpp
CLI::App &add_policy_group(CLI::App &app);
Command add_policy_render_command(CLI::App &policy);  // policy_command.cpp
Command add_policy_install_command(CLI::App &policy);
Command add_policy_check_command(CLI::App &policy);
// In sandbox-host-broker (broker_main.cpp).
Command add_serve_command(CLI::App &app);
Command add_ask_command(CLI::App &app);
Command add_egress_command(CLI::App &app);
// `sandbox-host sandbox <what>`: what a process inside a sandbox asks the broker for. Each
// registers on the group that add_sandbox_group makes.
CLI::App &add_sandbox_group(CLI::App &app);
Command add_sandbox_scope_command(CLI::App &sandbox);  // sandbox_scope_command.cpp
Command add_sandbox_gpg_command(CLI::App &sandbox);    // sandbox_gpg_command.cpp

// SIGINT, SIGTERM and SIGHUP: what ends serve and egress.
sigset_t ending_signals();
// sandbox-host itself, beside which sandbox-host-broker is installed.
std::filesystem::path sandbox_host_executable();
// The egress's events that are no refusals (the token keeper's), on stderr.
void egress_log(const std::string &line);
// The config's egress serving, in sandbox-host-broker, which links the built-in proxy.
std::unique_ptr<RunningEgress> start_egress(const Host &host);

}  // namespace sandbox_host::cli
