#include "commands.hpp"

#include <sandbox_host/host/stage1.hpp>

#include <unistd.h>

#include <boost/algorithm/string/join.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace {

// serve, ask, egress and sandbox live in sandbox-host-broker, next to this executable as installed
// (<prefix>/libexec/sandbox-host/), so that the broker's libraries stay out of the start-up
// of every plugin launch, which re-executes this binary.
[[noreturn]] void exec_broker(char **argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const auto broker = self.parent_path() / SANDBOX_HOST_BROKER_RELATIVE_PATH;
  argv[0] = const_cast<char *>("sandbox-host");
  ::execv(broker.c_str(), argv);
  std::cerr << "sandbox-host " << argv[1] << ": cannot run " << broker.string() << ": "
            << std::strerror(errno) << "\n";
  std::exit(sandbox_host::cli::kHostFailure);
}

// The hook protocol's blocking error: Claude Code refuses the call and shows stderr.
constexpr int kHookBlocks = 2;

// The commands sandbox-host-broker runs, listed in this app's help and its list of commands.
struct BrokerCommand {
  const char *name;
  const char *description;
};
constexpr std::array<BrokerCommand, 4> kBrokerCommands{{
    {"serve", "Serve the broker, egress proxy and launch service (sandbox-host-broker)"},
    {"ask", "Ask the broker for one operation"},
    {"egress", "Run the egress proxy alone"},
    {"sandbox", "What a process inside a sandbox asks the broker for"},
}};

}  // namespace

int main(int argc, char **argv) {
  sandbox_host::stage1();
  namespace cli = sandbox_host::cli;
  if (argc > 1 &&
      std::any_of(kBrokerCommands.begin(), kBrokerCommands.end(),
                  [&](const BrokerCommand &c) { return std::strcmp(argv[1], c.name) == 0; })) {
    exec_broker(argv);
  }

  CLI::App app{"sandbox-host: runs untrusted plugins inside OS sandboxes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", SANDBOX_HOST_VERSION);
  CLI::App &policy = cli::add_policy_group(app);
  const std::vector<cli::Command> commands{cli::add_probe_command(app),
                                           cli::add_run_command(app),
                                           cli::add_modules_command(app),
                                           cli::add_hook_command(app),
                                           cli::add_env_command(app),
                                           cli::add_policy_render_command(policy),
                                           cli::add_policy_install_command(policy),
                                           cli::add_policy_check_command(policy)};
  for (const BrokerCommand &command : kBrokerCommands) {
    app.add_subcommand(command.name, command.description);
  }
  std::vector<std::string> names;
  for (const CLI::App *sub :
       std::as_const(app).get_subcommands([](const CLI::App *) { return true; })) {
    names.push_back(sub->get_name());
  }
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::cerr << "sandbox-host: unknown command \"" << argv[1]
              << "\"; commands: " << boost::algorithm::join(names, ", ") << " (see --help)\n";
    return cli::kHostFailure;
  }
  const int code = cli::run_command_line(app, commands, argc, argv);
  // Claude Code lets a call through when its PreToolUse hook fails with any status but 2,
  // which blocks it: a hook that could not answer must not open the file tools.
  if (code != 0 && argc > 1 && std::strcmp(argv[1], "hook") == 0) return kHookBlocks;
  return code;
}
