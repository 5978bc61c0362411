// A machine for the agent-hook tests, on disk: a temporary root holding a home directory
// with a project, secrets, the harness's config and a state directory, a runtime directory
// with the egress directory, a directory outside both, and a policy file over them.
#pragma once

#include "fixtures.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <Poco/JSON/Object.h>

#include <filesystem>
#include <string>

namespace sandbox_host::agent_hook_test {

class AgentTree {
 public:
  AgentTree();

  // root()/relative, as a string.
  std::string at(const std::string &relative) const { return (root_ / relative).string(); }
  const std::filesystem::path &root() const noexcept { return root_; }
  std::string home() const { return at("home/u"); }
  // The policy file (TOML) written by write_policy().
  std::string policy_file() const { return at("agent-policy.toml"); }

  // Writes root()/relative with its parent directories.
  void file(const std::string &relative, const std::string &contents = "x") const;
  // Makes root()/relative a symbolic link to target, as written.
  void link(const std::string &relative, const std::string &target) const;

  // home/u denied apart from:
  //   read       home/u/.gitconfig
  //   write      home/u/src, home/u/.claude/projects
  //   deny       home/u/src/.state/scan
  //   harness    home/u/.claude
  //   tool_write home/u/.claude/projects/*/memory, home/u/.plans
  //   runtime    run/user apart from egress run/user/egress
  // domains github.com and *.github.com, proxy port 3128, exe /opt/sandbox-host/bin/sandbox-host
  // and vars GOFLAGS=-mod=mod.
  std::string policy_toml() const;
  // policy_toml() (or toml) into policy_file().
  void write_policy(const std::string &toml) const;
  void write_policy() const { write_policy(policy_toml()); }

 private:
  sandbox_host::test::TempFile temp_;
  std::filesystem::path root_;
};

// A PreToolUse call as Claude Code writes it on the hook's stdin.
std::string pre_tool_use(const std::string &tool, const Poco::JSON::Object &tool_input,
                         const std::string &cwd);

// What `sandbox-host hook` answered.
struct HookReply {
  int code = -1;
  std::string out, err;
  std::string decision;  // "deny", "allow", or "" for no decision
  std::string reason;
};
// Runs the real sandbox-host hook with input on its stdin.
HookReply run_hook(const std::string &policy_file, const std::string &input,
                   const std::vector<std::string> &extra = {});

}  // namespace sandbox_host::agent_hook_test
