// Whether a path may be read or written under a policy, with the rule that decided it, for
// the file-tool hook's answers.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <string>

namespace sandbox_host::policy {

struct Verdict {
  bool allowed = false;
  // The rule that decided, e.g. "Write /home/u/src", "Deny /home/u/.state/scan",
  // "Home /home/u is denied apart from Read and Write", "outside Home and Runtime".
  std::string rule;
};

// path made absolute against cwd (a leading "~" or "~/" is policy.home), "." and ".."
// removed, trailing slashes dropped and every symlink of its existing part resolved; the
// part that does not exist yet is kept as written. Throws std::invalid_argument for an
// empty path, a NUL, or a relative path with an empty or relative cwd, and
// std::system_error (ELOOP) past 40 symbolic links, which readable() and writable() answer
// as denied, with the error as the rule.
std::string resolve(const Policy &policy, const std::string &path, const std::string &cwd);

// Whether the harness's file tools may read path: not under Deny, and outside Home and
// Runtime, or under Read, Write, ToolWrite or Egress.
Verdict readable(const Policy &policy, const std::string &path, const std::string &cwd);
// Whether the harness's file tools may write path: not under Deny, and under ToolWrite, or
// under Write but not under Harness.
Verdict writable(const Policy &policy, const std::string &path, const std::string &cwd);

}  // namespace sandbox_host::policy
