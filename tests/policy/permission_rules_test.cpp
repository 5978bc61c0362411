// What a session without hooks (claude --bare) is held to: the policy as managed deny rules
// where a deny rule can say it, and a line naming each part it cannot.
#include <sandbox_host/host/policy/permission_rules.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace sandbox_host::policy {
namespace {

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

  Policy open = base();
  open.write = {"/home/u/src/shop"};
  open.egress = "/run/user/1000/clawpatrol-sandbox/egress";
  const auto rules = hookless_rules(open);
  EXPECT_FALSE(has(rules.deny, "Read(//home/u/**)"));
  EXPECT_FALSE(has(rules.deny, "Read(//run/user/1000/**)"));
  EXPECT_TRUE(names(rules.unheld,
                    "Read and Edit below home /home/u: the policy re-allows "
                    "paths inside it (write[0] /home/u/src/shop)"));
  EXPECT_TRUE(names(rules.unheld,
                    "below runtime /run/user/1000: the policy re-allows paths "
                    "inside it (egress /run/user/1000/clawpatrol-sandbox/egress)"));
  // The deny entry inside the re-allowed path still holds.
  EXPECT_TRUE(has(rules.deny, "Read(//home/u/src/shop/.env/**)"));
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
                    "other than home /home/u itself"));
}

}  // namespace
}  // namespace sandbox_host::policy
