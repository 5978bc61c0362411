// The load errors of CommandRules an operator sees for a table written wrong, through
// person, the op that adds nothing to the rules.
#include "command_op_fixture.hpp"

namespace ops_test {
namespace {

using CommandRulesLoad = CommandOpTest;

TEST_F(CommandRulesLoad, LoadsWithTheCommandAlone) {
  EXPECT_EQ(load_error("person", with_command()), "");
}

TEST_F(CommandRulesLoad, RefusesAMissingCommand) {
  EXPECT_EQ(load_error("person", {}),
            "ops.person.command: required: the absolute path of the command");
}

TEST_F(CommandRulesLoad, RefusesARelativeCommand) {
  EXPECT_EQ(load_error("person", {{"command", {"bin/tool"}}}),
            "ops.person.command: \"bin/tool\" is not an absolute path");
}

TEST_F(CommandRulesLoad, RefusesACommandThatDoesNotExist) {
  const std::string missing = (dir.path() / "missing").string();
  EXPECT_EQ(load_error("person", {{"command", {missing}}}),
            "ops.person.command: \"" + missing + "\" does not exist");
}

TEST_F(CommandRulesLoad, RefusesANonExecutableCommand) {
  const std::string plain = dir.file("plain", "#!/bin/sh\n", 0644);
  EXPECT_EQ(load_error("person", {{"command", {plain}}}),
            "ops.person.command: \"" + plain + "\" is not executable");
}

TEST_F(CommandRulesLoad, RefusesADirectoryAsCommand) {
  EXPECT_EQ(load_error("person", {{"command", {dir.path().string()}}}),
            "ops.person.command: \"" + dir.path().string() + "\" is not a regular file");
}

TEST_F(CommandRulesLoad, RefusesSeveralCommands) {
  EXPECT_EQ(load_error("person", {{"command", {tool, tool}}}),
            "ops.person.command: must be one value, not an array");
}

TEST_F(CommandRulesLoad, RefusesAnUnknownKeyNamingTheAllowedOnes) {
  EXPECT_EQ(load_error("person", with_command({{"wait_arg", {"--wait"}}})),
            "ops.person.wait_arg: unknown key; allowed: command, args, subcommands, arg_pattern, "
            "allow_options, end_of_options, max_args, max_arg_bytes, env, path, cwd, timeout_ms, "
            "input");
}

TEST_F(CommandRulesLoad, RefusesAnOptionsKeyThatIsNotABoolean) {
  EXPECT_EQ(load_error("person", with_command({{"allow_options", {"yes"}}})),
            "ops.person.allow_options: must be true or false, not \"yes\"");
  EXPECT_EQ(load_error("person", with_command({{"end_of_options", {"1"}}})),
            "ops.person.end_of_options: must be true or false, not \"1\"");
}

TEST_F(CommandRulesLoad, RefusesAnInvalidArgPattern) {
  const std::string error = load_error("person", with_command({{"arg_pattern", {"[a-z"}}}));
  EXPECT_TRUE(
      error.starts_with("ops.person.arg_pattern: \"[a-z\" is not an RE2 regular expression ("))
      << error;
}

// A back-reference needs a backtracking matcher, which RE2 is not.
TEST_F(CommandRulesLoad, RefusesABackReferenceInTheArgPattern) {
  const std::string error = load_error("person", with_command({{"arg_pattern", {"^(a)\\1$"}}}));
  EXPECT_TRUE(error.starts_with(
      "ops.person.arg_pattern: \"^(a)\\\\1$\" is not an RE2 regular expression ("))
      << error;
}

TEST_F(CommandRulesLoad, RefusesARelativeCwd) {
  EXPECT_EQ(load_error("person", with_command({{"cwd", {"work"}}})),
            "ops.person.cwd: must be an absolute directory or \"requester\", not \"work\"");
}

TEST_F(CommandRulesLoad, RefusesACwdThatIsNoDirectory) {
  EXPECT_EQ(load_error("person", with_command({{"cwd", {tool}}})),
            "ops.person.cwd: \"" + tool + "\" is not a directory");
}

TEST_F(CommandRulesLoad, RefusesNumbersOutOfRangeOrMalformed) {
  EXPECT_EQ(load_error("person", with_command({{"max_args", {"1025"}}})),
            "ops.person.max_args: must be a whole number from 0 to 1024, not \"1025\"");
  EXPECT_EQ(load_error("person", with_command({{"max_arg_bytes", {"0"}}})),
            "ops.person.max_arg_bytes: must be a whole number from 1 to 65536, not \"0\"");
  EXPECT_EQ(load_error("person", with_command({{"timeout_ms", {"86400001"}}})),
            "ops.person.timeout_ms: must be a whole number from 0 to 86400000, not \"86400001\"");
  EXPECT_EQ(load_error("person", with_command({{"max_args", {"-1"}}})),
            "ops.person.max_args: must be a whole number from 0 to 1024, not \"-1\"");
  EXPECT_EQ(load_error("person", with_command({{"timeout_ms", {"1.5"}}})),
            "ops.person.timeout_ms: must be a whole number from 0 to 86400000, not \"1.5\"");
}

TEST_F(CommandRulesLoad, RefusesAnInputThatIsNotABoolean) {
  EXPECT_EQ(load_error("person", with_command({{"input", {"yes"}}})),
            "ops.person.input: must be true or false, not \"yes\"");
}

TEST_F(CommandRulesLoad, RefusesAMalformedEnvEntry) {
  const std::string why =
      " is not NAME=VALUE with NAME of letters, digits and _, not starting "
      "with a digit";
  EXPECT_EQ(load_error("person", with_command({{"env", {"NOVALUE"}}})),
            "ops.person.env: \"NOVALUE\"" + why);
  EXPECT_EQ(load_error("person", with_command({{"env", {"1X=a"}}})),
            "ops.person.env: \"1X=a\"" + why);
  EXPECT_EQ(load_error("person", with_command({{"env", {"A-B=a"}}})),
            "ops.person.env: \"A-B=a\"" + why);
}

}  // namespace
}  // namespace ops_test
