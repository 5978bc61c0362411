// What a session without hooks (claude --bare) is held to: the policy as managed deny rules
// where a deny rule can say it, and a line naming each part it cannot.
#include "policy_tree.hpp"

#include <sandbox_host/host/policy/path_access.hpp>
#include <sandbox_host/host/policy/permission_rules.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace sandbox_host::policy {
namespace {

namespace fs = std::filesystem;

bool has(const std::vector<std::string> &items, const std::string &item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool names(const std::vector<std::string> &lines, const std::string &part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string &line) { return line.find(part) != std::string::npos; });
}

Policy base() {
  Policy policy;
  policy.home = "/home/u";
  policy.runtime = "/run/user/1000";
  policy.deny = {"/home/u/src/shop/.env"};
  return policy;
}

TEST(HooklessRules, DenyEntriesAreReadAndEditRulesOnThePathAndBelow) {
  const auto rules = hookless_rules(base());
  for (const std::string tool : {"Read", "Edit"}) {
    EXPECT_TRUE(has(rules.deny, tool + "(//home/u/src/shop/.env)"));
    EXPECT_TRUE(has(rules.deny, tool + "(//home/u/src/shop/.env/**)"));
  }
}

TEST(HooklessRules, HomeIsDeniedWholeOnlyWhenNothingInsideIsReallowed) {
  const auto closed = hookless_rules(base());
  EXPECT_TRUE(has(closed.deny, "Read(//home/u/**)"));
  EXPECT_TRUE(has(closed.deny, "Edit(//run/user/1000/**)"));
  EXPECT_FALSE(names(closed.unheld, "after `sandbox-host policy install`"));

  test::PolicyTree tree;
  const auto rules = hookless_rules(tree.policy);
  EXPECT_FALSE(has(rules.deny, "Read(/" + tree.at("home/u") + "/**)"));
  EXPECT_FALSE(has(rules.deny, "Read(/" + tree.at("run/user") + "/**)"));
  // Each entry that holds nothing re-allowed instead, as it exists now.
  for (const std::string tool : {"Read", "Edit"}) {
    for (const auto &entry : {"home/u/.secret", "run/user/docker.sock"}) {
      EXPECT_TRUE(has(rules.deny, tool + "(/" + tree.at(entry) + ")")) << entry;
      EXPECT_TRUE(has(rules.deny, tool + "(/" + tree.at(entry) + "/**)")) << entry;
    }
  }
  EXPECT_TRUE(names(rules.unheld, "Read and Edit of an entry made in home " + tree.at("home/u") +
                                      " after `sandbox-host policy install`"));
  EXPECT_TRUE(names(rules.unheld,
                    "Read and Edit of an entry made in runtime " + tree.at("run/user") + " after"));
  // The deny entry inside the re-allowed path still holds.
  EXPECT_TRUE(has(rules.deny, "Read(/" + tree.at("home/u/.state/scan") + "/**)"));
}

TEST(HooklessRules, NoRuleReachesAPathThePolicyReallows) {
  test::PolicyTree tree;
  tree.file("home/u/.ssh/id_rsa", "a key");
  tree.file("home/u/.claude/projects/p1/transcript.jsonl", "a transcript");
  const Policy &policy = tree.policy;
  for (const auto &rule : hookless_rules(policy).deny) {
    const std::string path = rule.substr(rule.find("(/") + 2, rule.size() - rule.find("(/") - 3);
    const std::string denied = path.ends_with("/**") ? path.substr(0, path.size() - 3) : path;
    // The harness's config is Edit-denied though the policy lets it be read.
    if (rule.starts_with("Edit(")) {
      EXPECT_FALSE(writable(policy, denied, "/").allowed) << rule;
      EXPECT_FALSE(writable(policy, denied + "/x", "/").allowed) << rule;
    } else {
      EXPECT_FALSE(readable(policy, denied, "/").allowed) << rule;
      EXPECT_FALSE(readable(policy, denied + "/x", "/").allowed) << rule;
    }
    for (const auto &allowed :
         {"home/u/src", "home/u/.config/tool", "home/u/.state", "home/u/.claude/projects/p1/memory",
          "run/user/clawpatrol-sandbox/egress"}) {
      EXPECT_FALSE(tree.at(allowed).starts_with(denied + "/")) << rule << " holds " << allowed;
    }
  }
}

TEST(HooklessRules, CredentialPathsAreDeniedWhetherOrNotTheyExist) {
  test::PolicyTree tree;
  tree.file("home/u/.ssh/id_rsa", "a key");
  tree.file("home/u/.config/gh/hosts.yml", "a token");
  const auto rules = hookless_rules(tree.policy);
  for (const std::string tool : {"Read", "Edit"}) {
    for (const auto &path :
         {".ssh", ".config/gh", ".aws", ".gnupg", ".kube", ".docker", ".netrc", ".git-credentials",
          ".config/gcloud", ".password-store", ".local/share/keyrings"}) {
      const std::string rule = tool + "(/" + tree.at("home/u/") + path + "/**)";
      EXPECT_EQ(std::count(rules.deny.begin(), rules.deny.end(), rule), 1) << rule;
    }
  }
  EXPECT_FALSE(fs::exists(tree.at("home/u/.aws"))) << "a credential path denied was made";
}

TEST(HooklessRules, ACredentialPathThePolicyReallowsIsNotDenied) {
  test::PolicyTree tree;
  tree.policy.read.push_back(tree.at("home/u/.aws"));
  tree.policy.write.push_back(tree.at("home/u/.docker/cli-plugins"));
  const auto rules = hookless_rules(tree.policy);
  for (const auto &rule : rules.deny) {
    EXPECT_EQ(rule.find("/.aws"), std::string::npos) << rule;
    EXPECT_EQ(rule.find("/.docker)"), std::string::npos) << rule;
    EXPECT_EQ(rule.find("/.docker/**)"), std::string::npos) << rule;
  }
  EXPECT_TRUE(names(rules.unheld, "Read and Edit below credential path " +
                                      tree.at("home/u/.docker") +
                                      ": the policy re-allows paths inside it (write[3] " +
                                      tree.at("home/u/.docker/cli-plugins") + ")"));

  // Home re-allowed whole: no credential path of it is denied.
  tree.policy.write = {tree.at("home/u")};
  tree.policy.deny.clear();
  tree.policy.runtime.clear();
  for (const auto &rule : hookless_rules(tree.policy).deny) {
    EXPECT_FALSE(rule.starts_with("Read(")) << rule;
  }
}

TEST(HooklessRules, AWriteEntryAboveHomeReallowsNothingInsideIt) {
  Policy policy = base();
  policy.write = {"/home"};
  EXPECT_TRUE(has(hookless_rules(policy).deny, "Read(//home/u/**)"));
}

TEST(HooklessRules, TheHarnessIsEditDeniedWholeOrByItsConfigEntries) {
  Policy policy = base();
  policy.harness = "/home/u/.claude";
  EXPECT_TRUE(has(hookless_rules(policy).deny, "Edit(//home/u/.claude/**)"));
  EXPECT_FALSE(has(hookless_rules(policy).deny, "Read(//home/u/.claude/**)"));

  policy.tool_write = {"/home/u/.claude/projects/*/memory", "/home/u/.claude/plans"};
  const auto rules = hookless_rules(policy);
  EXPECT_FALSE(has(rules.deny, "Edit(//home/u/.claude/**)"));
  EXPECT_TRUE(names(rules.unheld,
                    "Edit below harness /home/u/.claude: the policy re-allows "
                    "paths inside it (tool_write[0] /home/u/.claude/projects/*/memory, "
                    "tool_write[1] /home/u/.claude/plans)"));
  for (const std::string entry :
       {"settings.json", "CLAUDE.md", "commands", "agents", "skills", "plugins"}) {
    EXPECT_TRUE(has(rules.deny, "Edit(//home/u/.claude/" + entry + "/**)")) << entry;
  }
  EXPECT_TRUE(has(rules.deny, "Edit(//home/u/.claude.json)"));

  // A tool_write entry over a config entry leaves that one to the hook.
  policy.tool_write.push_back("/home/u/.claude/commands");
  const auto commands = hookless_rules(policy);
  EXPECT_FALSE(has(commands.deny, "Edit(//home/u/.claude/commands)"));
  EXPECT_TRUE(names(commands.unheld, "harness config /home/u/.claude/commands"));
}

TEST(HooklessRules, APathTheRulesWouldReadAsAPatternIsLeftUnheld) {
  Policy policy = base();
  policy.deny = {"/home/u/a(b)", "/home/u/x[1]"};
  const auto rules = hookless_rules(policy);
  for (const auto &rule : rules.deny) {
    EXPECT_EQ(rule.find("a(b)"), std::string::npos) << rule;
    EXPECT_EQ(rule.find("x[1]"), std::string::npos) << rule;
  }
  EXPECT_TRUE(names(rules.unheld, "deny[0] /home/u/a(b): the path holds a character"));
  EXPECT_TRUE(names(rules.unheld, "deny[1] /home/u/x[1]: the path holds a character"));
}

TEST(HooklessRules, EditOutsideTheWritePathsIsAlwaysNamedUnheld) {
  EXPECT_TRUE(names(hookless_rules(base()).unheld,
                    "Edit anywhere outside the write and "
                    "tool_write entries"));
}

TEST(HooklessRules, BashInASessionStartedOutsideTheWritePathsIsAlwaysNamedUnheld) {
  EXPECT_TRUE(names(hookless_rules(base()).unheld,
                    "Bash in a session started in a directory outside the write entries, "
                    "other than home /home/u itself and the paths the rules above deny"));
}

}  // namespace
}  // namespace sandbox_host::policy
