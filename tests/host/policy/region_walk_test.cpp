// The home listed into the paths a managed deny rule may name, on a real home: what is
// closed covers everything outside the policy's entries as it exists, and never a path the
// policy re-allows nor one on the way to it.
#include "policy_tree.hpp"

#include <sandbox_host/host/policy/path_access.hpp>
#include <sandbox_host/host/policy/region_walk.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace sandbox_host::policy {
namespace {

using test::PolicyTree;
namespace fs = std::filesystem;

bool names(const std::vector<std::string> &lines, const std::string &part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string &line) { return line.find(part) != std::string::npos; });
}

class RegionWalkTest : public ::testing::Test {
 protected:
  // PolicyTree's home (.secret, .config/tool, src, .state, .claude) with a project two
  // levels down beside a colleague's, a file beside them, and a directory outside it all;
  // the policy writes the project alone.
  RegionWalkTest() {
    tree.file("home/u/work/team/shop/main.go", "package main");
    tree.file("home/u/work/team/billing/secret.txt", "billing's secret");
    tree.file("home/u/work/notes.txt", "notes");
    tree.file("home/u/other/private.txt", "private");
    tree.policy = Policy{};
    tree.policy.home = home();
    tree.policy.write = {at("work/team/shop")};
  }

  std::string home() const { return tree.at("home/u"); }
  std::string at(const std::string &relative) const { return tree.at("home/u/" + relative); }

  std::vector<std::string> closed(const WalkBounds &bounds = {}) const {
    return walk_region(tree.policy, "home", home(), bounds).closed;
  }

  // Every closed path is one the hook refuses to read, and lies neither at, above nor below
  // a path it lets the file tools read.
  void expect_nothing_reallowed_is_closed(const std::vector<std::string> &reallowed) const {
    for (const auto &path : closed()) {
      EXPECT_FALSE(readable(tree.policy, path, "/").allowed) << path;
      for (const auto &allowed : reallowed) {
        const auto outside = fs::path(allowed).lexically_relative(path).string();
        EXPECT_TRUE(outside.starts_with("..")) << path << " holds " << allowed;
        EXPECT_TRUE(fs::path(path).lexically_relative(allowed).string().starts_with(".."))
            << path << " lies in " << allowed;
      }
    }
  }

  PolicyTree tree;
};

TEST_F(RegionWalkTest, EntriesOutsideThePolicyAreClosedAndTheWayToAReallowedPathIsDescended) {
  const std::vector<std::string> expected{
      at(".claude"), at(".config"), at(".secret"),        at(".state"),
      at("other"),   at("src"),     at("work/notes.txt"), at("work/team/billing"),
  };
  EXPECT_EQ(closed(), expected);
  expect_nothing_reallowed_is_closed({at("work/team/shop")});
}

TEST_F(RegionWalkTest, AnEntryMadeAfterTheWalkIsNamedOpen) {
  const auto walk = walk_region(tree.policy, "home", home());
  EXPECT_TRUE(names(walk.open, "Read and Edit of an entry made in home " + home() +
                                   " after `sandbox-host policy install`"))
      << ::testing::PrintToString(walk.open);
}

TEST_F(RegionWalkTest, ARegionWithNothingReallowedIsClosedWholeAndOneReallowedWholeNowhere) {
  tree.policy.write = {tree.at("home")};
  EXPECT_EQ(closed(), std::vector<std::string>{home()}) << "an entry above home re-allows nothing";
  EXPECT_TRUE(walk_region(tree.policy, "home", home()).open.empty());
  tree.policy.write = {home()};
  const auto walk = walk_region(tree.policy, "home", home());
  EXPECT_TRUE(walk.closed.empty());
  EXPECT_TRUE(walk.open.empty());
}

TEST_F(RegionWalkTest, ASymlinkIsClosedAsItselfAndNeverFollowed) {
  tree.link("home/u/work/team/keys", tree.at("outside"));
  tree.link("home/u/dotfiles", "work/team/billing");
  const auto walked = closed();
  EXPECT_NE(std::find(walked.begin(), walked.end(), at("work/team/keys")), walked.end());
  EXPECT_NE(std::find(walked.begin(), walked.end(), at("dotfiles")), walked.end());
  for (const auto &path : walked) {
    EXPECT_FALSE(path.starts_with(at("work/team/keys/"))) << path;
    EXPECT_FALSE(path.starts_with(at("dotfiles/"))) << path;
  }
}

TEST_F(RegionWalkTest, ASymlinkIntoAReallowedPathStaysOpenSilently) {
  tree.link("home/u/shop", "work/team/shop");
  const auto walk = walk_region(tree.policy, "home", home());
  EXPECT_EQ(std::find(walk.closed.begin(), walk.closed.end(), at("shop")), walk.closed.end());
  EXPECT_FALSE(names(walk.open, at("shop") + ":"));
}

TEST_F(RegionWalkTest, ASymlinkOnTheWayToAReallowedPathStaysOpenAndIsNamed) {
  tree.dir("elsewhere/proj/sub");
  tree.file("elsewhere/proj/key", "a key beside the re-allowed path");
  tree.link("home/u/proj", tree.at("elsewhere/proj"));
  tree.policy.write.push_back(at("proj/sub"));
  const auto walk = walk_region(tree.policy, "home", home());
  EXPECT_EQ(std::find(walk.closed.begin(), walk.closed.end(), at("proj")), walk.closed.end());
  EXPECT_TRUE(names(walk.open, "Read and Edit below " + at("proj") +
                                   ": it lies on the way to write[1] " + at("proj/sub")))
      << ::testing::PrintToString(walk.open);
  expect_nothing_reallowed_is_closed({at("work/team/shop"), at("proj/sub")});
}

TEST_F(RegionWalkTest, AToolWriteGlobIsDescendedComponentByComponent) {
  tree.file("home/u/.claude/projects/p1/transcript.jsonl", "a transcript");
  tree.dir("home/u/.claude/projects/p2/memory");
  tree.policy.tool_write = {at(".claude/projects/*/memory")};
  const auto walked = closed();
  for (const auto &path :
       {at(".claude/settings.json"), at(".claude/projects/p1/transcript.jsonl")}) {
    EXPECT_NE(std::find(walked.begin(), walked.end(), path), walked.end()) << path;
  }
  expect_nothing_reallowed_is_closed(
      {at("work/team/shop"), at(".claude/projects/p1/memory"), at(".claude/projects/p2/memory")});
}

TEST_F(RegionWalkTest, TheEntryBoundStopsTheWalkAndSaysWhere) {
  const auto walk = walk_region(tree.policy, "home", home(), {.depth = 32, .entries = 3});
  EXPECT_EQ(walk.closed, (std::vector<std::string>{at(".claude"), at(".config"), at(".secret")}));
  EXPECT_TRUE(names(walk.open, "Read and Edit of " + at(".state") + " and of every entry of home " +
                                   home() + " after it in the walk: the walk stops at 3 entries"))
      << ::testing::PrintToString(walk.open);
}

TEST_F(RegionWalkTest, TheDepthBoundStopsTheWalkAndSaysWhere) {
  const auto walk = walk_region(tree.policy, "home", home(), {.depth = 2, .entries = 4096});
  EXPECT_TRUE(names(walk.open, "Read and Edit below " + at("work/team") + ": the walk of home " +
                                   home() + " lists 2 levels of directories at most"))
      << ::testing::PrintToString(walk.open);
  for (const auto &path : walk.closed) EXPECT_FALSE(path.starts_with(at("work/team/"))) << path;
  EXPECT_NE(std::find(walk.closed.begin(), walk.closed.end(), at("work/notes.txt")),
            walk.closed.end());
}

}  // namespace
}  // namespace sandbox_host::policy
