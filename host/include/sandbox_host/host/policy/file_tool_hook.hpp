// `sandbox-host hook`: Claude Code's PreToolUse hook for the file tools
// (docs/design.md#agent-policy-names). Reads the hook's JSON input, holds each path argument of a
// file tool to the policy (reads by readable(), writes by writable()) and answers in the hook
// protocol. Bash is answered too: refused in a session whose working directory the policy does not
// let commands write, since Claude Code's sandbox makes that directory writable to them.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::policy {

struct HookAnswer {
  enum class Decision {
    pass,   // not a file tool, or every path allowed: no permission decision
    allow,  // every path allowed, and the hook was asked to decide allowed calls too
    deny,   // a path the policy refuses, or input the hook cannot read
  };
  Decision decision = Decision::pass;
  // Names the tool, the path and the rule (or what was wrong with the input).
  std::string reason;
};

struct HookOptions {
  // Answer "allow" for calls whose every path the policy allows (skipping Claude Code's own
  // permission prompt); by default they get no decision.
  bool decide_allowed = false;
};

// Decides one PreToolUse input (the JSON Claude Code writes on the hook's stdin).
HookAnswer decide_pre_tool_use(const Policy &policy, std::string_view input,
                               const HookOptions &options = {});
// The answer as the hook protocol's JSON line
// ({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":...,
// "permissionDecisionReason":...}}), "" for a pass without a reason to give.
std::string hook_output(const HookAnswer &answer);

}  // namespace sandbox_host::policy
