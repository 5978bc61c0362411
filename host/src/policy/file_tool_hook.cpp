// The PreToolUse decision for the harness's file tools: each path argument of a call held
// to the policy. Input the hook cannot read is denied, never let through: a hook that
// passes what it does not understand is no boundary.
#include <sandbox_host/host/policy/file_tool_hook.hpp>
#include <sandbox_host/host/policy/glob_pattern.hpp>
#include <sandbox_host/host/policy/path_access.hpp>
#include <sandbox_host/host/policy/policy_view.hpp>

#include <boost/algorithm/string/join.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <set>
#include <vector>

namespace sandbox_host::policy {
namespace {

using Decision = HookAnswer::Decision;

enum class Access { read, write };

// One path a call touches: what the input said and what the policy holds it to.
struct ToolPath {
  std::string shown;  // e.g. "Read /home/u/.ssh/id_ed25519", "Glob pattern ../../.ssh/*"
  std::string path;   // the path to decide, as given (relative to cwd, or with "~")
  Access access = Access::read;
  // Grep and Glob read every file below the path, not the path alone.
  bool search = false;
};

HookAnswer deny(std::string reason) {
  return {Decision::deny, std::move(reason)};
}

// A field of tool_input that must be a non-empty string; nullopt (with why in *error)
// when it is missing, of another type or empty.
std::optional<std::string> required_string(const boost::json::object &input,
                                           const std::string &tool, std::string_view key,
                                           std::string &error) {
  const auto *value = input.if_contains(key);
  if (value == nullptr) {
    error = tool + " tool_input has no " + std::string(key);
  } else if (!value->is_string()) {
    error = tool + " tool_input." + std::string(key) + " is not a string";
  } else if (value->get_string().empty()) {
    error = tool + " tool_input." + std::string(key) + " is empty";
  } else {
    return std::string(value->get_string());
  }
  return std::nullopt;
}

// Grep's and Glob's path: optional, the session's working directory when absent.
std::optional<std::string> directory_or_cwd(const boost::json::object &input,
                                            const std::string &tool, const std::string &cwd,
                                            std::string &error) {
  const auto *value = input.if_contains("path");
  if (value == nullptr || value->is_null()) {
    if (!cwd.empty()) return cwd;
    error = tool + " has no path and the input no cwd to search instead";
    return std::nullopt;
  }
  return required_string(input, tool, "path", error);
}

// The paths a file tool's call touches, or why its input cannot be read.
std::optional<std::vector<ToolPath>> tool_paths(const std::string &tool,
                                                const boost::json::object &input,
                                                const std::string &cwd, std::string &error) {
  std::vector<ToolPath> paths;
  auto add = [&](std::optional<std::string> path, Access access, std::string what = {}) {
    if (!path) return false;
    paths.push_back({what.empty() ? tool + " " + *path : what, *path, access, false});
    return true;
  };
  auto add_search = [&](std::optional<std::string> path, std::string what = {}) {
    if (!add(std::move(path), Access::read, std::move(what))) return false;
    paths.back().search = true;
    return true;
  };
  if (tool == "Read") {
    if (!add(required_string(input, tool, "file_path", error), Access::read)) return std::nullopt;
  } else if (tool == "Write" || tool == "Edit" || tool == "MultiEdit") {
    if (!add(required_string(input, tool, "file_path", error), Access::write)) return std::nullopt;
  } else if (tool == "NotebookEdit") {
    if (!add(required_string(input, tool, "notebook_path", error), Access::write)) {
      return std::nullopt;
    }
  } else if (tool == "Grep") {
    if (!add_search(directory_or_cwd(input, tool, cwd, error))) return std::nullopt;
  } else if (tool == "Glob") {
    const auto base = directory_or_cwd(input, tool, cwd, error);
    const auto pattern = required_string(input, tool, "pattern", error);
    if (!base || !pattern) return std::nullopt;
    const auto glob = parse_glob_pattern(*pattern, error);
    if (!glob) return std::nullopt;
    add_search(base);
    // Each directory once, however many alternatives start there.
    std::set<std::string> searched{*base};
    auto add_start = [&](const std::string &start, const std::string &what) {
      if (searched.insert(start).second) add_search(start, what + " (searching " + start + ")");
    };
    const std::string shown = "Glob pattern " + *pattern;
    if (!glob->walk_root.empty()) add_start(glob->walk_root, shown);
    for (const auto &alternative : glob->alternatives) {
      const std::string &directory = alternative.directory;
      if (directory.empty()) continue;
      const std::string what =
          alternative.text == *pattern ? shown : shown + " (alternative " + alternative.text + ")";
      // An absolute alternative replaces the base, as the tool itself does. One starting
      // with "~" is held both as home's and as a directory named "~" below the base.
      add_start(directory.front() == '/' ? directory : *base + "/" + directory, what);
      if (directory == "~" || directory.starts_with("~/")) add_start(directory, what);
    }
  }
  return paths;
}

bool is_within(const std::string &path, const std::string &dir) {
  return path == dir || dir == "/" ||
         (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
          path[dir.size()] == '/');
}

// The first denied region (Home, Runtime, a Deny entry) below a searched directory, with
// its rule; "" when none. A search of an ancestor of Home would read all of it.
std::string denied_below(const Policy &policy, const std::string &resolved_search) {
  auto check = [&](const std::string &region, const std::string &rule) -> std::string {
    if (region.empty()) return "";
    const std::string resolved_region = resolve(policy, region, "/");
    if (resolved_region != resolved_search && is_within(resolved_region, resolved_search)) {
      return rule;
    }
    return "";
  };
  if (auto rule =
          check(policy.home, "Home " + policy.home + " is denied apart from Read and Write");
      !rule.empty()) {
    return rule;
  }
  if (auto rule =
          check(policy.runtime, "Runtime " + policy.runtime + " is denied apart from Egress");
      !rule.empty()) {
    return rule;
  }
  for (const auto &path : policy.deny) {
    if (auto rule = check(path, "Deny " + path); !rule.empty()) return rule;
  }
  return "";
}

std::string policy_name(const Policy &policy) {
  return policy.source.empty() ? "sandbox-host agent policy"
                               : "sandbox-host agent policy " + policy.source;
}

// Bash, which Claude Code's sandbox holds, but whose write list that sandbox seeds with the
// session's working directory whatever the policy says: a session started outside what the
// policy lets commands write (the home, above all) would give every command that directory.
HookAnswer decide_bash(const Policy &policy, const std::string &cwd) {
  if (cwd.empty() || cwd.front() != '/') {
    return deny(
        "Bash: the hook's input has no absolute cwd, so the session's working "
        "directory cannot be checked (" +
        policy_name(policy) + ")");
  }
  try {
    const std::string resolved = resolve(policy, cwd, cwd);
    PathAccess access = PathAccess::read;  // anywhere else
    std::size_t longest = 0;
    for (const PathRule &rule : command_view(policy)) {
      if (is_within(resolved, rule.path) && rule.path.size() >= longest) {
        longest = rule.path.size();
        access = rule.access;
      }
    }
    if (access == PathAccess::write) return {};
    const std::string inside = boost::algorithm::join(policy.write, ", ");
    const std::string where = resolved == cwd ? cwd : cwd + " (" + resolved + ")";
    return deny(
        "Bash: this session runs in " + where +
        ", which the policy does not let commands write, and Claude Code's sandbox "
        "makes a session's working directory writable to every command whatever the "
        "policy says; start the session inside " +
        (inside.empty() ? std::string("a Write path (the policy has none)") : "one of: " + inside) +
        " (" + policy_name(policy) + ")");
  } catch (const std::exception &e) {
    return deny("Bash: cannot check the session's working directory " + cwd + ": " + e.what() +
                " (" + policy_name(policy) + ")");
  }
}

}  // namespace

HookAnswer decide_pre_tool_use(const Policy &policy, std::string_view input,
                               const HookOptions &options) {
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(input, ec);
  if (ec) return deny("the hook's input is not JSON: " + ec.message());
  if (!parsed.is_object()) return deny("the hook's input is not a JSON object");
  const auto &call = parsed.get_object();

  const auto *event = call.if_contains("hook_event_name");
  if (event == nullptr || !event->is_string()) {
    return deny("the hook's input has no hook_event_name string");
  }
  if (event->get_string() != "PreToolUse") {
    return deny("the hook answers PreToolUse, not " + std::string(event->get_string()));
  }
  const auto *tool_value = call.if_contains("tool_name");
  if (tool_value == nullptr || !tool_value->is_string()) {
    return deny("the hook's input has no tool_name string");
  }
  const std::string tool(tool_value->get_string());
  const bool file_tool = std::find(kFileTools.begin(), kFileTools.end(), tool) != kFileTools.end();
  if (!file_tool && tool != kBashTool) return {};

  std::string cwd;
  if (const auto *value = call.if_contains("cwd")) {
    if (!value->is_string()) return deny(tool + ": the hook's input has a cwd that is no string");
    cwd = std::string(value->get_string());
  }
  if (!file_tool) return decide_bash(policy, cwd);
  const auto *tool_input = call.if_contains("tool_input");
  if (tool_input == nullptr || !tool_input->is_object()) {
    return deny(tool + ": the hook's input has no tool_input object");
  }

  std::string error;
  const auto paths = tool_paths(tool, tool_input->get_object(), cwd, error);
  if (!paths) return deny(error);
  std::string allowed_by;
  for (const auto &tool_path : *paths) {
    try {
      if (tool_path.path.front() != '/' && tool_path.path.front() != '~' &&
          (cwd.empty() || cwd.front() != '/')) {
        return deny(tool_path.shown + ": a relative path, and the input has no absolute cwd");
      }
      const Verdict verdict = tool_path.access == Access::read
                                  ? readable(policy, tool_path.path, cwd)
                                  : writable(policy, tool_path.path, cwd);
      const std::string resolved = resolve(policy, tool_path.path, cwd);
      const std::string where =
          resolved == tool_path.path ? tool_path.shown : tool_path.shown + " (" + resolved + ")";
      if (!verdict.allowed) {
        return deny(where + ": denied: " + verdict.rule + " (" + policy_name(policy) + ")");
      }
      if (tool_path.search) {
        if (const auto rule = denied_below(policy, resolved); !rule.empty()) {
          return deny(where + ": denied: the search would read below it, where " + rule + " (" +
                      policy_name(policy) + ")");
        }
      }
      if (!allowed_by.empty()) allowed_by += "; ";
      allowed_by += where + ": allowed: " + verdict.rule;
    } catch (const std::exception &e) {
      return deny(tool_path.shown + ": cannot check the path: " + e.what());
    }
  }
  if (!options.decide_allowed) return {};
  return {Decision::allow, allowed_by + " (" + policy_name(policy) + ")"};
}

std::string hook_output(const HookAnswer &answer) {
  if (answer.decision == Decision::pass) return "";
  boost::json::object specific{{"hookEventName", "PreToolUse"}};
  specific["permissionDecision"] = answer.decision == Decision::deny ? "deny" : "allow";
  specific["permissionDecisionReason"] = answer.reason;
  boost::json::object output;
  output["hookSpecificOutput"] = std::move(specific);
  return boost::json::serialize(output) + "\n";
}

}  // namespace sandbox_host::policy
