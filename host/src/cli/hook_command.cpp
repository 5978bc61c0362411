// `sandbox-host hook`: Claude Code's PreToolUse hook for the file tools, as the managed
// settings' drop-in runs it. Reads the call on stdin and answers on stdout; it fails
// closed: input it cannot read and a policy it cannot load deny every file tool.
#include "commands.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/file_tool_hook.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {
namespace policy = sandbox_host::policy;

// Claude Code writes one JSON object of a few kilobytes; anything near this is no call.
constexpr std::size_t kMaxInput = 1 << 20;

struct HookCommandOptions {
  std::string policy_file = policy::kDefaultPolicyPath;
  bool decide_allowed = false;
};

// stdin up to kMaxInput bytes; nullopt when there is more.
std::optional<std::string> read_input() {
  std::string input;
  std::array<char, 65536> buffer{};
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    if (n == 0) return input;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("cannot read the hook's input: ") +
                               std::strerror(errno));
    }
    input.append(buffer.data(), static_cast<std::size_t>(n));
    if (input.size() > kMaxInput) return std::nullopt;
  }
}

// Without a policy no path can be held to one: a file tool is denied, any other tool (or
// input naming none) gets what the hook gives it with a policy.
policy::HookAnswer answer_without_policy(const std::string &input, const std::string &error) {
  boost::system::error_code ec;
  const auto parsed = boost::json::parse(input, ec);
  const auto *call = !ec ? parsed.if_object() : nullptr;
  const auto *tool = call != nullptr ? call->if_contains("tool_name") : nullptr;
  if (tool != nullptr && tool->is_string() &&
      std::find(policy::kFileTools.begin(), policy::kFileTools.end(), tool->get_string()) ==
          policy::kFileTools.end()) {
    return {};
  }
  return {policy::HookAnswer::Decision::deny,
          "the sandbox-host agent policy cannot be loaded, so no file tool may run: " + error};
}

int run_hook(const HookCommandOptions &options) {
  const auto input = read_input();
  policy::HookAnswer answer;
  if (!input) {
    answer = {policy::HookAnswer::Decision::deny,
              "the hook's input is larger than " + std::to_string(kMaxInput) + " bytes"};
  } else {
    std::optional<policy::Policy> loaded;
    std::string error;
    try {
      loaded = policy::load_policy(options.policy_file);
    } catch (const std::exception &e) {
      error = e.what();
    }
    answer = loaded ? policy::decide_pre_tool_use(*loaded, *input, {options.decide_allowed})
                    : answer_without_policy(*input, error);
  }
  std::cout << policy::hook_output(answer) << std::flush;
  if (!std::cout) throw std::runtime_error("cannot write the hook's answer");
  return 0;
}

}  // namespace

Command add_hook_command(CLI::App &app) {
  auto options = std::make_shared<HookCommandOptions>();
  auto *sub = app.add_subcommand(
      "hook",
      "Claude Code's PreToolUse hook for the file tools (Read, Grep, Glob, Edit, MultiEdit, "
      "Write, NotebookEdit): reads the call on stdin, denies a path the agent policy refuses "
      "and any input it cannot read; other tools pass. Exits 2 (Claude Code blocks the call) "
      "when it cannot answer at all");
  sub->add_option("--policy", options->policy_file, "Agent policy file")->capture_default_str();
  sub->add_flag("--decide-allowed", options->decide_allowed,
                "Answer \"allow\" for calls whose every path the policy allows, which skips "
                "Claude Code's own permission rules and prompts for them; by default such calls "
                "get no decision, so those rules (an ask or deny the user set) still apply");
  return {sub, [options] { return run_hook(*options); }};
}

}  // namespace sandbox_host::cli
