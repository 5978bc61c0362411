// `sandbox-host env --unheld`: for a shell's rc file, `eval "$(sandbox-host env --unheld)"`.
// A shell that carries the policy's variables while no sandbox holds it (Claude Code applied
// the settings' env but not its sandbox) drops them, so that its commands use the host's
// own CA bundle, gh and git configuration instead of an egress proxy that is not there.
#include "commands.hpp"

#include <sandbox_host/host/policy/agent_env.hpp>
#include <sandbox_host/host/policy/agent_policy.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {
namespace policy = sandbox_host::policy;

struct EnvCommandOptions {
  bool unheld = false;
  std::string policy_file = policy::kDefaultPolicyPath;
};

int run_env(const EnvCommandOptions &options) {
  if (!policy::unheld([](const char *name) { return std::getenv(name); })) return 0;
  policy::Policy loaded;
  try {
    loaded = policy::load_policy(options.policy_file);
  } catch (const std::exception &e) {
    // The names every policy sets (the egress directory's and CLAWPATROL_SANDBOX) do not
    // depend on the file; only the policy's own vars stay set. Exit 0 all the same: a
    // failing command in a shell's rc file must not stand between the user and the shell.
    std::cerr << "sandbox-host env: " << e.what() << "; unsetting the egress variables and "
              << policy::kEnvSandbox << " only, not the policy's own vars\n";
    loaded = policy::Policy{};
    // The egress variables' names are the same for every directory; their values go unused.
    loaded.egress = "/";
  }
  std::cout << policy::unset_shell(loaded) << std::flush;
  return 0;
}

}  // namespace

Command add_env_command(CLI::App &app) {
  auto options = std::make_shared<EnvCommandOptions>();
  auto *sub = app.add_subcommand(
      "env",
      "Environment hygiene for a shell's rc file: eval \"$(sandbox-host env --unheld)\" unsets "
      "the agent policy's variables in a session that carries them while no sandbox holds "
      "it, and prints nothing otherwise. Exits 0 even when the policy cannot be read (then "
      "it unsets the variables every policy sets and says why on stderr)");
  sub->add_flag("--unheld", options->unheld,
                "Print the unset line when CLAWPATROL_SANDBOX is set without SANDBOX_RUNTIME "
                "or CLAWPATROL_SANDBOX_BROKERED")
      ->required();
  sub->add_option("--policy", options->policy_file, "Agent policy file")->capture_default_str();
  return {sub, [options] { return run_env(*options); }};
}

}  // namespace sandbox_host::cli
