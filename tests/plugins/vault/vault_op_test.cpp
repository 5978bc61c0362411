// vault answers whether the broker holds a session from the session file's metadata and
// the variable's presence, and never lets a byte of the session out.
#include "op_harness.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace ops_test {
namespace {

constexpr const char *kSession = "BW_SESSION_CONTENT_4f1e9a";

class VaultOp : public ::testing::Test {
 protected:
  Outcome ask_vault(const sandbox_host::ModuleSettings &settings) const {
    Op vault("vault", settings);
    return vault.handle({});
  }
  Outcome ask_file(const std::string &file) const { return ask_vault({{"session_file", {file}}}); }

  TempDir dir;
  ScopedEnv unset{"SANDBOX_HOST_OPS_SESSION", std::nullopt};
};

void expect_held(const Outcome &outcome) {
  EXPECT_EQ(outcome.status, SH_OK) << outcome.error;
  EXPECT_EQ(outcome.out, "held\n");
  EXPECT_EQ(outcome.err, "");
  EXPECT_EQ(outcome.code, 0);
  EXPECT_TRUE(outcome.runs.empty());
}

void expect_none(const Outcome &outcome, const std::string &why) {
  EXPECT_EQ(outcome.status, SH_OK) << outcome.error;
  EXPECT_EQ(outcome.out, "none\n");
  EXPECT_EQ(outcome.err, why + "\n");
  EXPECT_EQ(outcome.code, 1);
  EXPECT_TRUE(outcome.runs.empty());
}

TEST_F(VaultOp, HoldsAPrivateSessionFile) {
  expect_held(ask_file(dir.file("session", kSession, 0600)));
  expect_held(ask_file(dir.file("readonly", kSession, 0400)));
}

TEST_F(VaultOp, RefusesASessionFileOthersCanRead) {
  const std::string file = dir.file("session", kSession, 0644);
  expect_none(ask_file(file), "session file " + file + " is readable by others (mode 0644)");
}

TEST_F(VaultOp, RefusesASessionFileItsGroupCanReadOrAnyoneWrite) {
  const std::string group = dir.file("group", kSession, 0640);
  expect_none(ask_file(group), "session file " + group + " is readable by its group (mode 0640)");
  const std::string writable = dir.file("writable", kSession, 0602);
  expect_none(ask_file(writable),
              "session file " + writable + " is open to its group or others (mode 0602)");
}

TEST_F(VaultOp, HoldsNoSessionWithoutTheFile) {
  const std::string file = (dir.path() / "missing").string();
  expect_none(ask_file(file), "no session file " + file);
}

TEST_F(VaultOp, HoldsNoSessionInAnEmptyFile) {
  const std::string file = dir.file("session", "", 0600);
  expect_none(ask_file(file), "session file " + file + " is empty");
}

TEST_F(VaultOp, RefusesASymlinkOrDirectoryAsTheSessionFile) {
  const std::string target = dir.file("session", kSession, 0600);
  const std::string link = (dir.path() / "link").string();
  std::filesystem::create_symlink(target, link);
  expect_none(ask_file(link), "session file " + link + " is not a regular file");
  expect_none(ask_file(dir.path().string()),
              "session file " + dir.path().string() + " is not a regular file");
}

TEST_F(VaultOp, RefusesASessionFileOfAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
  const std::string file = dir.file("session", kSession, 0600);
  ASSERT_EQ(chown(file.c_str(), 65534, 65534), 0);
  expect_none(ask_file(file),
              "session file " + file + " is owned by uid 65534, not the broker's uid 0");
}

TEST_F(VaultOp, HoldsASessionInTheBrokersVariable) {
  ScopedEnv session("SANDBOX_HOST_OPS_SESSION", kSession);
  expect_held(ask_vault({{"session_env", {"SANDBOX_HOST_OPS_SESSION"}}}));
}

TEST_F(VaultOp, ReadsTheVariableAtTheRequestNotAtLoad) {
  Op vault("vault", {{"session_env", {"SANDBOX_HOST_OPS_SESSION"}}});
  expect_none(vault.handle({}), "SANDBOX_HOST_OPS_SESSION is not set in the broker's environment");
  ScopedEnv session("SANDBOX_HOST_OPS_SESSION", kSession);
  expect_held(vault.handle({}));
}

TEST_F(VaultOp, HoldsNoSessionInAnEmptyVariable) {
  ScopedEnv session("SANDBOX_HOST_OPS_SESSION", "");
  expect_none(ask_vault({{"session_env", {"SANDBOX_HOST_OPS_SESSION"}}}),
              "SANDBOX_HOST_OPS_SESSION is empty in the broker's environment");
}

TEST_F(VaultOp, HoldsWhenEitherSourceDoes) {
  const std::string file = dir.file("session", kSession, 0644);
  const sandbox_host::ModuleSettings both{{"session_file", {file}},
                                          {"session_env", {"SANDBOX_HOST_OPS_SESSION"}}};
  expect_none(ask_vault(both), "session file " + file +
                                   " is readable by others (mode 0644); SANDBOX_HOST_OPS_SESSION "
                                   "is not set in the broker's environment");
  ScopedEnv session("SANDBOX_HOST_OPS_SESSION", kSession);
  expect_held(ask_vault(both));
}

TEST_F(VaultOp, NeverRepliesAnyOfTheSession) {
  const std::string readable = dir.file("readable", kSession, 0644);
  const std::string private_file = dir.file("private", kSession, 0600);
  ScopedEnv session("SANDBOX_HOST_OPS_SESSION", kSession);
  for (const auto &settings :
       std::vector<sandbox_host::ModuleSettings>{{{"session_file", {readable}}},
                                                 {{"session_file", {private_file}}},
                                                 {{"session_env", {"SANDBOX_HOST_OPS_SESSION"}}}}) {
    const Outcome outcome = ask_vault(settings);
    for (const auto &text : {outcome.out, outcome.err, outcome.error}) {
      EXPECT_EQ(text.find("4f1e9a"), std::string::npos) << text;
    }
  }
}

TEST_F(VaultOp, RefusesArguments) {
  Op vault("vault", {{"session_env", {"SANDBOX_HOST_OPS_SESSION"}}});
  Call call;
  call.request.args = {"--print"};
  const Outcome outcome = vault.handle(call);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(outcome.error, "vault: takes no arguments");
  EXPECT_EQ(outcome.out, "");
}

TEST_F(VaultOp, RefusesToLoadWithoutASource) {
  EXPECT_EQ(load_error("vault", {}), "ops.vault: set session_file, session_env or both");
}

TEST_F(VaultOp, RefusesToLoadWithABadSource) {
  EXPECT_EQ(load_error("vault", {{"session_file", {"session"}}}),
            "ops.vault.session_file: must be an absolute path, not \"session\"");
  EXPECT_EQ(load_error("vault", {{"session_env", {"BW-SESSION"}}}),
            "ops.vault.session_env: \"BW-SESSION\" is not a variable name");
  EXPECT_EQ(load_error("vault", {{"session_env", {"BW_SESSION"}}, {"command", {"/bin/cat"}}}),
            "ops.vault.command: unknown key; allowed: session_file, session_env");
}

}  // namespace
}  // namespace ops_test
