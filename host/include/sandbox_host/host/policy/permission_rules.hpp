// The part of a policy that Claude Code's managed permission rules can hold without the
// hook: sessions that run no hooks (`claude --bare`, CLAUDE_CODE_SIMPLE=1) still obey
// managed permissions.deny, but a deny rule wins over every allow rule, so a region the
// policy denies apart from paths it re-allows inside is written as rules on its entries as
// they are when the rules are made.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/region_walk.hpp>

#include <string>
#include <vector>

namespace sandbox_host::policy {

struct HooklessRules {
  // permissions.deny entries: "Read(//abs)", "Read(//abs/**)", "Edit(//abs)",
  // "Edit(//abs/**)", absolute so that a session's HOME cannot move them.
  std::vector<std::string> deny;
  // One line for each part of the policy the rules leave to the hook, naming the entry and
  // why: what a session without hooks may do that the policy forbids.
  std::vector<std::string> unheld;
};

// Read and Edit are denied below each deny entry; below home and runtime whole when the
// policy re-allows nothing inside (read, write, tool_write, egress), else below each of
// their entries, as they exist now, that holds nothing re-allowed (region_walk.hpp), with a
// line for each part the walk leaves open, an entry made later among them; below each
// credential path of the home (credential_paths.hpp), existing or not, that the policy does
// not re-allow. Edit below harness unless a tool_write entry lies inside, and then below
// each of the harness's config entries (settings.json, CLAUDE.md, commands, agents, skills,
// plugins, ...) and its global config file (harness + ".json", Claude Code's ~/.claude.json)
// that no entry re-allows. No rule of a walk or of a credential path names a re-allowed path
// or one above it. A path holding a character the rules' globs read (*?[]{}()\!) is left
// unheld rather than written as a pattern it is not. Two parts are always unheld: Edit
// outside the write entries, and Bash in a session started outside them anywhere but the
// home itself.
HooklessRules hookless_rules(const Policy &policy, const WalkBounds &bounds = {});

}  // namespace sandbox_host::policy
