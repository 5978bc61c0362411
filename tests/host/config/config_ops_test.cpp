// [ops] and its [ops.<name>] tables: what load_config accepts, and its refusals.
#include "config_error.hpp"
#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using test::TempFile;
using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;
using Strings = std::vector<std::string>;

TEST(Config, OpTablesKeepTheFileOrderAsText) {
  // ops.enabled written after the table it allows.
  TempFile file(R"(
[ops.secret]
command = "/usr/local/bin/secrets"
args = ["get", 2, true]
requester_env = ["SOPS_AGE_KEY_FILE", "_x1"]
timeout = 0x1e
verbose = false
attempts = -3
empty = []
[ops]
enabled = ["ping", "secret"]
)",
                "config.toml");
  Config config = load_config(file.path());
  ASSERT_EQ(config.op_settings.size(), 1u);
  const OpSettings &secret = config.op_settings.at("secret");
  EXPECT_EQ(secret.requester_env, (Strings{"SOPS_AGE_KEY_FILE", "_x1"}));
  EXPECT_EQ(secret.entries, (Entries{{"command", {"/usr/local/bin/secrets"}},
                                     {"args", {"get", "2", "true"}},
                                     {"timeout", {"30"}},
                                     {"verbose", {"false"}},
                                     {"attempts", {"-3"}},
                                     {"empty", {}}}));
}

TEST(Config, OpTableEntriesFollowColumnsOnOneLine) {
  TempFile file("[ops]\nenabled = [\"secret\"]\nsecret = { zeta = 1, alpha = \"a\", mid = [] }\n",
                "config.toml");
  EXPECT_EQ(load_config(file.path()).op_settings.at("secret").entries,
            (Entries{{"zeta", {"1"}}, {"alpha", {"a"}}, {"mid", {}}}));
}

TEST(Config, OpTableOfTheDefaultPingNeedsNoEnabled) {
  TempFile file("[ops.ping]\nreply = \"pong\"\n", "config.toml");
  Config config = load_config(file.path());
  EXPECT_EQ(config.ops_enabled, Strings{"ping"});
  EXPECT_EQ(config.op_settings.at("ping").entries, (Entries{{"reply", {"pong"}}}));
  EXPECT_TRUE(config.op_settings.at("ping").requester_env.empty());
}

TEST(Config, OpTableMustBeEnabled) {
  // ops.enabled at its default ["ping"].
  EXPECT_EQ(error_of("[ops.secret]\ncommand = \"/bin/true\"\n"),
            ":1: ops.secret: not in ops.enabled; enable it there or remove the table");
  // ops.enabled written after the table, without it.
  EXPECT_EQ(error_of("[ops.secret]\ncommand = \"/bin/true\"\n[ops]\nenabled = [\"ping\"]\n"),
            ":1: ops.secret: not in ops.enabled; enable it there or remove the table");
  EXPECT_EQ(error_of("[ops]\nenabled = []\n\n[ops.ping]\n"),
            ":4: ops.ping: not in ops.enabled; enable it there or remove the table");
  // A table named only as the parent of another.
  EXPECT_EQ(error_of("[ops.vault.paths]\nroot = \"/\"\n"),
            ":1: ops.vault: not in ops.enabled; enable it there or remove the table");
  // The module-name rule applies to a table's name.
  EXPECT_EQ(error_of("[ops.Secret]\n"),
            ":1: ops.Secret: \"Secret\" is not a module name; allowed: module names of a-z, 0-9 "
            "and -");
  EXPECT_EQ(error_of("[ops.\"my op\"]\n"),
            ":1: ops.\"my op\": \"my op\" is not a module name; allowed: module names of a-z, "
            "0-9 and -");
}

TEST(Config, OpsAllowsOnlyEnabledAndTables) {
  EXPECT_EQ(error_of("[ops]\nenable = [\"ping\"]\n"),
            ":2: ops.enable: unknown key; allowed: enabled, [ops.<name>] tables of enabled "
            "operations");
  EXPECT_EQ(error_of("[ops]\nenabled = [\"secret\"]\nsecret = \"/bin/true\"\n"),
            ":3: ops.secret: must be a table, not a string");
}

TEST(Config, OpValuesAreStringsIntegersBooleansOrArraysOfThem) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "limits = { n = 1 }\n"),
            ":4: ops.secret.limits: must be a string, integer or boolean, or an array of them, "
            "not a table");
  EXPECT_EQ(error_of(head + "[ops.secret.limits]\nn = 1\n"),
            ":4: ops.secret.limits: must be a string, integer or boolean, or an array of them, "
            "not a table");
  EXPECT_EQ(error_of(head + "ratio = 0.5\n"),
            ":4: ops.secret.ratio: must be a string, integer or boolean, or an array of them, "
            "not a float");
  EXPECT_EQ(error_of(head + "since = 1979-05-27\n"),
            ":4: ops.secret.since: must be a string, integer or boolean, or an array of them, "
            "not a date or time");
  EXPECT_EQ(error_of(head + "args = [\n  \"get\",\n  \"x\",\n  { a = 1 },\n]\n"),
            ":7: ops.secret.args[2]: must be a string, integer or boolean, not a table");
  EXPECT_EQ(error_of(head + "args = [\"get\", [\"x\"]]\n"),
            ":4: ops.secret.args[1]: must be a string, integer or boolean, not an array");
  EXPECT_EQ(error_of(head + "args = [1.5]\n"),
            ":4: ops.secret.args[0]: must be a string, integer or boolean, not a float");
}

TEST(Config, OpKeysAreLowercaseNames) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "Command = \"/bin/true\"\n"),
            ":4: ops.secret.Command: \"Command\" is not a key of an operation; allowed: a-z, "
            "0-9, _ and -");
  EXPECT_EQ(error_of(head + "\"\" = 1\n"),
            ":4: ops.secret.\"\": \"\" is not a key of an operation; allowed: a-z, 0-9, _ and -");
  EXPECT_EQ(error_of(head + "\"a.b\" = 1\n"),
            ":4: ops.secret.\"a.b\": \"a.b\" is not a key of an operation; allowed: a-z, 0-9, _ "
            "and -");
  // The first bad key in the file is the one named.
  EXPECT_EQ(error_of(head + "ok = 1\nzz = 0.5\nBad = 1\n"),
            ":5: ops.secret.zz: must be a string, integer or boolean, or an array of them, not "
            "a float");
}

TEST(Config, RequesterEnvNamesVariables) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "requester_env = \"HOME\"\n"),
            ":4: ops.secret.requester_env: must be an array of strings (environment variable "
            "names), not a string");
  EXPECT_EQ(error_of(head + "requester_env = [\"HOME\", 1]\n"),
            ":4: ops.secret.requester_env[1]: must be a string (environment variable names), not "
            "an integer");
  EXPECT_EQ(error_of(head + "requester_env = [\n  \"TERM\",\n  \"MY-VAR\",\n]\n"),
            ":6: ops.secret.requester_env[1]: \"MY-VAR\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"1PASSWORD\"]\n"),
            ":4: ops.secret.requester_env[0]: \"1PASSWORD\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"\"]\n"),
            ":4: ops.secret.requester_env[0]: \"\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"A=B\"]\n"),
            ":4: ops.secret.requester_env[0]: \"A=B\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  // Empty is allowed: the operation gets none of the requester's variables.
  TempFile file(head + "requester_env = []\n", "config.toml");
  const Config config = load_config(file.path());
  const OpSettings &secret = config.op_settings.at("secret");
  EXPECT_TRUE(secret.requester_env.empty());
  EXPECT_TRUE(secret.entries.empty());
}

TEST(Config, RequesterEnvRefusesVariablesThatChangeHowTheCommandRuns) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  const std::string data = "; name only variables that carry data to the command";
  const std::string loader = ": the dynamic loader reads it and can load code into the command";
  const std::string libc = ": the C library reads it to load modules or data, or to tune itself";
  const std::string broker = ": the broker sets it for the command itself";
  const std::string shell = ": a shell reads it to run code or to change how it parses a script";
  const std::string interpreter = ": an interpreter reads it to load code or take options";
  const std::string git = ": git reads it as configuration, and some run commands";
  const std::map<std::string, std::string> refused = {
      {"LD_PRELOAD", ", as every LD_* is" + loader},
      {"LD_LIBRARY_PATH", ", as every LD_* is" + loader},
      {"LD_AUDIT", ", as every LD_* is" + loader},
      {"DYLD_INSERT_LIBRARIES", ", as every DYLD_* is" + loader},
      {"GCONV_PATH", libc},
      {"LOCPATH", libc},
      {"NLSPATH", libc},
      {"MALLOC_ARENA_MAX", ", as every MALLOC_* is" + libc},
      {"GLIBC_TUNABLES", libc},
      {"PATH", broker},
      {"HOME", broker},
      {"LANG", broker},
      {"BASH_ENV", shell},
      {"ENV", shell},
      {"SHELLOPTS", shell},
      {"BASHOPTS", shell},
      {"PS4", shell},
      {"IFS", shell},
      {"CDPATH", shell},
      {"BASH_FUNC_ls", ", as every BASH_FUNC_* is" + shell},
      {"PYTHONPATH", interpreter},
      {"PYTHONSTARTUP", interpreter},
      {"PYTHONHOME", interpreter},
      {"PERL5LIB", interpreter},
      {"PERL5OPT", interpreter},
      {"PERLLIB", interpreter},
      {"RUBYOPT", interpreter},
      {"RUBYLIB", interpreter},
      {"NODE_OPTIONS", interpreter},
      {"NODE_PATH", interpreter},
      {"JAVA_TOOL_OPTIONS", interpreter},
      {"_JAVA_OPTIONS", interpreter},
      {"GIT_SSH_COMMAND", ", as every GIT_* is" + git},
      {"GIT_CONFIG_COUNT", ", as every GIT_* is" + git},
      {"GIT_DIR", ", as every GIT_* is" + git},
  };
  for (const auto &[name, why] : refused) {
    EXPECT_EQ(error_of(head + "requester_env = [\"" + name + "\"]\n"),
              ":4: ops.secret.requester_env[0]: \"" + name + "\" is refused" + why + data);
  }
  // Named by its index, at its own line, after names that are taken.
  EXPECT_EQ(error_of(head + "requester_env = [\n  \"SOPS_AGE_KEY_FILE\",\n  \"LD_PRELOAD\",\n]\n"),
            ":6: ops.secret.requester_env[1]: \"LD_PRELOAD\" is refused, as every LD_* is" +
                loader + data);

  // Data variables are taken, those that only share a start with a refused one too.
  TempFile file(head +
                    "requester_env = [\"SOPS_AGE_KEY_FILE\", \"ALL_PROXY\", \"all_proxy\", "
                    "\"LDAP_URI\", \"GITHUB_TOKEN\", \"ENVIRONMENT\", \"PATH_INFO\"]\n",
                "config.toml");
  const Config config = load_config(file.path());
  EXPECT_EQ(config.op_settings.at("secret").requester_env,
            (std::vector<std::string>{"SOPS_AGE_KEY_FILE", "ALL_PROXY", "all_proxy", "LDAP_URI",
                                      "GITHUB_TOKEN", "ENVIRONMENT", "PATH_INFO"}));
}

}  // namespace
}  // namespace sandbox_host
