// The policy as Claude Code managed settings (docs/design.md#agent-policy-names):
// a drop-in file of the managed-settings.d directory, which Claude Code merges into its
// managed settings for every session on the machine.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <boost/json/object.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace sandbox_host::policy {

// The policy's file in the managed settings' drop-in directory.
inline constexpr std::string_view kDropIn = "clawpatrol-sandbox.json";

// Claude Code's managed settings directory on this platform: /etc/claude-code on Linux,
// /Library/Application Support/ClaudeCode on macOS.
std::filesystem::path managed_dir();
// managed_dir()/managed-settings.d/kDropIn.
std::filesystem::path drop_in_path(const std::filesystem::path &managed = managed_dir());

// The settings: "sandbox" (enabled, no unsandboxed fallback, filesystem denyRead /
// allowRead / allowWrite / denyWrite, network allowedDomains and the proxy ports), "env"
// (Policy::environment()), a PreToolUse hook for kFileTools running
// `<exe> hook --policy <policy_file>`, and "permissions" deny (hookless_rules, which lists the
// home as it is now). Paths in the settings' own syntax: "~/" below home, "//" for an
// absolute path.
boost::json::object claude_settings(const Policy &policy, const std::filesystem::path &policy_file);
// claude_settings as indented JSON with keys in a fixed order and a final newline: the
// same policy over the same home renders to the same bytes.
std::string render_claude_settings(const Policy &policy, const std::filesystem::path &policy_file);

// Writes the rendered settings to drop_in_path(managed) atomically (a temporary file in the
// same directory, fsync, rename, 0644), creating managed-settings.d (0755) if missing, and
// leaves the file untouched when it holds the same bytes already. Returns whether it wrote.
bool install_drop_in(const Policy &policy, const std::filesystem::path &policy_file,
                     const std::filesystem::path &managed = managed_dir());

}  // namespace sandbox_host::policy
