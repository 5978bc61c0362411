// The generated profiles pass the Linux-side SBPL check (sbpl_check.hpp), and the check
// itself catches the mistakes it is there for.
#include "sbpl_check.hpp"
#include "golden_cases.hpp"

#include "seatbelt_profile.hpp"

#include <gtest/gtest.h>

namespace sandbox_host::seatbelt::test {
namespace {

std::vector<std::string> names_of(const Profile &profile) {
  std::vector<std::string> names;
  for (const auto &parameter : profile.parameters) names.push_back(parameter.name);
  return names;
}

TEST(SbplCheck, EveryGoldenProfileIsWellFormedAndItsParametersMatchItsDefines) {
  for (const auto &golden : golden_cases()) {
    const Profile profile = make_profile(golden.spec);
    EXPECT_EQ(sbpl_problems(profile.text, names_of(profile)), std::vector<std::string>{})
        << golden.name;
    // The same, read back from the arguments as sandbox-exec's getopt would.
    std::vector<std::string> args = define_arguments(profile.parameters);
    args.insert(args.end(), {"-p", profile.text, "--", golden.spec.binary_path});
    const SandboxExecInvocation invocation = parse_sandbox_exec_args(args);
    std::vector<std::string> defined;
    for (size_t i = 0; i < invocation.defines.size(); ++i) {
      defined.push_back(invocation.defines[i].first);
      EXPECT_EQ(invocation.defines[i].second, profile.parameters[i].value) << golden.name;
    }
    EXPECT_EQ(sbpl_problems(invocation.profile, defined), std::vector<std::string>{})
        << golden.name;
  }
}

const std::string kHeader = "(version 1)\n(deny default)\n";

std::vector<std::string> problems(const std::string &rules,
                                  const std::vector<std::string> &defined = {"A"}) {
  return sbpl_problems(kHeader + "(allow file-read* (subpath (param \"A\")))\n" + rules, defined);
}

// problems() found exactly one problem, containing `what`.
void expect_one(const std::vector<std::string> &found, const std::string &what) {
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find(what), std::string::npos) << found[0];
}

TEST(SbplCheck, AcceptsAWellFormedProfile) {
  EXPECT_EQ(problems("; a comment\n(allow network-outbound (remote ip \"localhost:8080\"))\n"),
            std::vector<std::string>{});
}

TEST(SbplCheck, FindsUnbalancedParentheses) {
  expect_one(problems("(allow file-read* (literal \"/x\")"), "this '(' is never closed");
  expect_one(problems("(allow process-fork))"), "a ')' closes nothing");
}

TEST(SbplCheck, FindsAnUnclosedString) {
  expect_one(problems("(allow file-read* (literal \"/x))"), "this string is never closed");
}

TEST(SbplCheck, FindsAParameterWithoutDefineAndADefineNeverUsed) {
  expect_one(problems("(allow file-read* (literal (param \"B\")))"), "(param \"B\") has no -D");
  expect_one(problems("", {"A", "UNUSED"}), "-D UNUSED is defined but the profile never uses it");
  expect_one(problems("", {"A", "A"}), "-D A is defined twice");
}

TEST(SbplCheck, FindsUnknownOperationsAndFilters) {
  expect_one(problems("(allow file-reed* (literal \"/x\"))"), "unknown operation file-reed*");
  expect_one(problems("(allow file-read* (subpth \"/x\"))"), "not a filter this profile may use");
  expect_one(problems("(allow file-read* (global-name \"com.apple.x\"))"),
             "filter global-name does not apply to every operation of its rule");
  expect_one(problems("(allow network-outbound (remote unix \"/x\"))"),
             "unknown address family unix");
  expect_one(problems("(allow network-outbound (remote ip \"example.com:443\"))"),
             "an IP address filter is");
}

TEST(SbplCheck, FindsRelativePathsAndAMissingHeader) {
  expect_one(problems("(allow file-read* (subpath \"usr/lib\"))"), "is not absolute");
  EXPECT_EQ(sbpl_problems("(allow process-fork)\n", {}).size(), 2u);
}

TEST(SbplCheck, ReadsSandboxExecArgumentsAsGetoptWould) {
  const auto invocation = parse_sandbox_exec_args(
      {"-D", "A=/x=y", "-p", "(version 1)", "--", "/bin/plugin", "-p", "-D"});
  ASSERT_EQ(invocation.defines.size(), 1u);
  EXPECT_EQ(invocation.defines[0].first, "A");
  EXPECT_EQ(invocation.defines[0].second, "/x=y");
  EXPECT_EQ(invocation.profile, "(version 1)");
  EXPECT_EQ(invocation.command, (std::vector<std::string>{"/bin/plugin", "-p", "-D"}));
  EXPECT_THROW(parse_sandbox_exec_args({"-D", "A", "-p", "p", "/bin/x"}), std::invalid_argument);
  EXPECT_THROW(parse_sandbox_exec_args({"-f", "file", "/bin/x"}), std::invalid_argument);
  EXPECT_THROW(parse_sandbox_exec_args({"-p", "a", "-p", "b", "/bin/x"}), std::invalid_argument);
  EXPECT_THROW(parse_sandbox_exec_args({"-p", "a"}), std::invalid_argument);
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
