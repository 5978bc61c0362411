#include <sandbox_host/host/policy/permission_rules.hpp>

#include <boost/algorithm/string/join.hpp>

#include <algorithm>
#include <string_view>

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

// The re-allowed paths at or below dir, each named by its entry ("write[0] /home/u/src").
std::vector<std::string> reallowed_inside(const Policy &policy, const std::string &dir,
                                          bool reads_too) {
  std::vector<std::string> found;
  auto scan = [&](std::string_view key, const std::vector<std::string> &paths, bool literal) {
    for (size_t i = 0; i < paths.size(); ++i) {
      // A glob's literal directory above dir may match inside it; a literal path above dir
      // re-allows nothing inside (the longer dir wins there).
      const std::string path = literal ? paths[i] : literal_prefix(paths[i]);
      if (at_or_below(path, dir) || (!literal && at_or_below(dir, path))) {
        found.push_back(std::string(key) + "[" + std::to_string(i) + "] " + paths[i]);
      }
    }
  };
  if (reads_too) {
    scan("read", policy.read, true);
    scan("write", policy.write, true);
    if (!policy.egress.empty() && at_or_below(policy.egress, dir)) {
      found.push_back("egress " + policy.egress);
    }
  }
  scan("tool_write", policy.tool_write, false);
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

// tools ("Read", "Edit") denied at and below path, or the reason they are not.
void deny(HooklessRules &out, const std::vector<std::string_view> &tools, const std::string &entry,
          const std::string &path, const std::vector<std::string> &inside) {
  std::string what;
  for (const auto tool : tools) what += (what.empty() ? "" : " and ") + std::string(tool);
  if (!inside.empty()) {
    out.unheld.push_back(what + " below " + entry + " " + path +
                         ": the policy re-allows paths inside it (" + joined(inside) +
                         "), and a managed deny rule would win over them");
    return;
  }
  if (path.find_first_of("*?[]{}()\\!") != std::string::npos) {
    out.unheld.push_back(what + " below " + entry + " " + path +
                         ": the path holds a character the rules read as a pattern");
    return;
  }
  for (const auto tool : tools) {
    for (const auto &pattern : {"/" + path, "/" + path + "/**"}) {
      const std::string rule = std::string(tool) + "(" + pattern + ")";
      if (std::find(out.deny.begin(), out.deny.end(), rule) == out.deny.end()) {
        out.deny.push_back(rule);
      }
    }
  }
}

}  // namespace

HooklessRules hookless_rules(const Policy &policy) {
  HooklessRules out;
  for (size_t i = 0; i < policy.deny.size(); ++i) {
    deny(out, {"Read", "Edit"}, "deny[" + std::to_string(i) + "]", policy.deny[i], {});
  }
  deny(out, {"Read", "Edit"}, "home", policy.home, reallowed_inside(policy, policy.home, true));
  if (!policy.runtime.empty()) {
    deny(out, {"Read", "Edit"}, "runtime", policy.runtime,
         reallowed_inside(policy, policy.runtime, true));
  }
  if (!policy.harness.empty()) {
    const auto inside = reallowed_inside(policy, policy.harness, false);
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
        deny(out, {"Edit"}, "harness config", path, reallowed_inside(policy, path, false));
      }
    }
  }
  out.unheld.push_back(
      "Edit anywhere outside the write and tool_write entries: no rule can say \"everywhere "
      "but these\"; the file's own permissions decide");
  // Claude Code's sandbox adds the working directory to its write list whatever the
  // settings say, and its denyWrite binds only inside that list; home in denyWrite leaves a
  // session in the home itself without Bash, but no key reaches a directory below or
  // outside it.
  out.unheld.push_back(
      "Bash in a session started in a directory outside the write entries, "
      "other than home " +
      policy.home +
      " itself: Claude Code's sandbox makes the session's working directory "
      "writable (and readable) to every command, and only the hook refuses "
      "that session's Bash");
  return out;
}

}  // namespace sandbox_host::policy
