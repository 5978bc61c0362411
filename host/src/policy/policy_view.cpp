#include <sandbox_host/host/policy/policy_view.hpp>

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::policy {
namespace {

namespace fs = std::filesystem;

// path's canonical form (symlinks resolved: a rule holds the target), or nullopt when it
// does not exist. Any other failure throws: a rule silently left out could be a hidden one.
std::optional<std::string> existing(const std::string &path, const std::string &entry) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (real) return std::string(real.get());
  if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
  throw std::system_error(errno, std::generic_category(), "resolving " + entry + " " + path);
}

bool strictly_below(const std::string &path, const std::string &top) {
  if (top == "/") return path != "/";
  return path.size() > top.size() && path.starts_with(top) && path[top.size()] == '/';
}

// Every existing path a tool_write entry names: its glob components (*, ?, [..]) matched
// against each directory's entries as the hook matches them (fnmatch, a leading "." too).
std::vector<std::string> matches(const std::string &pattern) {
  std::vector<std::string> found{"/"};
  size_t start = 1;
  while (start <= pattern.size() && !found.empty()) {
    size_t end = pattern.find('/', start);
    if (end == std::string::npos) end = pattern.size();
    const std::string part = pattern.substr(start, end - start);
    start = end + 1;
    if (part.empty()) continue;
    std::vector<std::string> next;
    for (const auto &dir : found) {
      const std::string prefix = dir == "/" ? dir : dir + "/";
      if (part.find_first_of("*?[") == std::string::npos) {
        next.push_back(prefix + part);
        continue;
      }
      std::error_code ec;
      for (fs::directory_iterator it(dir, ec), end_it; !ec && it != end_it; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (::fnmatch(part.c_str(), name.c_str(), 0) == 0) next.push_back(prefix + name);
      }
    }
    found = std::move(next);
  }
  return found;
}

class View {
 public:
  // At most access for path and everything below it: a rule where the longer-prefix rules
  // would give more, and write below it read.
  void cap_at_read(const std::string &path) {
    if (access_at(path) == PathAccess::write) rules_[path] = PathAccess::read;
    for (auto &[below, access] : rules_) {
      if (strictly_below(below, path) && access == PathAccess::write) access = PathAccess::read;
    }
  }

  void grant(const std::string &path, PathAccess access) {
    auto [it, inserted] = rules_.emplace(path, access);
    if (!inserted) it->second = std::max(it->second, access);
  }

  // none for path, and nothing below it re-allowed.
  void deny(const std::string &path) {
    std::erase_if(rules_, [&](const auto &rule) { return strictly_below(rule.first, path); });
    rules_[path] = PathAccess::none;
  }

  std::vector<PathRule> rules() const {
    std::vector<PathRule> out;
    for (const auto &[path, access] : rules_) out.push_back({path, access});
    return out;
  }

 private:
  // What path gets from the longest rule at or above it; the host's file system is readable.
  PathAccess access_at(const std::string &path) const {
    const std::pair<const std::string, PathAccess> *longest = nullptr;
    for (const auto &rule : rules_) {
      if ((rule.first == path || strictly_below(path, rule.first)) &&
          (longest == nullptr || rule.first.size() > longest->first.size())) {
        longest = &rule;
      }
    }
    return longest != nullptr ? longest->second : PathAccess::read;
  }

  std::map<std::string, PathAccess> rules_;
};

}  // namespace

std::vector<PathRule> command_view(const Policy &policy, ViewFor who,
                                   const std::vector<std::string> &hidden) {
  View view;
  auto grant = [&](const std::string &key, const std::string &path, PathAccess access) {
    if (path.empty()) return;
    if (auto real = existing(path, key)) view.grant(*real, access);
  };
  auto grant_all = [&](const std::string &key, const std::vector<std::string> &paths,
                       PathAccess access) {
    for (size_t i = 0; i < paths.size(); ++i) {
      grant(key + "[" + std::to_string(i) + "]", paths[i], access);
    }
  };
  // Home and Runtime are hidden; a longer rule (Read, Write, Egress) opens a path inside.
  // On one path the more open rule wins: a path in Read and Write is written.
  grant("home", policy.home, PathAccess::none);
  grant("runtime", policy.runtime, PathAccess::none);
  grant_all("read", policy.read, PathAccess::read);
  grant("egress", policy.egress, PathAccess::read);
  grant_all("write", policy.write, PathAccess::write);

  // The harness reads its config outside the sandbox, and the file tools write ToolWrite on
  // the policy's behalf: a command leaving a file in either could steer the harness.
  if (!policy.harness.empty()) {
    if (auto real = existing(policy.harness, "harness")) view.cap_at_read(*real);
  }
  // The harness itself, inside the sandbox, writes ToolWrite; nothing tells it apart from
  // the commands it runs there, which write it too.
  for (size_t i = 0; i < policy.tool_write.size(); ++i) {
    const std::string key = "tool_write[" + std::to_string(i) + "]";
    for (const auto &match : matches(policy.tool_write[i])) {
      auto real = existing(match, key);
      if (!real) continue;
      if (who == ViewFor::harness) {
        view.grant(*real, PathAccess::write);
      } else {
        view.cap_at_read(*real);
      }
    }
  }

  for (size_t i = 0; i < policy.deny.size(); ++i) {
    const std::string key = "deny[" + std::to_string(i) + "]";
    auto real = existing(policy.deny[i], key);
    if (!real) {
      throw std::runtime_error(
          (policy.source.empty() ? std::string() : policy.source + ": ") + key + ": \"" +
          policy.deny[i] +
          "\" does not exist, and a sandbox hides only what exists; create it (an empty 0700 "
          "directory will do)");
    }
    view.deny(*real);
  }
  for (const auto &path : hidden) {
    if (auto real = existing(path, "hidden path")) view.deny(*real);
  }
  return view.rules();
}

}  // namespace sandbox_host::policy
