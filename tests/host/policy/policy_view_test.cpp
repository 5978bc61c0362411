// The view a policy gives commands (sandbox-host run --policy): rules on real, resolved
// paths, compared whole.
#include "policy_tree.hpp"

#include <sandbox_host/host/policy/policy_view.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>

namespace sandbox_host::policy {
namespace {

using test::PolicyTree;
namespace fs = std::filesystem;

class PolicyView : public ::testing::Test {
 protected:
  PathRule rule(const std::string &relative, PathAccess access) const {
    return {tree.at(relative), access};
  }

  PolicyTree tree;
};

TEST_F(PolicyView, RepresentativePolicy) {
  tree.link("home/u/cfg", ".config/tool");
  tree.dir("home/u/.claude/projects/p2/memory");
  // Enforced at a link's target, left out when missing, and a path in Read and Write is
  // written.
  tree.policy.read = {tree.at("home/u/cfg"), tree.at("home/u/.claude"), tree.at("home/u/nope"),
                      tree.at("home/u/src")};
  const std::vector<PathRule> expected{
      rule("home/u", PathAccess::none),
      rule("home/u/.claude", PathAccess::read),
      rule("home/u/.claude/projects", PathAccess::read),
      rule("home/u/.config/tool", PathAccess::read),
      rule("home/u/.state", PathAccess::write),
      rule("home/u/.state/scan", PathAccess::none),
      rule("home/u/src", PathAccess::write),
      rule("run/user", PathAccess::none),
      rule("run/user/clawpatrol-sandbox/egress", PathAccess::read),
  };
  EXPECT_EQ(command_view(tree.policy), expected);
}

TEST_F(PolicyView, DenyWinsOverEverythingBelowIt) {
  tree.dir("home/u/.state/scan/index");
  tree.dir("home/u/.state/scan/cache");
  tree.policy.read = {tree.at("home/u/.state/scan/index")};
  tree.policy.write = {tree.at("home/u/.state"), tree.at("home/u/.state/scan/cache"),
                       tree.at("home/u/.state/scan")};
  tree.policy.harness.clear();
  tree.policy.tool_write.clear();
  tree.policy.runtime.clear();
  tree.policy.egress.clear();
  const std::vector<PathRule> expected{
      rule("home/u", PathAccess::none),
      rule("home/u/.state", PathAccess::write),
      rule("home/u/.state/scan", PathAccess::none),
  };
  EXPECT_EQ(command_view(tree.policy), expected);
}

TEST_F(PolicyView, HarnessAndToolWriteAreCappedAtRead) {
  tree.dir("home/u/notes");
  tree.dir("home/u/.claude/projects/p2/memory/deep");
  Policy policy;
  policy.home = tree.at("home/u");
  policy.write = {tree.at("home/u"), tree.at("home/u/.claude/projects/p1"),
                  tree.at("home/u/.claude/projects/p2/memory/deep")};
  policy.harness = tree.at("home/u/.claude");
  policy.tool_write = {tree.at("home/u/notes"), tree.at("home/u/.claude/projects/*/memory"),
                       tree.at("home/u/missing/*")};
  const std::vector<PathRule> expected{
      rule("home/u", PathAccess::write),
      rule("home/u/.claude", PathAccess::read),
      rule("home/u/.claude/projects/p1", PathAccess::read),
      rule("home/u/.claude/projects/p2/memory/deep", PathAccess::read),
      rule("home/u/notes", PathAccess::read),
  };
  EXPECT_EQ(command_view(policy), expected);
}

TEST_F(PolicyView, ToolWriteGlobMatchesAreEachCapped) {
  tree.dir("home/u/.claude/projects/.hidden/memory");
  tree.dir("home/u/.claude/projects/p2/memory");
  tree.dir("home/u/.claude/projects/p3");
  Policy policy;
  policy.home = tree.at("home/u");
  policy.write = {tree.at("home/u/.claude")};
  policy.tool_write = {tree.at("home/u/.claude/projects/*/memory")};
  const std::vector<PathRule> expected{
      rule("home/u", PathAccess::none),
      rule("home/u/.claude", PathAccess::write),
      rule("home/u/.claude/projects/.hidden/memory", PathAccess::read),
      rule("home/u/.claude/projects/p1/memory", PathAccess::read),
      rule("home/u/.claude/projects/p2/memory", PathAccess::read),
  };
  EXPECT_EQ(command_view(policy), expected);
}

TEST_F(PolicyView, TheHarnessItselfWritesToolWriteAndNothingElseOfItsDirectory) {
  tree.dir("home/u/.claude/projects/p2/memory");
  tree.dir("home/u/.claude/session-env");
  Policy policy;
  policy.home = tree.at("home/u");
  policy.write = {tree.at("home/u/src")};
  policy.harness = tree.at("home/u/.claude");
  policy.tool_write = {tree.at("home/u/.claude/projects/*/memory"),
                       tree.at("home/u/.claude/session-env")};
  const std::vector<PathRule> expected{
      rule("home/u", PathAccess::none),
      rule("home/u/.claude/projects/p1/memory", PathAccess::write),
      rule("home/u/.claude/projects/p2/memory", PathAccess::write),
      rule("home/u/.claude/session-env", PathAccess::write),
      rule("home/u/src", PathAccess::write),
  };
  EXPECT_EQ(command_view(policy, ViewFor::harness), expected);
  // The commands' view of the same policy writes none of them.
  for (const auto &entry : command_view(policy)) {
    if (entry.path.starts_with(tree.at("home/u/.claude"))) {
      EXPECT_EQ(entry.access, PathAccess::read) << entry.path;
    }
  }
}

TEST_F(PolicyView, HarnessMountPointsMakeLiteralToolWriteEntriesOnly) {
  Policy policy;
  policy.home = tree.at("home/u");
  policy.harness = tree.at("home/u/.claude");
  policy.tool_write = {tree.at("home/u/.claude/todos"), tree.at("home/u/.claude/x/*/memory")};
  policy.mount_points();
  EXPECT_FALSE(fs::exists(tree.at("home/u/.claude/todos")));
  policy.mount_points(ViewFor::harness);
  struct stat status {};
  ASSERT_EQ(::stat(tree.at("home/u/.claude/todos").c_str(), &status), 0);
  EXPECT_TRUE(S_ISDIR(status.st_mode));
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  EXPECT_FALSE(fs::exists(tree.at("home/u/.claude/x")));
}

TEST_F(PolicyView, HiddenPathsAreNoneWhereTheyExist) {
  tree.dir("etc/claude-code/managed-settings.d");
  const auto view = command_view(tree.policy, ViewFor::commands,
                                 {tree.at("etc/claude-code/managed-settings.d"), tree.at("nope")});
  EXPECT_NE(std::find(view.begin(), view.end(),
                      rule("etc/claude-code/managed-settings.d", PathAccess::none)),
            view.end());
  for (const auto &entry : view) EXPECT_NE(entry.path, tree.at("nope"));
}

TEST_F(PolicyView, MissingDenyIsRefusedUntilMountPointsMakeIt) {
  tree.policy.deny.push_back(tree.at("home/u/.state/vault/key"));
  tree.policy.source = "agent-policy.toml";
  try {
    command_view(tree.policy);
    FAIL() << "a view without its deny entry was made";
  } catch (const std::runtime_error &e) {
    EXPECT_EQ(std::string(e.what()),
              "agent-policy.toml: deny[1]: \"" + tree.at("home/u/.state/vault/key") +
                  "\" does not exist, and a sandbox hides only what exists; create it (an empty "
                  "0700 directory will do)");
  }
  tree.policy.mount_points();
  struct stat status {};
  ASSERT_EQ(::stat(tree.at("home/u/.state/vault/key").c_str(), &status), 0);
  EXPECT_TRUE(S_ISDIR(status.st_mode));
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  const auto view = command_view(tree.policy);
  EXPECT_NE(std::find(view.begin(), view.end(), rule("home/u/.state/vault/key", PathAccess::none)),
            view.end());
}

TEST_F(PolicyView, DenyThroughASymlinkHidesItsTarget) {
  tree.dir("elsewhere/scan");
  tree.link("home/u/.state/linked-scan", tree.at("elsewhere/scan"));
  tree.policy.deny = {tree.at("home/u/.state/linked-scan")};
  const auto view = command_view(tree.policy);
  EXPECT_NE(std::find(view.begin(), view.end(), rule("elsewhere/scan", PathAccess::none)),
            view.end());
}

}  // namespace
}  // namespace sandbox_host::policy
