// The paths a policy re-allows (read, write, tool_write, egress) inside a region it denies
// (home, runtime), for the managed deny rules that stand in for the hook where it does not
// run: a deny rule wins over every allow, so none may reach a re-allowed path.
//
// A path and every entry are compared both as written and with their symlinks resolved (as
// the hook resolves them), so that a path reaching a re-allowed entry through a symlink, or
// an entry named through one, counts as re-allowed too; a tool_write glob component matches
// by fnmatch, as the hook matches it.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::policy {

struct ReallowedMatch {
  // The entry the path lies at or below, named "write[0] /home/u/src".
  std::optional<std::string> covering;
  // The entries that lie strictly below the path.
  std::vector<std::string> below;
};

class ReallowedPaths {
 public:
  // An entry strictly above region does not count: inside the region the region is the
  // longer entry, which decides (write = ["/home"] re-allows nothing of home /home/u); one
  // equal to the region re-allows it whole.
  ReallowedPaths(const Policy &policy, const std::string &region);

  // path is absolute; a loop among its symlinks leaves it compared as written.
  ReallowedMatch match(const std::string &path) const;

 private:
  // A path's components; those from `literal` on are tool_write's fnmatch patterns.
  struct Form {
    std::vector<std::string> parts;
    std::size_t literal = 0;
  };
  struct Entry {
    std::string label;
    std::vector<Form> forms;  // as written, and resolved where that differs
  };

  // path as written and resolved; with globs, its components from the first holding *, ? or
  // [ are patterns, left unresolved.
  std::vector<Form> forms(const std::string &path, bool globs) const;
  // Whether form and path agree on every component both have.
  static bool prefix_matches(const Form &form, const std::vector<std::string> &path);

  const Policy &policy_;
  std::vector<Entry> entries_;
};

}  // namespace sandbox_host::policy
