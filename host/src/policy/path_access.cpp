// The file-tool hook's checks (docs/agent-policy.md): a path resolved as the
// kernel would open it, held to the policy's entries resolved the same way.
//
// No check made here is free of TOCTOU: the hook resolves a path, answers, and the harness
// opens it later, by which time a symlink on the way may have been replaced. The hook keeps
// honest users and the model's mistakes out of paths the policy denies; it is no boundary
// against a process racing it. The sandbox (sandbox-host run --policy, or the harness's own)
// is that boundary for commands.
#include <sandbox_host/host/policy/path_access.hpp>

#include <fnmatch.h>
#include <sys/stat.h>

#include <cerrno>
#include <deque>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

namespace sandbox_host::policy {
namespace {

// Symlinks followed in one resolution before it fails, as the kernel's MAXSYMLINKS.
constexpr int kMaxSymlinks = 40;

using Components = std::vector<std::string>;

// path's components, "" and "." dropped ("/a//./b/" is {"a", "b"}); ".." kept.
Components split(std::string_view path) {
  Components out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") out.emplace_back(part);
    start = end + 1;
  }
  return out;
}

std::string join(const Components &parts) {
  std::string out;
  for (const auto &part : parts) (out += '/') += part;
  return out.empty() ? "/" : out;
}

// An absolute path's components resolved as the kernel walks them: ".." the parent of what
// is resolved so far (so link/.. is the link target's parent), each symlink replaced by its
// target, a dangling one too (a write through it creates the target), the part that does
// not exist kept as written. Throws std::system_error(ELOOP) past kMaxSymlinks links.
Components resolve_components(std::string_view absolute) {
  Components resolved;
  Components initial = split(absolute);
  std::deque<std::string> pending(initial.begin(), initial.end());
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part == "..") {
      if (!resolved.empty()) resolved.pop_back();
      continue;
    }
    resolved.push_back(std::move(part));
    const std::string current = join(resolved);
    struct stat status {};
    // Anything lstat cannot see (missing, a file's "child", a directory this user cannot
    // search) is no symlink the harness could follow either.
    if (::lstat(current.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) continue;
    if (++links > kMaxSymlinks) {
      throw std::system_error(ELOOP, std::generic_category(), "resolving " + std::string(absolute));
    }
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(current, ec).string();
    if (ec) throw std::system_error(ec, "reading the symbolic link " + current);
    resolved.pop_back();
    if (!target.empty() && target.front() == '/') resolved.clear();
    Components next = split(target);
    pending.insert(pending.begin(), next.begin(), next.end());
  }
  return resolved;
}

Components resolve_path(const Policy &policy, const std::string &path, const std::string &cwd) {
  if (path.empty()) throw std::invalid_argument("an empty path");
  if (path.find('\0') != std::string::npos) throw std::invalid_argument("a path holding a NUL");
  std::string absolute = path;
  if (path == "~" || path.starts_with("~/")) {
    if (policy.home.empty()) throw std::invalid_argument(path + " with no home in the policy");
    absolute = policy.home + path.substr(1);
  } else if (path.front() != '/') {
    if (cwd.empty() || cwd.front() != '/') {
      throw std::invalid_argument("the relative path " + path + " with the working directory \"" +
                                  cwd + "\", which is not absolute");
    }
    absolute = cwd + "/" + path;
  }
  return resolve_components(absolute);
}

// A policy entry as paths are compared with it: resolved the same way, up to its first glob
// component (tool_write's), which is matched against the path's component at its place.
struct Entry {
  std::string label;   // the rule as the verdict names it: "Write /home/u/src"
  Components literal;  // resolved components before the first glob
  Components globs;    // the rest, each an fnmatch pattern or a literal
};

bool has_glob(std::string_view part) {
  return part.find_first_of("*?[") != std::string::npos;
}

Entry entry(std::string_view kind, const std::string &path) {
  Entry out{std::string(kind) + " " + path, {}, {}};
  Components parts = split(path);
  size_t first_glob = 0;
  while (first_glob < parts.size() && !has_glob(parts[first_glob])) ++first_glob;
  Components prefix(parts.begin(), parts.begin() + static_cast<long>(first_glob));
  try {
    out.literal = resolve_components(join(prefix));
  } catch (const std::system_error &) {
    // A loop in the policy's own entry: compared as written, which is what the entry says.
    out.literal = prefix;
  }
  out.globs.assign(parts.begin() + static_cast<long>(first_glob), parts.end());
  return out;
}

// Whether path is the entry's path or below it.
bool under(const Components &path, const Entry &rule) {
  if (path.size() < rule.literal.size() + rule.globs.size()) return false;
  for (size_t i = 0; i < rule.literal.size(); ++i) {
    if (path[i] != rule.literal[i]) return false;
  }
  // Component by component: without FNM_PATHNAME a "*" would match across "/".
  for (size_t i = 0; i < rule.globs.size(); ++i) {
    const std::string &part = path[rule.literal.size() + i];
    if (::fnmatch(rule.globs[i].c_str(), part.c_str(), 0) != 0) return false;
  }
  return true;
}

// The first entry of paths that path is under, as its rule's label.
std::optional<std::string> first_under(const Components &path, std::string_view kind,
                                       const std::vector<std::string> &paths) {
  for (const auto &each : paths) {
    Entry rule = entry(kind, each);
    if (under(path, rule)) return rule.label;
  }
  return std::nullopt;
}

std::optional<std::string> under_one(const Components &path, std::string_view kind,
                                     const std::string &each) {
  if (each.empty()) return std::nullopt;
  return first_under(path, kind, {each});
}

// path resolved, or the verdict refusing it when it cannot be (a symlink loop).
std::optional<Components> resolved_or(const Policy &policy, const std::string &path,
                                      const std::string &cwd, Verdict &refusal) {
  try {
    return resolve_path(policy, path, cwd);
  } catch (const std::system_error &e) {
    refusal = {false, e.what()};
    return std::nullopt;
  }
}

}  // namespace

std::string resolve(const Policy &policy, const std::string &path, const std::string &cwd) {
  return join(resolve_path(policy, path, cwd));
}

Verdict readable(const Policy &policy, const std::string &path, const std::string &cwd) {
  Verdict refusal;
  const auto resolved = resolved_or(policy, path, cwd, refusal);
  if (!resolved) return refusal;
  if (auto rule = first_under(*resolved, "Deny", policy.deny)) return {false, *rule};
  for (const auto &[kind, paths] :
       {std::pair{"Read", &policy.read}, std::pair{"Write", &policy.write},
        std::pair{"ToolWrite", &policy.tool_write}}) {
    if (auto rule = first_under(*resolved, kind, *paths)) return {true, *rule};
  }
  if (auto rule = under_one(*resolved, "Egress", policy.egress)) return {true, *rule};
  if (under_one(*resolved, "Home", policy.home)) {
    return {false, "Home " + policy.home + " is denied apart from Read and Write"};
  }
  if (under_one(*resolved, "Runtime", policy.runtime)) {
    return {false, "Runtime " + policy.runtime + " is denied apart from Egress"};
  }
  return {true, "outside Home and Runtime"};
}

// Neither the temporary directory nor the session's working directory is writable by itself,
// as an earlier rule made them: with Claude Code started in /, that rule let the file tools
// write /etc. The policy lists what is writable, in Write and ToolWrite.
Verdict writable(const Policy &policy, const std::string &path, const std::string &cwd) {
  Verdict refusal;
  const auto resolved = resolved_or(policy, path, cwd, refusal);
  if (!resolved) return refusal;
  if (auto rule = first_under(*resolved, "Deny", policy.deny)) return {false, *rule};
  if (auto rule = first_under(*resolved, "ToolWrite", policy.tool_write)) return {true, *rule};
  if (auto rule = first_under(*resolved, "Write", policy.write)) {
    // The harness reads its config outside any sandbox: the file tools write there only
    // what ToolWrite names.
    if (under_one(*resolved, "Harness", policy.harness)) {
      return {false,
              "Harness " + policy.harness + " is written by the file tools only through ToolWrite"};
    }
    return {true, *rule};
  }
  return {false, "not under Write or ToolWrite"};
}

}  // namespace sandbox_host::policy
