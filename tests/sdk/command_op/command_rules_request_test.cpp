// What CommandRules make of a request, through person, the op that adds nothing to them:
// the command's argv, environment, directory, timeout and input, and every refusal.
#include "command_op_fixture.hpp"

#include <chrono>
#include <string>

namespace ops_test {
namespace {

using CommandRulesRequest = CommandOpTest;
using std::chrono::milliseconds;

TEST_F(CommandRulesRequest, RunsTheFixedArgumentsThenTheEndOfOptionsThenTheRequests) {
  Op person("person", with_command({{"args", {"person", "--org", "acme"}}}));
  const auto command = ran(person.handle(ask({"list", "json"})));
  EXPECT_EQ(command.path, tool);
  EXPECT_EQ(command.args,
            (std::vector<std::string>{"person", "--org", "acme", "--", "list", "json"}));
}

TEST_F(CommandRulesRequest, AddsNoEndOfOptionsWithoutRequesterArguments) {
  Op person("person", with_command({{"args", {"person", "list"}}}));
  EXPECT_EQ(ran(person.handle(ask())).args, (std::vector<std::string>{"person", "list"}));
}

TEST_F(CommandRulesRequest, RefusesAnOptionNamingTheKeyThatAllowsIt) {
  Op person("person", with_command({{"args", {"person"}}}));
  EXPECT_EQ(refusal_of(person.handle(ask({"list", "--json"}))),
            "person: argument 2 (\"--json\") starts with \"-\", which the command would read as "
            "an option; ops.person.allow_options = true allows options");
  Op allowing("person", with_command({{"args", {"person"}}, {"allow_options", {"true"}}}));
  EXPECT_EQ(ran(allowing.handle(ask({"list", "--json"}))).args,
            (std::vector<std::string>{"person", "list", "--json"}));
}

TEST_F(CommandRulesRequest, PassesArgumentsAsTheyAreWithoutAShell) {
  Op person("person", with_command());
  const auto command = ran(person.handle(ask({"$(id)", "a b", "; rm -rf /", ""})));
  EXPECT_EQ(command.args, (std::vector<std::string>{"--", "$(id)", "a b", "; rm -rf /", ""}));
}

TEST_F(CommandRulesRequest, ScrubsTheBrokersEnvironment) {
  Op person("person", with_command());
  const auto command = ran(person.handle(ask()));
  EXPECT_EQ(command.env, base_env());
  for (const auto &entry : command.env) EXPECT_FALSE(entry.starts_with("SANDBOX_HOST_OPS_LEAK="));
}

TEST_F(CommandRulesRequest, TakesHomeAsItWasAtLoad) {
  Op person("person", with_command());
  ScopedEnv later("HOME", "/somewhere/else");
  EXPECT_EQ(ran(person.handle(ask())).env, base_env());
}

TEST_F(CommandRulesRequest, LeavesOutARelativeHome) {
  ScopedEnv relative("HOME", "home/broker");
  Op person("person", with_command());
  EXPECT_EQ(ran(person.handle(ask())).env,
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}));
}

TEST_F(CommandRulesRequest, SetsTheConfiguredPath) {
  Op person("person", with_command({{"path", {"/opt/tools/bin"}}}));
  EXPECT_EQ(ran(person.handle(ask())).env.front(), "PATH=/opt/tools/bin");
}

TEST_F(CommandRulesRequest, AddsTheRequesterVariablesThenTheOperatorsWhichWin) {
  Op person("person", with_command({{"env", {"GH_HOST=github.example", "LANG=en_GB.UTF-8"}}}));
  Call call = ask();
  call.requester_env = {"GH_HOST=github.com", "LANG=fr_FR.UTF-8", "TERM=xterm"};
  EXPECT_EQ(ran(person.handle(call)).env,
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/broker",
                                      "LANG=en_GB.UTF-8", "GH_HOST=github.example", "TERM=xterm"}));
}

TEST_F(CommandRulesRequest, RunsInSlashByDefault) {
  Op person("person", with_command());
  const auto command = ran(person.handle(ask()));
  EXPECT_EQ(command.cwd, "/");
  EXPECT_FALSE(command.cwd_of_requester);
}

TEST_F(CommandRulesRequest, RunsInTheConfiguredDirectory) {
  Op person("person", with_command({{"cwd", {dir.path().string()}}}));
  EXPECT_EQ(ran(person.handle(ask())).cwd, dir.path().string());
}

TEST_F(CommandRulesRequest, RunsInTheRequestersDirectoryWhenTold) {
  Op person("person", with_command({{"cwd", {"requester"}}}));
  const auto command = ran(person.handle(ask()));
  EXPECT_TRUE(command.cwd_of_requester);
  EXPECT_EQ(command.cwd, "");
}

TEST_F(CommandRulesRequest, TimesOutAfterFiveMinutesByDefault) {
  Op person("person", with_command());
  EXPECT_EQ(ran(person.handle(ask())).timeout, milliseconds(300000));
}

TEST_F(CommandRulesRequest, TakesTheConfiguredTimeout) {
  Op limited("person", with_command({{"timeout_ms", {"1500"}}}));
  EXPECT_EQ(ran(limited.handle(ask())).timeout, milliseconds(1500));
  Op unlimited("person", with_command({{"timeout_ms", {"0"}}}));
  EXPECT_EQ(ran(unlimited.handle(ask())).timeout, milliseconds(0));
}

TEST_F(CommandRulesRequest, RefusesMoreArgumentsThanMaxArgs) {
  Op person("person", with_command());
  EXPECT_EQ(refusal_of(person.handle(ask(std::vector<std::string>(33, "a")))),
            "person: 33 arguments, more than max_args 32");
  // The 32 and "--".
  EXPECT_EQ(ran(person.handle(ask(std::vector<std::string>(32, "a")))).args.size(), 33u);
  Op none("person", with_command({{"max_args", {"0"}}}));
  EXPECT_EQ(refusal_of(none.handle(ask({"a"}))), "person: 1 argument, more than max_args 0");
}

TEST_F(CommandRulesRequest, RefusesAnArgumentLongerThanMaxArgBytes) {
  Op person("person", with_command());
  EXPECT_EQ(refusal_of(person.handle(ask({"a", std::string(4097, 'x')}))),
            "person: argument 2 is 4097 bytes, more than max_arg_bytes 4096");
  ran(person.handle(ask({"a", std::string(4096, 'x')})));
  Op tight("person", with_command({{"max_arg_bytes", {"3"}}}));
  EXPECT_EQ(refusal_of(tight.handle(ask({"abcd"}))),
            "person: argument 1 is 4 bytes, more than max_arg_bytes 3");
}

TEST_F(CommandRulesRequest, RefusesAnArgumentWithANulByte) {
  Op person("person", with_command());
  EXPECT_EQ(refusal_of(person.handle(ask({"ok", std::string("a\0b", 3)}))),
            "person: argument 2 contains a NUL byte");
}

TEST_F(CommandRulesRequest, RefusesAnArgumentNotMatchingTheWholePattern) {
  Op person("person", with_command({{"arg_pattern", {"[a-z]+"}}}));
  ran(person.handle(ask({"list", "all"})));
  EXPECT_EQ(refusal_of(person.handle(ask({"list", "all;"}))),
            "person: argument 2 (\"all;\") does not match arg_pattern [a-z]+");
}

TEST_F(CommandRulesRequest, QuotesOnlyTheStartOfAHugeArgument) {
  Op person("person", with_command({{"arg_pattern", {"^[a-z]+$"}}}));
  EXPECT_EQ(refusal_of(person.handle(ask({std::string(4000, 'x') + "!"}))),
            "person: argument 1 (\"" + std::string(64, 'x') +
                "\"... (4001 bytes)) does not match arg_pattern ^[a-z]+$");
}

// The cut never splits a character: a message stays valid UTF-8.
TEST_F(CommandRulesRequest, CutsAHugeArgumentOnACharactersBoundary) {
  Op person("person", with_command({{"arg_pattern", {"^[a-z]+$"}}}));
  EXPECT_EQ(refusal_of(person.handle(ask({std::string(63, 'x') + "\u00e9" + "!"}))),
            "person: argument 1 (\"" + std::string(63, 'x') +
                "\"... (66 bytes)) does not match arg_pattern ^[a-z]+$");
}

TEST_F(CommandRulesRequest, QuotesControlBytesInARefusal) {
  Op person("person", with_command({{"arg_pattern", {"^[a-z]+$"}}}));
  EXPECT_EQ(refusal_of(person.handle(ask({"a\"b\\c\n\x1b[2J"}))),
            "person: argument 1 (\"a\\\"b\\\\c\\x0a\\x1b[2J\") does not match arg_pattern "
            "^[a-z]+$");
}

// A recursive matcher (libstdc++'s) overflows an 8 MiB stack at about 30 000 characters.
TEST_F(CommandRulesRequest, MatchesTheLongestArgumentWithoutExhaustingTheStack) {
  Op person("person", with_command({{"max_arg_bytes", {"65536"}}, {"arg_pattern", {"^(a|b)+$"}}}));
  ran(person.handle(ask({std::string(65536, 'a')})));
  EXPECT_EQ(refusal_of(person.handle(ask({std::string(65535, 'a') + "c"}))).substr(0, 30),
            "person: argument 1 (\"aaaaaaaaa");
}

// A pattern a backtracking matcher takes exponential time on (each 'a' matched either
// way), against an argument that almost matches: RE2 answers in time linear in the text.
TEST_F(CommandRulesRequest, ANestedRepetitionDoesNotBacktrack) {
  Op person("person", with_command({{"max_arg_bytes", {"65536"}}, {"arg_pattern", {"^(a|aa)+$"}}}));
  ran(person.handle(ask({std::string(65536, 'a')})));
  EXPECT_EQ(refusal_of(person.handle(ask({std::string(65535, 'a') + "b"}))).substr(0, 30),
            "person: argument 1 (\"aaaaaaaaa");
}

TEST_F(CommandRulesRequest, RefusesInputUnlessTheOperatorAllowsIt) {
  Op person("person", with_command());
  Call call = ask();
  call.request.input = "payload";
  EXPECT_EQ(refusal_of(person.handle(call)), "person: takes no input (ops.person.input is false)");
  Op with_input("person", with_command({{"input", {"true"}}}));
  EXPECT_EQ(ran(with_input.handle(call)).input, "payload");
}

TEST_F(CommandRulesRequest, RepliesWhatTheRunnerCouldNotDo) {
  Op person("person", with_command());
  Call call = ask({"list"});
  call.run_status = SH_ERROR;
  call.run_error = "ran past its timeout of 300000 ms";
  const Outcome outcome = person.handle(call);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(outcome.error, "ran past its timeout of 300000 ms");
  EXPECT_EQ(outcome.runs.size(), 1u);
}

}  // namespace
}  // namespace ops_test
