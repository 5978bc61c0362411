// The grants that hold a command to an agent policy's view, walked over a real temporary tree
// standing in for a home directory: which paths get which rights, exactly, below the tree,
// and what the walk of "/" grants and leaves out above it. The grants enforced for real are
// view_test.cpp's.
#include "view_grants.hpp"
#include "landlock_abi.hpp"

#include "fixtures.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace sandbox_host::landlock {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kReadExecute = kFsExecute | kFsReadFile | kFsReadDir;

// The grants at or below root, by path; every grant once.
std::map<std::string, uint64_t> grants_below(const std::vector<Grant> &grants,
                                             const fs::path &root) {
  std::map<std::string, uint64_t> out;
  for (const Grant &grant : grants) {
    if (grant.path != root.string() && !grant.path.starts_with(root.string() + "/")) continue;
    EXPECT_EQ(out.count(grant.path), 0u) << grant.path << " granted twice";
    out[grant.path] = grant.access;
  }
  return out;
}

std::map<std::string, uint64_t> all_grants(const std::vector<Grant> &grants) {
  return grants_below(grants, "");
}

void touch(const fs::path &path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "x\n";
}

class LandlockViewGrants : public ::testing::Test {
 protected:
  LandlockViewGrants() : tree_("beside\n", "beside.txt"), root_(fs::canonical(tree_.dir())) {}

  const test::TempFile tree_;
  const fs::path root_;
  const AbiRights rights_ = rights_for(kNewestKnownAbi);
};

// The home of an agent's user: hidden, with a readable directory and file in it, a project
// written in, and inside the project a deny and a read-only vendor tree.
TEST_F(LandlockViewGrants, ARuleWithLessAccessBelowIsReachedThroughItsParentsEntries) {
  const fs::path home = root_ / "home";
  touch(home / "secret.txt");
  touch(home / "docs/a.txt");
  touch(home / "notes.txt");
  touch(home / "proj/src/main.c");
  touch(home / "proj/README");
  touch(home / "proj/.state/scan/found");
  touch(home / "proj/.state/other/log");
  touch(home / "proj/vendor/lib.c");
  fs::create_symlink(home / "secret.txt", home / "proj/to-secret");
  touch(root_ / "outside/file");

  const std::vector<PathRule> view{
      {home.string(), PathAccess::none},
      {(home / "docs").string(), PathAccess::read},
      {(home / "notes.txt").string(), PathAccess::read},
      {(home / "proj").string(), PathAccess::write},
      {(home / "proj/.state/scan").string(), PathAccess::none},
      {(home / "proj/vendor").string(), PathAccess::read},
  };
  const std::vector<Grant> grants = view_grants(view, rights_);

  // The home, the project and .state hold rules of less access: no grant on themselves, nor
  // on the deny, nor on the symlink (its target answers for itself).
  EXPECT_EQ(grants_below(grants, root_), (std::map<std::string, uint64_t>{
                                             {(root_ / "beside.txt").string(), kReadExecute},
                                             {(root_ / "outside").string(), kReadExecute},
                                             {(home / "docs").string(), kReadExecute},
                                             {(home / "notes.txt").string(), kReadExecute},
                                             {(home / "proj/.state/other").string(), rights_.fs},
                                             {(home / "proj/README").string(), rights_.fs},
                                             {(home / "proj/src").string(), rights_.fs},
                                             {(home / "proj/vendor").string(), kReadExecute},
                                         }));

  // Above the tree, the way to it is walked the same: "/" and /tmp are never granted, their
  // other entries are readable, and /proc and /dev are left to the system's grants.
  const auto by_path = all_grants(grants);
  EXPECT_EQ(by_path.count("/"), 0u);
  EXPECT_EQ(by_path.count("/proc"), 0u);
  EXPECT_EQ(by_path.count("/dev"), 0u);
  EXPECT_EQ(by_path.count(root_.parent_path().string()), 0u);
  EXPECT_EQ(by_path.count(root_.string()), 0u);
  for (const char *readable : {"/etc", "/usr", "/var"}) {
    ASSERT_EQ(by_path.count(readable), 1u) << readable;
    EXPECT_EQ(by_path.at(readable), kReadExecute) << readable;
  }
  // Every entry of "/" is granted but /proc, /dev, the way to the tree and symlinks.
  for (const auto &entry : fs::directory_iterator("/")) {
    const std::string path = entry.path().string();
    const bool expected = !entry.is_symlink() && path != "/proc" && path != "/dev" &&
                          path != "/" + std::next(root_.begin())->string();
    EXPECT_EQ(by_path.count(path), expected ? 1u : 0u) << path;
  }
}

// Rules of more access below a readable path add their grant to it; Landlock unites them.
TEST_F(LandlockViewGrants, RulesOfMoreAccessBelowAWholeGrantAddToIt) {
  touch(root_ / "a/x");
  touch(root_ / "a/b/c/y");
  touch(root_ / "a/b/z");
  const std::vector<PathRule> view{
      {(root_ / "a").string(), PathAccess::write},
      {(root_ / "a/b").string(), PathAccess::read},
      {(root_ / "a/b/c").string(), PathAccess::write},
  };
  const std::vector<Grant> grants = view_grants(view, rights_);
  // Nothing below the temporary directory's parent is denied: it is readable whole; a holds
  // a read rule below its write, so only its other entry is written; b is already readable.
  const auto by_path = all_grants(grants);
  ASSERT_EQ(by_path.count(root_.parent_path().string()), 1u);
  EXPECT_EQ(by_path.at(root_.parent_path().string()), kReadExecute);
  EXPECT_EQ(grants_below(grants, root_), (std::map<std::string, uint64_t>{
                                             {(root_ / "a/x").string(), rights_.fs},
                                             {(root_ / "a/b/c").string(), rights_.fs},
                                         }));
}

// A write rule with nothing of less access below is one grant, a none rule none at all.
TEST_F(LandlockViewGrants, AWriteRuleAloneIsOneGrantOfEveryRight) {
  touch(root_ / "w/f");
  touch(root_ / "hidden/f");
  const std::vector<PathRule> view{
      {(root_ / "w").string(), PathAccess::write},
      {(root_ / "hidden").string(), PathAccess::none},
  };
  EXPECT_EQ(grants_below(view_grants(view, rights_), root_),
            (std::map<std::string, uint64_t>{{(root_ / "beside.txt").string(), kReadExecute},
                                             {(root_ / "w").string(), rights_.fs}}));
  // At an older ABI, write is what that ABI handles.
  const AbiRights abi1 = rights_for(1);
  EXPECT_EQ(grants_below(view_grants(view, abi1), root_),
            (std::map<std::string, uint64_t>{{(root_ / "beside.txt").string(), kReadExecute},
                                             {(root_ / "w").string(), abi1.fs}}));
}

TEST_F(LandlockViewGrants, AccessIsTheLongestRulesWithProcAndDevHidden) {
  const std::vector<PathRule> view{
      {"/home/u", PathAccess::none},
      {"/home/u/proj", PathAccess::write},
      {"/home/u/proj/.git", PathAccess::read},
  };
  EXPECT_EQ(view_access(view, "/"), PathAccess::read);
  EXPECT_EQ(view_access(view, "/etc/passwd"), PathAccess::read);
  EXPECT_EQ(view_access(view, "/home"), PathAccess::read);
  EXPECT_EQ(view_access(view, "/home/u"), PathAccess::none);
  EXPECT_EQ(view_access(view, "/home/u/.ssh"), PathAccess::none);
  EXPECT_EQ(view_access(view, "/home/u/proj"), PathAccess::write);
  EXPECT_EQ(view_access(view, "/home/u/proj/src"), PathAccess::write);
  EXPECT_EQ(view_access(view, "/home/u/proj/.git/config"), PathAccess::read);
  EXPECT_EQ(view_access(view, "/home/u/projects"), PathAccess::none);
  EXPECT_EQ(view_access(view, "/proc/1"), PathAccess::none);
  EXPECT_EQ(view_access(view, "/dev/null"), PathAccess::none);
  EXPECT_EQ(view_access(view, "/device"), PathAccess::read);
}

}  // namespace
}  // namespace sandbox_host::landlock
