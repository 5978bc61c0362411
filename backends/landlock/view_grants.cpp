#include "view_grants.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <set>

namespace sandbox_host::landlock {
namespace {

constexpr uint64_t kReadExecute = kFsExecute | kFsReadFile | kFsReadDir;

using Rules = std::map<std::string, PathAccess>;

// The view's rules over the implicit ones: "/" readable, /proc and /dev not.
Rules rules_of(const std::vector<PathRule> &view) {
  Rules rules{{"/", PathAccess::read}, {"/proc", PathAccess::none}, {"/dev", PathAccess::none}};
  for (const PathRule &rule : view) rules[rule.path] = rule.access;
  return rules;
}

bool is_below(const std::string &path, const std::string &dir) {
  if (dir == "/") return path.size() > 1 && path.front() == '/';
  return path.size() > dir.size() + 1 && path.starts_with(dir) && path[dir.size()] == '/';
}

std::string child_of(const std::string &dir, const std::string &name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// The entry of dir that path (below dir) lies in or is.
std::string way_to(const std::string &dir, const std::string &path) {
  const size_t start = dir == "/" ? 1 : dir.size() + 1;
  return child_of(dir, path.substr(start, path.find('/', start) - start));
}

struct DirCloser {
  void operator()(DIR *dir) const { ::closedir(dir); }
};

// The names in dir but symlinks; none when it cannot be listed.
std::vector<std::string> entries_but_symlinks(const std::string &dir) {
  std::vector<std::string> names;
  const std::unique_ptr<DIR, DirCloser> stream(::opendir(dir.c_str()));
  if (!stream) return names;
  while (const dirent *entry = ::readdir(stream.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (::fstatat(::dirfd(stream.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
    }
    if (type != DT_LNK) names.push_back(name);
  }
  return names;
}

class ViewWalk {
 public:
  ViewWalk(const std::vector<PathRule> &view, const AbiRights &rights)
      : rules_(rules_of(view)), rights_(rights) {}

  std::vector<Grant> grants() && {
    visit("/", rules_.at("/"), PathAccess::none);
    return std::move(grants_);
  }

 private:
  // path at access, under an ancestor's whole grant of covered (none without one).
  void visit(const std::string &path, PathAccess access, PathAccess covered) {
    std::set<std::string> ways;
    bool lower_below = false;
    for (const auto &[rule_path, rule_access] : rules_) {
      if (!is_below(rule_path, path)) continue;
      ways.insert(way_to(path, rule_path));
      lower_below = lower_below || rule_access < access;
    }
    if (access <= covered) {
      // Nothing to add here; a rule below may still give more.
      visit_ways(ways, access, covered);
    } else if (!lower_below) {
      grants_.push_back({path, rights_of(access)});
      visit_ways(ways, access, access);
    } else {
      // A right granted on path would reach the rule of less access: its entries instead.
      for (const std::string &name : entries_but_symlinks(path)) {
        const std::string entry = child_of(path, name);
        if (!ways.contains(entry)) grants_.push_back({entry, rights_of(access)});
      }
      visit_ways(ways, access, covered);
    }
  }

  void visit_ways(const std::set<std::string> &ways, PathAccess access, PathAccess covered) {
    for (const std::string &way : ways) {
      const auto rule = rules_.find(way);
      visit(way, rule == rules_.end() ? access : rule->second, covered);
    }
  }

  uint64_t rights_of(PathAccess access) const {
    return access == PathAccess::write ? rights_.fs : kReadExecute;
  }

  const Rules rules_;
  const AbiRights rights_;
  std::vector<Grant> grants_;
};

}  // namespace

std::vector<Grant> view_grants(const std::vector<PathRule> &view, const AbiRights &rights) {
  return ViewWalk(view, rights).grants();
}

PathAccess view_access(const std::vector<PathRule> &view, const std::string &path) {
  PathAccess access = PathAccess::none;
  size_t longest = 0;
  for (const auto &[rule_path, rule_access] : rules_of(view)) {
    if ((rule_path == path || is_below(path, rule_path)) && rule_path.size() > longest) {
      longest = rule_path.size();
      access = rule_access;
    }
  }
  return access;
}

}  // namespace sandbox_host::landlock
