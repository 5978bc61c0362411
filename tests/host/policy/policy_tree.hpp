// A home directory on disk for the policy tests: a temporary root holding home/u with a
// project, a secret, the harness's config and a state directory, a runtime directory with
// the egress directory, a directory outside both, and a policy over them.
#pragma once

#include "fixtures.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <filesystem>
#include <string>

namespace sandbox_host::policy::test {

class PolicyTree {
 public:
  PolicyTree();

  // root()/relative, as a string.
  std::string at(const std::string &relative) const { return (root_ / relative).string(); }
  const std::filesystem::path &root() const noexcept { return root_; }

  // Creates root()/relative as a directory, with its parents.
  void dir(const std::string &relative) const;
  // Writes root()/relative, with its parent directories.
  void file(const std::string &relative, const std::string &contents = "x") const;
  // Makes root()/relative a symbolic link to target, as written.
  void link(const std::string &relative, const std::string &target) const;

  // home/u, denied apart from:
  //   read       home/u/.config/tool, home/u/.claude
  //   write      home/u/src, home/u/.state, home/u/.claude/projects
  //   deny       home/u/.state/scan
  //   harness    home/u/.claude
  //   tool_write home/u/.claude/projects/*/memory
  //   runtime    run/user, apart from egress run/user/clawpatrol-sandbox/egress
  Policy policy;

 private:
  sandbox_host::test::TempFile temp_;
  std::filesystem::path root_;
};

}  // namespace sandbox_host::policy::test
