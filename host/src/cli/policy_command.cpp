// `sandbox-host policy render|install|check`: the agent policy file as Claude Code's
// managed settings drop-in, installed into managed-settings.d, and checked the way the
// backends will hold commands to it.
#include "commands.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/claude_settings.hpp>
#include <sandbox_host/host/policy/permission_rules.hpp>
#include <sandbox_host/host/policy/policy_view.hpp>

#include <iomanip>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {
namespace policy = sandbox_host::policy;

struct PolicyCommandOptions {
  std::string policy_file = policy::kDefaultPolicyPath;
  std::optional<std::string> managed_dir;
};

// Runs one policy subcommand; a policy that fails to load or check is reported as
// "sandbox-host policy <name>: <what>" with kHostFailure.
template <typename Run>
int reporting(const std::string &name, Run run) {
  try {
    return run();
  } catch (const std::exception &e) {
    std::cerr << "sandbox-host policy " << name << ": " << e.what() << "\n";
    return kHostFailure;
  }
}

int run_render(const PolicyCommandOptions &options) {
  return reporting("render", [&] {
    const auto loaded = policy::load_policy(options.policy_file);
    std::cout << policy::render_claude_settings(loaded, options.policy_file) << std::flush;
    return 0;
  });
}

int run_install(const PolicyCommandOptions &options) {
  return reporting("install", [&] {
    const auto loaded = policy::load_policy(options.policy_file);
    const std::filesystem::path managed =
        options.managed_dir ? std::filesystem::path(*options.managed_dir) : policy::managed_dir();
    // Every session's sandbox mounts over the deny paths, so they exist before the first.
    loaded.mount_points();
    const bool wrote = policy::install_drop_in(loaded, options.policy_file, managed);
    std::cout << (wrote ? "installed " : "unchanged ") << policy::drop_in_path(managed).string()
              << "\n";
    return 0;
  });
}

int run_check(const PolicyCommandOptions &options) {
  return reporting("check", [&] {
    const auto loaded = policy::load_policy(options.policy_file);
    for (const auto &rule : policy::command_view(loaded)) {
      std::cout << std::left << std::setw(6) << to_string(rule.access) << rule.path << "\n";
    }
    // Sessions that run no hooks (claude --bare, CLAUDE_CODE_SIMPLE=1) are held by the
    // drop-in's deny rules and Claude Code's sandbox alone.
    const auto hookless = policy::hookless_rules(loaded);
    std::cout << "\nwithout the hook (claude --bare, CLAUDE_CODE_SIMPLE=1), permissions.deny:\n";
    for (const auto &rule : hookless.deny) std::cout << "  " << rule << "\n";
    std::cout << "not held without the hook (run the session under `sandbox-host run --policy "
                 "--harness` to hold it):\n";
    for (const auto &line : hookless.unheld) std::cout << "  " << line << "\n";
    return 0;
  });
}

void add_policy_option(CLI::App &sub, PolicyCommandOptions &options) {
  sub.add_option("--policy", options.policy_file, "Agent policy file")->capture_default_str();
}

}  // namespace

CLI::App &add_policy_group(CLI::App &app) {
  auto *group = app.add_subcommand(
      "policy", "The agent policy as Claude Code managed settings (render, install, check)");
  group->require_subcommand(1);
  return *group;
}

Command add_policy_render_command(CLI::App &group) {
  auto options = std::make_shared<PolicyCommandOptions>();
  auto *sub = group.add_subcommand(
      "render", "Print the Claude Code managed settings drop-in the policy renders to");
  add_policy_option(*sub, *options);
  return {sub, [options] { return run_render(*options); }};
}

Command add_policy_install_command(CLI::App &group) {
  auto options = std::make_shared<PolicyCommandOptions>();
  auto *sub = group.add_subcommand(
      "install",
      "Create the policy's deny paths and write the drop-in into managed-settings.d "
      "atomically; a drop-in that holds the same settings already is left untouched. Its deny "
      "rules name the home's entries as they are now: run it again after adding to the home");
  add_policy_option(*sub, *options);
  sub->add_option(
      "--managed-dir", options->managed_dir,
      "Claude Code's managed settings directory (default " + policy::managed_dir().string() + ")");
  return {sub, [options] { return run_install(*options); }};
}

Command add_policy_check_command(CLI::App &group) {
  auto options = std::make_shared<PolicyCommandOptions>();
  auto *sub = group.add_subcommand(
      "check",
      "Validate the policy and print the view `run --policy` holds commands to: one rule per "
      "line, its access (none, read, write) and path; the longest path wins");
  add_policy_option(*sub, *options);
  return {sub, [options] { return run_check(*options); }};
}

}  // namespace sandbox_host::cli
