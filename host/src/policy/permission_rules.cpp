#include <sandbox_host/host/policy/credential_paths.hpp>
#include <sandbox_host/host/policy/permission_rules.hpp>
#include <sandbox_host/host/policy/reallowed_paths.hpp>

#include <boost/algorithm/string/join.hpp>

#include <algorithm>
#include <string_view>
#include <unordered_set>

namespace sandbox_host::policy {
namespace {

bool at_or_below(const std::string &path, const std::string &dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) &&
                         (dir == "/" || path[dir.size()] == '/'));
}

// The literal directory a tool_write entry names before its first glob component.
std::string literal_prefix(const std::string &pattern) {
  const size_t glob = pattern.find_first_of("*?[");
  if (glob == std::string::npos) return pattern;
  const size_t slash = pattern.rfind('/', glob);
  return slash == 0 ? "/" : pattern.substr(0, slash);
}

// The tool_write entries that may match at or below dir, each named by its entry
// ("tool_write[0] /home/u/.claude/plans"): a glob's literal directory above dir may match
// inside it too.
std::vector<std::string> tool_write_inside(const Policy &policy, const std::string &dir) {
  std::vector<std::string> found;
  for (size_t i = 0; i < policy.tool_write.size(); ++i) {
    const std::string prefix = literal_prefix(policy.tool_write[i]);
    const bool glob = prefix != policy.tool_write[i];
    if (at_or_below(prefix, dir) || (glob && at_or_below(dir, prefix))) {
      found.push_back("tool_write[" + std::to_string(i) + "] " + policy.tool_write[i]);
    }
  }
  return found;
}

// What in Claude Code's config directory steers later sessions: settings and hooks,
// instructions, commands, agents, skills, plugins (which run outside its sandbox).
constexpr std::string_view kHarnessConfig[] = {
    "settings.json", "settings.local.json", "CLAUDE.md", "commands", "agents",
    "skills",        "output-styles",       "plugins",   "rules",    "hooks"};

std::string joined(const std::vector<std::string> &items) {
  return boost::algorithm::join(items, ", ");
}

// tools ("Read", "Edit") denied at and below path, or the reason they are not; whether
// they are. A rule may come twice (a deny entry the walk lists too); hookless_rules drops
// the later one.
bool deny(HooklessRules &out, const std::vector<std::string_view> &tools, const std::string &entry,
          const std::string &path, const std::vector<std::string> &inside) {
  std::string what;
  for (const auto tool : tools) what += (what.empty() ? "" : " and ") + std::string(tool);
  if (!inside.empty()) {
    out.unheld.push_back(what + " below " + entry + " " + path +
                         ": the policy re-allows paths inside it (" + joined(inside) +
                         "), and a managed deny rule would win over them");
    return false;
  }
  if (path.find_first_of("*?[]{}()\\!") != std::string::npos) {
    out.unheld.push_back(what + " below " + entry + " " + path +
                         ": the path holds a character the rules read as a pattern");
    return false;
  }
  for (const auto tool : tools) {
    for (const auto &pattern : {"/" + path, "/" + path + "/**"}) {
      out.deny.push_back(std::string(tool) + "(" + pattern + ")");
    }
  }
  return true;
}

// Read and Edit denied below each part of home and runtime that holds nothing re-allowed;
// the paths denied go to closed.
void deny_regions(HooklessRules &out, const Policy &policy, const WalkBounds &bounds,
                  std::vector<std::string> &closed) {
  for (const auto &[what, region] : {std::pair{std::string("home"), &policy.home},
                                     std::pair{std::string("runtime"), &policy.runtime}}) {
    RegionWalk walk = walk_region(policy, what, *region, bounds);
    for (const auto &path : walk.closed) {
      if (deny(out, {"Read", "Edit"}, path == *region ? what : what + "'s entry", path, {})) {
        closed.push_back(path);
      }
    }
    out.unheld.insert(out.unheld.end(), walk.open.begin(), walk.open.end());
  }
}

// The credential paths (credential_paths.hpp) that no rule denies yet and the policy does not
// re-allow, existing or not.
void deny_credentials(HooklessRules &out, const Policy &policy,
                      const std::vector<std::string> &closed) {
  const ReallowedPaths reallowed(policy, policy.home);
  for (const auto relative : kCredentialPaths) {
    const std::string path = policy.home + "/" + std::string(relative);
    if (std::any_of(closed.begin(), closed.end(),
                    [&](const std::string &denied) { return at_or_below(path, denied); })) {
      continue;
    }
    const auto found = reallowed.match(path);
    if (!found.covering) deny(out, {"Read", "Edit"}, "credential path", path, found.below);
  }
}

// rules without repeats, in their order: a set, since a listed home makes thousands.
std::vector<std::string> first_of_each(const std::vector<std::string> &rules) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (const auto &rule : rules) {
    if (seen.insert(rule).second) out.push_back(rule);
  }
  return out;
}

}  // namespace

HooklessRules hookless_rules(const Policy &policy, const WalkBounds &bounds) {
  HooklessRules out;
  for (size_t i = 0; i < policy.deny.size(); ++i) {
    deny(out, {"Read", "Edit"}, "deny[" + std::to_string(i) + "]", policy.deny[i], {});
  }
  std::vector<std::string> closed;
  deny_regions(out, policy, bounds, closed);
  deny_credentials(out, policy, closed);
  if (!policy.harness.empty()) {
    const auto inside = tool_write_inside(policy, policy.harness);
    deny(out, {"Edit"}, "harness", policy.harness, inside);
    if (!inside.empty()) {
      // The harness's own config entries at least, and its global config file beside it
      // (~/.claude.json holds MCP servers): a file tool writing one steers every later
      // session.
      std::vector<std::string> config;
      for (const auto name : kHarnessConfig)
        config.push_back(policy.harness + "/" + std::string(name));
      config.push_back(policy.harness + ".json");
      for (const auto &path : config) {
        // write never re-allows inside the harness, which holds inside every allow.
        deny(out, {"Edit"}, "harness config", path, tool_write_inside(policy, path));
      }
    }
  }
  out.unheld.push_back(
      "Edit anywhere outside the write and tool_write entries: no rule can say \"everywhere "
      "but these\"; the file's own permissions decide");
  // Claude Code's sandbox adds the working directory to its write list whatever the
  // settings say, and its denyWrite binds only inside that list; home in denyWrite, and an
  // Edit rule (which Claude Code adds to denyWrite), leave a session started there without
  // Bash, its bwrap unable to set itself up in a read-only directory, but nothing reaches a
  // directory made in the home later or one outside it.
  out.unheld.push_back(
      "Bash in a session started in a directory outside the write entries, "
      "other than home " +
      policy.home +
      " itself and the paths the rules above deny: Claude Code's sandbox "
      "makes the session's working directory writable (and readable) to "
      "every command, and only the hook refuses that session's Bash");
  out.deny = first_of_each(out.deny);
  return out;
}

}  // namespace sandbox_host::policy
