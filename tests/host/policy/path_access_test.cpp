// The file-tool hook's checks on a real tree: "..", symlinks (to secrets, dangling, chains,
// loops), Deny inside Write, Harness against ToolWrite globs, relative and "~" paths, and a
// home behind a symlink.
#include "policy_tree.hpp"

#include <sandbox_host/host/policy/path_access.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <system_error>

namespace sandbox_host::policy {
namespace {

using test::PolicyTree;

class PathAccess : public ::testing::Test {
 protected:
  bool can_read(const std::string &path, const std::string &cwd = "/") const {
    return readable(tree.policy, path, cwd).allowed;
  }
  bool can_write(const std::string &path, const std::string &cwd = "/") const {
    return writable(tree.policy, path, cwd).allowed;
  }
  std::string home(const std::string &relative) const { return tree.at("home/u/" + relative); }

  PolicyTree tree;
};

TEST_F(PathAccess, ResolveTakesDotDotPhysically) {
  tree.link("home/u/src/tool", "../.config/tool");
  // Lexically src/tool/.. is src; the kernel goes to the link target's parent.
  EXPECT_EQ(resolve(tree.policy, home("src/tool/.."), "/"), home(".config"));
  EXPECT_EQ(resolve(tree.policy, home("src/./new//deeper/"), "/"), home("src/new/deeper"));
  EXPECT_EQ(resolve(tree.policy, home("src/new/a/../../main.c"), "/"), home("src/main.c"));
  EXPECT_EQ(resolve(tree.policy, "/../../..", "/"), "/");
  EXPECT_EQ(resolve(tree.policy, "main.c", home("src")), home("src/main.c"));
  EXPECT_EQ(resolve(tree.policy, "~", "/"), tree.policy.home);
  EXPECT_EQ(resolve(tree.policy, "~/src/", "/"), home("src"));
  // "~user" is no home: a relative name like any other.
  EXPECT_EQ(resolve(tree.policy, "~other", home("src")), home("src/~other"));
}

TEST_F(PathAccess, ResolveRefusesWhatItCannotPlace) {
  EXPECT_THROW(resolve(tree.policy, "", "/"), std::invalid_argument);
  EXPECT_THROW(resolve(tree.policy, std::string("/tmp/a\0b", 8), "/"), std::invalid_argument);
  EXPECT_THROW(resolve(tree.policy, "src/main.c", ""), std::invalid_argument);
  EXPECT_THROW(resolve(tree.policy, "src/main.c", "relative/cwd"), std::invalid_argument);
}

TEST_F(PathAccess, InsideAndOutside) {
  EXPECT_TRUE(can_read(home("src/main.c")));
  EXPECT_TRUE(can_write(home("src/main.c")));
  EXPECT_TRUE(can_write(home("src/new/file")));
  EXPECT_TRUE(can_read(home(".config/tool/settings")));
  EXPECT_FALSE(can_write(home(".config/tool/settings")));
  EXPECT_FALSE(can_read(home(".secret")));
  EXPECT_FALSE(can_write(home(".secret")));
  EXPECT_FALSE(can_read(home("")));
  EXPECT_TRUE(can_read(tree.at("outside/file")));
  EXPECT_FALSE(can_write(tree.at("outside/file")));
  EXPECT_TRUE(can_read("/etc/passwd"));
  EXPECT_FALSE(can_write("/etc/passwd"));
  EXPECT_FALSE(can_write("/etc/new-file"));
  EXPECT_FALSE(can_read(tree.at("run/user/docker.sock")));
  EXPECT_TRUE(can_read(tree.at("run/user/clawpatrol-sandbox/egress/ca.pem")));
  EXPECT_FALSE(can_write(tree.at("run/user/clawpatrol-sandbox/egress/ca.pem")));
}

TEST_F(PathAccess, VerdictsNameTheRule) {
  EXPECT_EQ(writable(tree.policy, home("src/main.c"), "/").rule, "Write " + home("src"));
  EXPECT_EQ(readable(tree.policy, home(".config/tool/settings"), "/").rule,
            "Read " + home(".config/tool"));
  EXPECT_EQ(readable(tree.policy, home(".secret"), "/").rule,
            "Home " + tree.policy.home + " is denied apart from Read and Write");
  EXPECT_EQ(readable(tree.policy, tree.at("run/user/docker.sock"), "/").rule,
            "Runtime " + tree.policy.runtime + " is denied apart from Egress");
  EXPECT_EQ(readable(tree.policy, tree.at("run/user/clawpatrol-sandbox/egress/ca.pem"), "/").rule,
            "Egress " + tree.policy.egress);
  EXPECT_EQ(readable(tree.policy, "/etc/passwd", "/").rule, "outside Home and Runtime");
  EXPECT_EQ(writable(tree.policy, "/etc/passwd", "/").rule, "not under Write or ToolWrite");
  EXPECT_EQ(readable(tree.policy, home(".state/scan/key"), "/").rule,
            "Deny " + home(".state/scan"));
  EXPECT_EQ(writable(tree.policy, home(".claude/projects/p1/memory/note.md"), "/").rule,
            "ToolWrite " + home(".claude/projects/*/memory"));
  EXPECT_EQ(
      writable(tree.policy, home(".claude/projects/p1/other.md"), "/").rule,
      "Harness " + tree.policy.harness + " is written by the file tools only through ToolWrite");
}

TEST_F(PathAccess, DotDotOutOfWriteIsHeldToWhereItLands) {
  EXPECT_FALSE(can_read(home("src/../.secret")));
  EXPECT_FALSE(can_write(home("src/../.secret")));
  EXPECT_FALSE(can_read(home("src/new/deeper/../../../.secret")));
  EXPECT_FALSE(can_write(home("src/new/deeper/../../../.secret")));
  EXPECT_FALSE(can_write(home("src/../../../../../../../../etc/passwd")));
  EXPECT_TRUE(can_write(home(".config/../src/main.c")));
}

TEST_F(PathAccess, TrailingSlashesAreIgnored) {
  EXPECT_TRUE(can_write(home("src/")));
  EXPECT_TRUE(can_write(home("src//new///")));
  EXPECT_FALSE(can_read(home(".state/scan/")));
  EXPECT_FALSE(can_read(home("/")));
}

TEST_F(PathAccess, SymlinkInWriteToAHomeSecret) {
  tree.link("home/u/src/innocent", "../.secret");
  tree.link("home/u/src/absolute", home(".secret"));
  for (const auto *name : {"src/innocent", "src/absolute"}) {
    EXPECT_FALSE(can_read(home(name))) << name;
    EXPECT_FALSE(can_write(home(name))) << name;
  }
}

TEST_F(PathAccess, DanglingSymlinkInWriteIsHeldToItsTarget) {
  tree.link("home/u/src/out", tree.at("outside/created-by-a-write"));
  tree.link("home/u/src/bashrc", "../.bashrc");
  tree.link("home/u/src/later", "later-target");
  EXPECT_FALSE(can_write(home("src/out")));
  EXPECT_FALSE(can_write(home("src/bashrc")));
  EXPECT_FALSE(can_read(home("src/bashrc")));
  EXPECT_TRUE(can_write(home("src/later")));
  EXPECT_EQ(resolve(tree.policy, home("src/out"), "/"), tree.at("outside/created-by-a-write"));
}

TEST_F(PathAccess, SymlinkChainsAreFollowedToTheEnd) {
  tree.link("home/u/src/one", "two");
  tree.link("home/u/src/two", tree.at("home/u/.config/three"));
  tree.link("home/u/.config/three", "../.secret");
  EXPECT_FALSE(can_read(home("src/one")));
  EXPECT_FALSE(can_write(home("src/one")));
  // A directory link in the middle of a path.
  tree.link("home/u/src/cfg", "../.config/tool");
  EXPECT_TRUE(can_read(home("src/cfg/settings")));
  EXPECT_FALSE(can_write(home("src/cfg/settings")));
}

TEST_F(PathAccess, SymlinkLoopsAreNeverAllowed) {
  tree.link("home/u/src/loop-a", "loop-b");
  tree.link("home/u/src/loop-b", "loop-a");
  tree.link("home/u/src/self", "self/x");
  for (const auto *name : {"src/loop-a", "src/loop-b/file", "src/self"}) {
    EXPECT_FALSE(can_read(home(name))) << name;
    EXPECT_FALSE(can_write(home(name))) << name;
  }
  try {
    resolve(tree.policy, home("src/loop-a"), "/");
    FAIL() << "a loop resolved";
  } catch (const std::system_error &e) {
    EXPECT_EQ(e.code(), std::errc::too_many_symbolic_link_levels);
  }
  const Verdict verdict = writable(tree.policy, home("src/loop-a"), "/");
  EXPECT_NE(verdict.rule.find("symbolic links"), std::string::npos) << verdict.rule;
}

TEST_F(PathAccess, FortySymlinksResolveAndFortyOneDoNot) {
  for (int i = 0; i < 41; ++i) {
    tree.link("home/u/src/hop" + std::to_string(i), "hop" + std::to_string(i + 1));
  }
  tree.file("home/u/src/hop41");
  EXPECT_TRUE(can_write(home("src/hop1")));
  EXPECT_FALSE(can_write(home("src/hop0")));
}

TEST_F(PathAccess, DenyInsideWrite) {
  EXPECT_TRUE(can_write(home(".state/journal")));
  EXPECT_FALSE(can_read(home(".state/scan")));
  EXPECT_FALSE(can_read(home(".state/scan/key")));
  EXPECT_FALSE(can_write(home(".state/scan/new")));
  EXPECT_FALSE(can_read(home(".state/journal/../scan/key")));
  tree.link("home/u/src/scan", "../.state/scan");
  EXPECT_FALSE(can_read(home("src/scan/key")));
  EXPECT_FALSE(can_write(home("src/scan/key")));
  // A name that only starts like the denied one is not under it.
  EXPECT_TRUE(can_write(home(".state/scanner")));
}

TEST_F(PathAccess, HarnessIsWrittenOnlyThroughToolWrite) {
  EXPECT_TRUE(can_read(home(".claude/settings.json")));
  EXPECT_FALSE(can_write(home(".claude/settings.json")));
  EXPECT_FALSE(can_write(home(".claude/projects/p1/other.md")));
  EXPECT_TRUE(can_write(home(".claude/projects/p1/memory/note.md")));
  EXPECT_TRUE(can_write(home(".claude/projects/p1/memory")));
  EXPECT_TRUE(can_write(home(".claude/projects/new-project/memory/n.md")));
  EXPECT_TRUE(can_write(home(".claude/projects/.dot/memory/n.md")));
  // "*" stands for one component: neither none nor two.
  EXPECT_FALSE(can_write(home(".claude/projects/memory/n.md")));
  EXPECT_FALSE(can_write(home(".claude/projects/a/b/memory/n.md")));
  EXPECT_FALSE(can_write(home(".claude/projects/p1/memory-old/n.md")));
  EXPECT_FALSE(can_write(home(".claude/projects/p1/memory/../../../settings.json")));
  // Read through ToolWrite is allowed even without a Read entry.
  tree.policy.read = {home(".config/tool")};
  EXPECT_TRUE(can_read(home(".claude/projects/p1/memory/note.md")));
  EXPECT_FALSE(can_read(home(".claude/settings.json")));
}

TEST_F(PathAccess, RelativePathsAgainstTheWorkingDirectory) {
  EXPECT_TRUE(can_write("main.c", home("src")));
  EXPECT_TRUE(can_write("./new/../main.c", home("src") + "/"));
  EXPECT_FALSE(can_read("../.secret", home("src")));
  EXPECT_FALSE(can_write("../.bashrc", home("src")));
  EXPECT_FALSE(can_read(".secret", home("")));
  // The working directory is resolved too: a link into home gets home's rules.
  tree.link("outside/into-home", home(""));
  EXPECT_FALSE(can_read(".secret", tree.at("outside/into-home")));
  EXPECT_TRUE(can_write("src/x", tree.at("outside/into-home")));
}

TEST_F(PathAccess, TildeIsHome) {
  EXPECT_TRUE(can_write("~/src/main.c"));
  EXPECT_FALSE(can_read("~/.secret"));
  EXPECT_FALSE(can_read("~"));
  EXPECT_FALSE(can_read("~/"));
  EXPECT_TRUE(can_read("~/.config/tool/settings"));
}

TEST_F(PathAccess, HomeBehindASymlink) {
  // The policy names home through a link (/home -> /usr/home on some systems); paths arrive
  // by the real name, and the other way round.
  tree.link("homes", "home");
  Policy through_link = tree.policy;
  through_link.home = tree.at("homes/u");
  through_link.write = {tree.at("homes/u/src")};
  through_link.deny = {tree.at("homes/u/src/private")};
  through_link.harness = tree.at("homes/u/.claude");
  through_link.tool_write = {tree.at("homes/u/.claude/projects/*/memory")};
  tree.dir("home/u/src/private");
  EXPECT_FALSE(readable(through_link, home(".secret"), "/").allowed);
  EXPECT_TRUE(writable(through_link, home("src/main.c"), "/").allowed);
  EXPECT_FALSE(writable(through_link, home("src/private/x"), "/").allowed);
  EXPECT_FALSE(readable(through_link, tree.at("homes/u/.secret"), "/").allowed);
  EXPECT_TRUE(writable(through_link, tree.at("homes/u/src/main.c"), "/").allowed);
  EXPECT_FALSE(readable(through_link, "~/.secret", "/").allowed);
  EXPECT_TRUE(writable(through_link, home(".claude/projects/p1/memory/n.md"), "/").allowed);
  EXPECT_FALSE(writable(through_link, home(".claude/settings.json"), "/").allowed);
  EXPECT_FALSE(readable(tree.policy, tree.at("homes/u/.secret"), "/").allowed);
}

}  // namespace
}  // namespace sandbox_host::policy
