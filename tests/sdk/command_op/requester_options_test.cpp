// A requester's arguments never become options of the host command unless the operator says
// so: through every op that runs one, with a real command (a script that prints the argv it
// got) run by the broker's own runner.
#include "command_op_fixture.hpp"

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace ops_test {
namespace {

// How one op is asked: its settings, what a request carries besides its free arguments,
// and the argv its command gets around them.
struct OpCase {
  std::string op{};
  sandbox_host::ModuleSettings settings{};
  std::vector<std::string> subcommand{};  // the request's first argument, for an op with a list
  std::string wait{}, resource{};
  bool stream = false;
  std::vector<std::string> before{};  // the fixed arguments, the subcommand, the op's options
  bool end_of_options = true;         // the op's default
  std::vector<std::string> after{};   // the op's operands
};

std::ostream &operator<<(std::ostream &out, const OpCase &c) {
  return out << c.op;
}

const OpCase kCases[] = {
    {.op = "secret",
     .settings = {{"args", {"secret"}}},
     .before = {"secret"},
     .end_of_options = false},
    {.op = "gate",
     .settings = {{"args", {"gate"}}, {"wait_arg", {"--wait"}}},
     .wait = "15m",
     .before = {"gate", "--wait", "15m"}},
    {.op = "agents",
     .settings = {{"args", {"agents"}}},
     .subcommand = {"start"},
     .before = {"agents", "start"}},
    {.op = "watch", .settings = {{"args", {"watch"}}}, .stream = true, .before = {"watch"}},
    {.op = "lab",
     .settings = {{"args", {"lab"}}},
     .subcommand = {"create"},
     .resource = "lab-3",
     .before = {"lab", "create"},
     .after = {"lab-3"}},
    {.op = "person", .settings = {{"args", {"person"}}}, .before = {"person"}},
};

// Prints each argument it got on a line of its own.
constexpr const char *kPrintArgv =
    "#!/bin/sh\nfor a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done\n";

class RequesterOptions : public CommandOpTest, public ::testing::WithParamInterface<OpCase> {
 protected:
  // The op as its case sets it up, with more settings, running the argv printer.
  Op op(const sandbox_host::ModuleSettings &more = {}) const {
    sandbox_host::ModuleSettings settings{{"command", {printer}}};
    settings.insert(settings.end(), GetParam().settings.begin(), GetParam().settings.end());
    settings.insert(settings.end(), more.begin(), more.end());
    return Op(GetParam().op, settings);
  }

  // A request with these free arguments, run for real.
  static Call request(const std::vector<std::string> &args) {
    const OpCase &c = GetParam();
    Call call = ask(c.subcommand);
    call.request.args.insert(call.request.args.end(), args.begin(), args.end());
    call.request.wait = c.wait;
    call.request.resource = c.resource;
    call.request.stream = c.stream;
    call.streaming = c.stream;
    call.execute = true;
    return call;
  }

  // The argv the command printed; a failure when it did not run to a clean end.
  static std::vector<std::string> argv_seen(const Outcome &outcome) {
    ran(outcome);
    EXPECT_EQ(outcome.code, 0) << outcome.err;
    std::vector<std::string> argv;
    std::istringstream lines(outcome.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_TRUE(line.starts_with("arg=")) << line;
      argv.push_back(line.substr(4));
    }
    return argv;
  }

  // The argv the case's command gets for free arguments args, with or without "--".
  static std::vector<std::string> expected(const std::vector<std::string> &args,
                                           bool end_of_options) {
    const OpCase &c = GetParam();
    std::vector<std::string> argv = c.before;
    if (end_of_options) argv.push_back("--");
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), c.after.begin(), c.after.end());
    return argv;
  }

  // The position of free argument i (from 0) in the request.
  static std::string position(size_t i) {
    return std::to_string(GetParam().subcommand.size() + i + 1);
  }

  const std::string printer = dir.file("print-argv", kPrintArgv, 0755);
};

TEST_P(RequesterOptions, RefusesAnOptionByDefault) {
  const std::string &name = GetParam().op;
  for (const std::string option : {"--flag=x", "-x", "--", "-"}) {
    EXPECT_EQ(refusal_of(op().handle(request({"plain", option}))),
              name + ": argument " + position(1) + " (\"" + option +
                  "\") starts with \"-\", which the command would read as an option; ops." + name +
                  ".allow_options = true allows options");
  }
}

TEST_P(RequesterOptions, PassesAPlainArgumentAfterTheEndOfOptionsMarker) {
  EXPECT_EQ(argv_seen(op().handle(request({"plain", "a-b", "x=--y"}))),
            expected({"plain", "a-b", "x=--y"}, GetParam().end_of_options));
}

TEST_P(RequesterOptions, PassesOptionsWhenTheOperatorAllowsThem) {
  EXPECT_EQ(argv_seen(op({{"allow_options", {"true"}}}).handle(request({"--flag=x", "-"}))),
            expected({"--flag=x", "-"}, false));
}

TEST_P(RequesterOptions, TakesTheOperatorsEndOfOptions) {
  EXPECT_EQ(argv_seen(op({{"end_of_options", {"true"}}}).handle(request({"plain"}))),
            expected({"plain"}, true));
  EXPECT_EQ(argv_seen(op({{"end_of_options", {"false"}}}).handle(request({"plain"}))),
            expected({"plain"}, false));
}

// Both: arguments that start with "-" reach the command, as operands only.
TEST_P(RequesterOptions, PassesOptionsAsOperandsWithBothKeys) {
  const Op both = op({{"allow_options", {"true"}}, {"end_of_options", {"true"}}});
  EXPECT_EQ(argv_seen(both.handle(request({"--flag=x"}))), expected({"--flag=x"}, true));
}

// A pattern written for the characters of names would match options too.
TEST_P(RequesterOptions, AnArgPatternThatMatchesAnOptionDoesNotAllowIt) {
  const Op patterned = op({{"arg_pattern", {"^[A-Za-z0-9._/:=@-]+$"}}});
  EXPECT_TRUE(refusal_of(patterned.handle(request({"--flag=x"})))
                  .ends_with("starts with \"-\", which the command would read as an option; ops." +
                             GetParam().op + ".allow_options = true allows options"));
}

TEST_P(RequesterOptions, QuotesOnlyTheStartOfAHugeOption) {
  const std::string huge = "--\x1b" + std::string(4000, 'a');
  EXPECT_EQ(refusal_of(op().handle(request({huge}))),
            GetParam().op + ": argument " + position(0) + " (\"--\\x1b" + std::string(61, 'a') +
                "\"... (4003 bytes)) starts with \"-\", which the command would read as an "
                "option; ops." +
                GetParam().op + ".allow_options = true allows options");
}

INSTANTIATE_TEST_SUITE_P(Ops, RequesterOptions, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<OpCase> &info) {
                           return info.param.op;
                         });

}  // namespace
}  // namespace ops_test
