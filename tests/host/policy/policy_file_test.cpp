// The policy file: a good one read whole, and every kind of bad entry refused with the file,
// the line, the entry and what was wrong.
#include "fixtures.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

namespace sandbox_host::policy {
namespace {

namespace fs = std::filesystem;
using sandbox_host::test::TempFile;

// The error parse_policy gives text as policy.toml, or "" when it is accepted.
std::string error_of(const std::string &text) {
  try {
    parse_policy(text, "policy.toml");
  } catch (const PolicyError &e) {
    return e.what();
  }
  return "";
}

TEST(PolicyFile, FullFileLoads) {
  TempFile file(R"(home = "/home/u"
runtime = "/run/user/1000"
harness = "/home/u/.claude"
exe = "/usr/bin/sandbox-host"
egress = "/run/user/1000/clawpatrol-sandbox/egress"
read = ["/home/u/.gitconfig", "/home/u/.claude"]
write = ["/home/u/src", "/home/u/.local/state/sandbox-host"]
deny = ["/home/u/.local/state/sandbox-host/scan"]
tool_write = ["/home/u/.claude/projects/*/memory", "/home/u/.claude/plans"]
domains = ["github.com", "*.githubusercontent.com"]
proxy_port = 3128
[vars]
GIT_CONFIG_GLOBAL = "/home/u/dotfiles/gitconfig"
EMPTY = ""
)",
                "policy.toml");
  const Policy policy = load_policy(file.path());
  EXPECT_EQ(policy.source, file.path().string());
  EXPECT_EQ(policy.home, "/home/u");
  EXPECT_EQ(policy.runtime, "/run/user/1000");
  EXPECT_EQ(policy.harness, "/home/u/.claude");
  EXPECT_EQ(policy.exe, "/usr/bin/sandbox-host");
  EXPECT_EQ(policy.egress, "/run/user/1000/clawpatrol-sandbox/egress");
  EXPECT_EQ(policy.read, (std::vector<std::string>{"/home/u/.gitconfig", "/home/u/.claude"}));
  EXPECT_EQ(policy.write,
            (std::vector<std::string>{"/home/u/src", "/home/u/.local/state/sandbox-host"}));
  EXPECT_EQ(policy.deny, (std::vector<std::string>{"/home/u/.local/state/sandbox-host/scan"}));
  EXPECT_EQ(policy.tool_write, (std::vector<std::string>{"/home/u/.claude/projects/*/memory",
                                                         "/home/u/.claude/plans"}));
  EXPECT_EQ(policy.domains, (std::vector<std::string>{"github.com", "*.githubusercontent.com"}));
  EXPECT_EQ(policy.proxy_port, 3128);
  EXPECT_EQ(policy.vars, (std::map<std::string, std::string>{
                             {"EMPTY", ""}, {"GIT_CONFIG_GLOBAL", "/home/u/dotfiles/gitconfig"}}));
}

TEST(PolicyFile, OnlyHomeIsRequired) {
  const Policy policy = parse_policy("home = \"/home/u\"\n", "policy.toml");
  EXPECT_EQ(policy.home, "/home/u");
  EXPECT_TRUE(policy.runtime.empty());
  EXPECT_TRUE(policy.write.empty());
  EXPECT_EQ(policy.proxy_port, 0);
  EXPECT_EQ(policy.source, "policy.toml");
}

TEST(PolicyFile, MissingFileNamesIt) {
  TempFile dir("", "unused");
  const fs::path missing = dir.dir() / "agent-policy.toml";
  try {
    load_policy(missing);
    FAIL() << "a missing file loaded";
  } catch (const PolicyError &e) {
    EXPECT_EQ(std::string(e.what()),
              missing.string() + ": cannot be read: No such file or directory");
  }
}

TEST(PolicyFile, ErrorNamesTheFileAndLine) {
  TempFile file("home = \"/home/u\"\n\nwrite = [\n  \"/home/u/src\",\n  \"src/x\",\n]\n",
                "policy.toml");
  try {
    load_policy(file.path());
    FAIL() << "a relative write entry loaded";
  } catch (const PolicyError &e) {
    EXPECT_EQ(std::string(e.what()),
              file.path().string() + ":5: write[1]: \"src/x\" is not an absolute path");
    EXPECT_EQ(e.entry(), "write[1]");
  }
}

struct BadFile {
  std::string name;  // the test's name
  std::string text;
  std::string error;
};

void PrintTo(const BadFile &bad, std::ostream *out) {
  *out << bad.name;
}

class PolicyFileRefused : public ::testing::TestWithParam<BadFile> {};

TEST_P(PolicyFileRefused, NamesTheEntry) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().error) << GetParam().text;
}

constexpr const char *kHome = "home = \"/home/u\"\n";

INSTANTIATE_TEST_SUITE_P(
    Entries, PolicyFileRefused,
    ::testing::Values(
        BadFile{"HomeMissing", "runtime = \"/run\"\n",
                "policy.toml: home: is missing; allowed: an absolute path"},
        BadFile{"HomeEmpty", "home = \"\"\n",
                "policy.toml:1: home: is missing; allowed: an absolute path"},
        BadFile{"HomeRelative", "home = \"home/u\"\n",
                "policy.toml:1: home: \"home/u\" is not an absolute path"},
        BadFile{"HomeNotAString", "home = 7\n",
                "policy.toml:1: home: must be a string (an absolute path), not an integer"},
        BadFile{
            "UnknownKey", std::string(kHome) + "homedir = \"/x\"\n",
            "policy.toml:2: homedir: unknown key; allowed: home, runtime, harness, exe, egress, "
            "read, write, deny, tool_write, domains, proxy_port, vars"},
        BadFile{"UnknownTable", std::string(kHome) + "[extra]\nx = 1\n",
                "policy.toml:2: extra: unknown key; allowed: home, runtime, harness, exe, egress, "
                "read, write, deny, tool_write, domains, proxy_port, vars"},
        BadFile{"InvalidToml", "home = \"/home/u\n",
                "policy.toml:1: not valid TOML: Error while parsing string: unescaped control "
                "characters other than TAB (U+0009) are explicitly prohibited"},
        BadFile{"WriteNotAnArray", std::string(kHome) + "write = \"/home/u/src\"\n",
                "policy.toml:2: write: must be an array of strings (absolute paths), not a string"},
        BadFile{"ReadElementNotAString", std::string(kHome) + "read = [\"/a\", 3]\n",
                "policy.toml:2: read[1]: must be a string (absolute paths), not an integer"},
        BadFile{"RuntimeNotAString", std::string(kHome) + "runtime = [\"/run\"]\n",
                "policy.toml:2: runtime: must be a string (an absolute path, or \"\" for none), "
                "not an array"},
        BadFile{"PortNotAnInteger", std::string(kHome) + "proxy_port = \"3128\"\n",
                "policy.toml:2: proxy_port: must be an integer (0 to 65535, 0 for none), not a "
                "string"},
        BadFile{
            "PortTooHigh", std::string(kHome) + "proxy_port = 65536\n",
            "policy.toml:2: proxy_port: 65536 is out of range; allowed: 0 to 65535, 0 for none"},
        BadFile{"PortNegative", std::string(kHome) + "proxy_port = -1\n",
                "policy.toml:2: proxy_port: -1 is out of range; allowed: 0 to 65535, 0 for none"},
        BadFile{"VarsNotATable", std::string(kHome) + "vars = \"A=1\"\n",
                "policy.toml:2: vars: must be a table of strings (variable = \"value\"), not a "
                "string"},
        BadFile{"VarNotAString", std::string(kHome) + "[vars]\nA = 1\n",
                "policy.toml:3: vars.A: must be a string (the variable's value), not an integer"},
        // Paths: absolute and clean, the clean form shown.
        BadFile{"WriteRelative", std::string(kHome) + "write = [\"/home/u/src\", \"src/x\"]\n",
                "policy.toml:2: write[1]: \"src/x\" is not an absolute path"},
        BadFile{"WriteEmpty", std::string(kHome) + "write = [\"\"]\n",
                "policy.toml:2: write[0]: \"\" is not an absolute path"},
        BadFile{"DenyDotDot", std::string(kHome) + "deny = [\"/home/u/../x\"]\n",
                "policy.toml:2: deny[0]: \"/home/u/../x\" is not clean (no \".\", \"..\", \"//\" "
                "or trailing \"/\"); its clean form is \"/home/x\""},
        BadFile{"ReadDot", std::string(kHome) + "read = [\"/home/u/./a\"]\n",
                "policy.toml:2: read[0]: \"/home/u/./a\" is not clean (no \".\", \"..\", \"//\" "
                "or trailing \"/\"); its clean form is \"/home/u/a\""},
        BadFile{"ReadDoubleSlash", std::string(kHome) + "read = [\"/home//u\"]\n",
                "policy.toml:2: read[0]: \"/home//u\" is not clean (no \".\", \"..\", \"//\" or "
                "trailing \"/\"); its clean form is \"/home/u\""},
        BadFile{"ToolWriteTrailingSlash",
                std::string(kHome) + "tool_write = [\"/home/u/plans/\"]\n",
                "policy.toml:2: tool_write[0]: \"/home/u/plans/\" is not clean (no \".\", "
                "\"..\", \"//\" or trailing \"/\"); its clean form is \"/home/u/plans\""},
        BadFile{"HomeTrailingSlash", "home = \"/home/u/\"\n",
                "policy.toml:1: home: \"/home/u/\" is not clean (no \".\", \"..\", \"//\" or "
                "trailing \"/\"); its clean form is \"/home/u\""},
        BadFile{"HarnessDotDot", std::string(kHome) + "harness = \"/home/u/.claude/..\"\n",
                "policy.toml:2: harness: \"/home/u/.claude/..\" is not clean (no \".\", \"..\", "
                "\"//\" or trailing \"/\"); its clean form is \"/home/u\""},
        BadFile{"EgressRelative", std::string(kHome) + "egress = \"run/egress\"\n",
                "policy.toml:2: egress: \"run/egress\" is not an absolute path"},
        BadFile{"ExeRelative", std::string(kHome) + "exe = \"sandbox-host\"\n",
                "policy.toml:2: exe: \"sandbox-host\" is not an absolute path"},
        BadFile{"WriteNewline", std::string(kHome) + "write = [\"/home/u/a\\nb\"]\n",
                "policy.toml:2: write[0]: \"/home/u/a\\nb\" holds a NUL or newline"},
        BadFile{"WriteNul", std::string(kHome) + "write = [\"/home/u/a\\u0000b\"]\n",
                "policy.toml:2: write[0]: \"/home/u/a\\0b\" holds a NUL or newline"},
        // Globs in tool_write only.
        BadFile{"ReadStar", std::string(kHome) + "read = [\"/home/u/*\"]\n",
                "policy.toml:2: read[0]: \"/home/u/*\" holds the glob character '*'; globs are "
                "allowed in tool_write only"},
        BadFile{"DenyBracket", std::string(kHome) + "deny = [\"/home/u/[ab]\"]\n",
                "policy.toml:2: deny[0]: \"/home/u/[ab]\" holds the glob character '['; globs are "
                "allowed in tool_write only"},
        BadFile{"WriteQuestionMark", std::string(kHome) + "write = [\"/home/u/?\"]\n",
                "policy.toml:2: write[0]: \"/home/u/?\" holds the glob character '?'; globs are "
                "allowed in tool_write only"},
        BadFile{"ToolWriteRelative", std::string(kHome) + "tool_write = [\"projects/*/memory\"]\n",
                "policy.toml:2: tool_write[0]: \"projects/*/memory\" is not an absolute path"},
        // Variables.
        BadFile{"VarStartsWithDigit", std::string(kHome) + "[vars]\n\"1X\" = \"v\"\n",
                "policy.toml:3: vars.1X: \"1X\" is not an environment variable name; allowed: "
                "A-Z, 0-9 and _, not starting with a digit (the names Claude Code's settings "
                "take)"},
        BadFile{"VarLowerCase", std::string(kHome) + "[vars]\nhttp_proxy = \"v\"\n",
                "policy.toml:3: vars.http_proxy: \"http_proxy\" is not an environment variable "
                "name; allowed: A-Z, 0-9 and _, not starting with a digit (the names Claude "
                "Code's settings take)"},
        BadFile{"VarWithSpace", std::string(kHome) + "[vars]\n\"A B\" = \"v\"\n",
                "policy.toml:3: vars.\"A B\": \"A B\" is not an environment variable name; "
                "allowed: A-Z, 0-9 and _, not starting with a digit (the names Claude Code's "
                "settings take)"},
        BadFile{"VarSandbox", std::string(kHome) + "[vars]\nCLAWPATROL_SANDBOX = \"0\"\n",
                "policy.toml:3: vars.CLAWPATROL_SANDBOX: is set by the policy itself; allowed: "
                "any other variable"},
        BadFile{"VarBrokered", std::string(kHome) + "[vars]\nCLAWPATROL_SANDBOX_BROKERED = \"1\"\n",
                "policy.toml:3: vars.CLAWPATROL_SANDBOX_BROKERED: is set by the policy itself; "
                "allowed: any other variable"},
        BadFile{"VarRuntime", std::string(kHome) + "[vars]\nSANDBOX_RUNTIME = \"1\"\n",
                "policy.toml:3: vars.SANDBOX_RUNTIME: is set by the policy itself; allowed: any "
                "other variable"},
        BadFile{"VarValueNul", std::string(kHome) + "[vars]\nA = \"x\\u0000y\"\n",
                "policy.toml:3: vars.A: the value holds a NUL"},
        // Domains.
        BadFile{"DomainEmpty", std::string(kHome) + "domains = [\"github.com\", \"\"]\n",
                "policy.toml:2: domains[1]: is empty; allowed: a host name or \"*.domain\", "
                "without scheme, path or port"},
        BadFile{"DomainSpace", std::string(kHome) + "domains = [\"git hub.com\"]\n",
                "policy.toml:2: domains[0]: \"git hub.com\" is not a domain; allowed: a host name "
                "or \"*.domain\", without scheme, path or port"},
        BadFile{"DomainScheme", std::string(kHome) + "domains = [\"https://github.com\"]\n",
                "policy.toml:2: domains[0]: \"https://github.com\" is not a domain; allowed: a "
                "host name or \"*.domain\", without scheme, path or port"},
        BadFile{"DomainPort", std::string(kHome) + "domains = [\"github.com:443\"]\n",
                "policy.toml:2: domains[0]: \"github.com:443\" is not a domain; allowed: a host "
                "name or \"*.domain\", without scheme, path or port"},
        BadFile{"DomainInnerStar", std::string(kHome) + "domains = [\"git*.com\"]\n",
                "policy.toml:2: domains[0]: \"git*.com\" is not a domain; allowed: a host name or "
                "\"*.domain\", without scheme, path or port"},
        BadFile{"DomainNothingAfterStar", std::string(kHome) + "domains = [\"*.\"]\n",
                "policy.toml:2: domains[0]: \"*.\" names no domain; allowed: a host name or "
                "\"*.domain\", without scheme, path or port"}),
    [](const auto &info) { return info.param.name; });

TEST(PolicyValidate, CodeBuiltPolicyNamesNoFile) {
  Policy policy;
  policy.home = "/home/u";
  policy.write = {"/home/u/src/"};
  try {
    policy.validate();
    FAIL() << "a trailing slash was accepted";
  } catch (const PolicyError &e) {
    EXPECT_EQ(std::string(e.what()),
              "write[0]: \"/home/u/src/\" is not clean (no \".\", \"..\", \"//\" or trailing "
              "\"/\"); its clean form is \"/home/u/src\"");
    EXPECT_EQ(e.entry(), "write[0]");
  }
  policy.write = {"/home/u/src"};
  policy.proxy_port = 70000;
  policy.source = "built";
  try {
    policy.validate();
    FAIL() << "port 70000 was accepted";
  } catch (const PolicyError &e) {
    EXPECT_EQ(std::string(e.what()),
              "built: proxy_port: 70000 is out of range; allowed: 0 to 65535, 0 for none");
  }
}

TEST(PolicyValidate, RootAndGlobsAccepted) {
  Policy policy;
  policy.home = "/home/u";
  policy.write = {"/"};
  policy.tool_write = {"/home/u/.claude/projects/*/memory", "/home/u/[ab]?"};
  policy.domains = {"*.github.com", "localhost"};
  EXPECT_NO_THROW(policy.validate());
}

TEST(PolicyMountPoints, CreatesMissingDenyDirectoriesPrivate) {
  TempFile dir("", "unused");
  Policy policy;
  policy.home = dir.dir().string();
  policy.deny = {(dir.dir() / "state/scan/index").string(), dir.path().string()};
  policy.mount_points();
  for (const auto &created :
       {dir.dir() / "state", dir.dir() / "state/scan", dir.dir() / "state/scan/index"}) {
    struct stat status {};
    ASSERT_EQ(::stat(created.c_str(), &status), 0) << created;
    EXPECT_TRUE(S_ISDIR(status.st_mode)) << created;
    EXPECT_EQ(status.st_mode & 07777, 0700u) << created;
  }
  // An existing entry, a file here, is left as it is; a second run changes nothing.
  EXPECT_TRUE(fs::is_regular_file(dir.path()));
  EXPECT_NO_THROW(policy.mount_points());
}

TEST(PolicyMountPoints, FileInTheWayNamesTheEntry) {
  TempFile file("x", "plain");
  Policy policy;
  policy.home = "/home/u";
  policy.deny = {(file.path() / "scan").string()};
  try {
    policy.mount_points();
    FAIL() << "a mount point below a file was made";
  } catch (const std::system_error &e) {
    EXPECT_NE(std::string(e.what()).find(policy.deny[0]), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sandbox_host::policy
