// `sandbox-host hook`, the real binary, fed the PreToolUse calls Claude Code writes on its
// stdin for each file tool: paths inside and outside the policy, ".." and symlink tricks,
// Glob patterns reaching out (braces, classes and escapes too, and checked against the real
// ripgrep), input it cannot read, other tools, and a policy it cannot load.
#include "agent_tree.hpp"

#include "process.hpp"

#include <Poco/JSON/Array.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

namespace sandbox_host::agent_hook_test {
namespace {

using Poco::JSON::Object;

Object input(std::initializer_list<std::pair<std::string, Poco::Dynamic::Var>> fields) {
  Object object;
  for (const auto &[key, value] : fields) object.set(key, value);
  return object;
}

class HookTest : public ::testing::Test {
 protected:
  void SetUp() override { tree.write_policy(); }

  // The hook's answer to one call of tool made from cwd (the project by default).
  HookReply call(const std::string &tool, const Object &tool_input, std::string cwd = "",
                 const std::vector<std::string> &extra = {}) {
    if (cwd.empty()) cwd = tree.at("home/u/src/proj");
    return run_hook(tree.policy_file(), pre_tool_use(tool, tool_input, cwd), extra);
  }
  HookReply raw(const std::string &text) { return run_hook(tree.policy_file(), text); }

  void expect_pass(const HookReply &reply) {
    EXPECT_EQ(reply.code, 0) << reply.err;
    EXPECT_EQ(reply.out, "") << "a pass prints nothing";
  }
  // A deny whose reason holds every one of parts.
  void expect_deny(const HookReply &reply, std::initializer_list<std::string> parts) {
    EXPECT_EQ(reply.code, 0) << reply.err;
    EXPECT_EQ(reply.decision, "deny") << reply.out;
    for (const auto &part : parts)
      EXPECT_NE(reply.reason.find(part), std::string::npos)
          << "reason \"" << reply.reason << "\" does not name " << part;
  }

  AgentTree tree;
  std::string home_rule() const {
    return "Home " + tree.home() + " is denied apart from Read and Write";
  }
};

TEST_F(HookTest, ReadOfAHomeSecretIsDeniedNamingPathRuleAndPolicy) {
  const auto key = tree.at("home/u/.ssh/id_ed25519");
  expect_deny(call("Read", input({{"file_path", key}})),
              {"Read " + key + ": denied: " + home_rule(),
               "sandbox-host agent policy " + tree.policy_file()});
}

TEST_F(HookTest, ReadsTheListedFileOutsideHomeAndTheProjectPass) {
  expect_pass(call("Read", input({{"file_path", tree.at("home/u/.gitconfig")}})));
  expect_pass(call("Read", input({{"file_path", tree.at("outside/data.txt")}})));
  expect_pass(call("Read", input({{"file_path", "main.cpp"}})));
  expect_pass(call("Read", input({{"file_path", tree.at("run/user/egress/bundle.pem")}})));
}

TEST_F(HookTest, DecideAllowedAnswersAllowNamingTheRule) {
  const auto reply =
      call("Read", input({{"file_path", tree.at("home/u/.gitconfig")}}), "", {"--decide-allowed"});
  EXPECT_EQ(reply.decision, "allow") << reply.out;
  EXPECT_NE(reply.reason.find("Read " + tree.at("home/u/.gitconfig")), std::string::npos);
  EXPECT_NE(reply.reason.find("Read " + tree.at("home/u/.gitconfig") + ": allowed"),
            std::string::npos)
      << reply.reason;
  // It never turns a deny into an allow.
  expect_deny(call("Read", input({{"file_path", tree.at("home/u/.ssh/id_ed25519")}}), "",
                   {"--decide-allowed"}),
              {home_rule()});
}

TEST_F(HookTest, DotDotOutOfTheProjectIsResolvedBeforeDeciding) {
  expect_deny(
      call("Read", input({{"file_path", "../../.ssh/id_ed25519"}})),
      {"Read ../../.ssh/id_ed25519 (" + tree.at("home/u/.ssh/id_ed25519") + ")", home_rule()});
  const auto tricky = tree.at("home/u/src/proj/../../.ssh/id_ed25519");
  expect_deny(call("Read", input({{"file_path", tricky}})),
              {tricky, tree.at("home/u/.ssh/id_ed25519"), home_rule()});
  expect_deny(call("Read", input({{"file_path", "~/.ssh/id_ed25519"}})), {home_rule()});
}

TEST_F(HookTest, RuntimeIsDeniedApartFromEgress) {
  expect_deny(call("Read", input({{"file_path", tree.at("run/user/agent.sock")}})),
              {"Runtime " + tree.at("run/user") + " is denied apart from Egress"});
}

TEST_F(HookTest, DenyInsideWriteIsNeitherReadNorWritten) {
  const auto index = tree.at("home/u/src/.state/scan/index");
  expect_deny(call("Read", input({{"file_path", index}})),
              {"Deny " + tree.at("home/u/src/.state/scan")});
  expect_deny(call("Edit", input({{"file_path", index}, {"old_string", "a"}, {"new_string", "b"}})),
              {"Edit " + index, "Deny " + tree.at("home/u/src/.state/scan")});
}

TEST_F(HookTest, WritesHoldToWriteAndToolWrite) {
  expect_pass(call(
      "Write", input({{"file_path", tree.at("home/u/src/proj/new.cpp")}, {"content", "int x;"}})));
  expect_pass(call(
      "Edit", input({{"file_path", "main.cpp"}, {"old_string", "main"}, {"new_string", "start"}})));
  Poco::JSON::Array edits;
  edits.add(input({{"old_string", "a"}, {"new_string", "b"}}));
  expect_pass(call("MultiEdit",
                   input({{"file_path", tree.at("home/u/src/proj/main.cpp")}, {"edits", edits}})));
  // Memory through ToolWrite's glob, though the harness directory is denied otherwise.
  expect_pass(call("Write", input({{"file_path", tree.at("home/u/.claude/projects/p1/memory/m.md")},
                                   {"content", "m"}})));
  expect_deny(call("Write", input({{"file_path", tree.at("home/u/.bashrc")}, {"content", ""}})),
              {"Write " + tree.at("home/u/.bashrc"), "not under Write or ToolWrite"});
  expect_deny(call("Write", input({{"file_path", tree.at("outside/data.txt")}, {"content", ""}})),
              {"not under Write or ToolWrite"});
  expect_deny(call("Write", input({{"file_path", tree.at("home/u/.claude/projects/p1/x.json")},
                                   {"content", "{}"}})),
              {"Harness " + tree.at("home/u/.claude")});
}

TEST_F(HookTest, NotebookEditHoldsNotebookPathToWrite) {
  expect_pass(call("NotebookEdit", input({{"notebook_path", tree.at("home/u/src/proj/a.ipynb")},
                                          {"new_source", "print(1)"}})));
  expect_deny(call("NotebookEdit", input({{"notebook_path", tree.at("outside/b.ipynb")},
                                          {"new_source", "print(1)"}})),
              {"NotebookEdit " + tree.at("outside/b.ipynb"), "not under Write or ToolWrite"});
}

TEST_F(HookTest, WriteThroughASymlinkToAHomeSecretIsDenied) {
  tree.link("home/u/src/proj/innocent.txt", tree.at("home/u/.ssh/id_ed25519"));
  const auto link = tree.at("home/u/src/proj/innocent.txt");
  expect_deny(call("Write", input({{"file_path", link}, {"content", "x"}})),
              {"Write " + link + " (" + tree.at("home/u/.ssh/id_ed25519") + ")",
               "not under Write or ToolWrite"});
  expect_deny(call("Read", input({{"file_path", "innocent.txt"}})), {home_rule()});
}

TEST_F(HookTest, WriteThroughADanglingLinkToOutsideIsDenied) {
  tree.link("home/u/src/proj/later.txt", tree.at("outside/created-by-write.txt"));
  expect_deny(call("Write", input({{"file_path", "later.txt"}, {"content", "x"}})),
              {tree.at("outside/created-by-write.txt"), "not under Write or ToolWrite"});
}

TEST_F(HookTest, GrepHoldsItsPathAndDefaultsToCwd) {
  expect_pass(call("Grep", input({{"pattern", "main"}})));
  expect_pass(call("Grep", input({{"pattern", "main"}, {"path", tree.at("home/u/src/proj")}})));
  expect_deny(call("Grep", input({{"pattern", "KEY"}, {"path", tree.at("home/u/.ssh")}})),
              {"Grep " + tree.at("home/u/.ssh"), home_rule()});
  // Outside Home itself, but the search would read all of Home below it.
  expect_deny(call("Grep", input({{"pattern", "PRIVATE"}, {"path", tree.root().string()}})),
              {"Grep " + tree.root().string(), home_rule()});
  expect_deny(call("Grep", input({{"pattern", "PRIVATE"}, {"path", "/"}})), {home_rule()});
  // Searching the project would read the Deny entry below it.
  expect_deny(call("Grep", input({{"pattern", "x"}, {"path", tree.at("home/u/src")}})),
              {"Deny " + tree.at("home/u/src/.state/scan")});
}

TEST_F(HookTest, GlobPatternsReachingOutAreDenied) {
  expect_pass(call("Glob", input({{"pattern", "**/*.cpp"}})));
  expect_pass(call("Glob", input({{"pattern", "*.cpp"}, {"path", tree.at("outside")}})));
  const auto ssh = tree.at("home/u/.ssh");
  expect_deny(call("Glob", input({{"pattern", ssh + "/*"}})),
              {"Glob pattern " + ssh + "/*", home_rule()});
  expect_deny(call("Glob", input({{"pattern", "../../.ssh/*"}})),
              {"Glob pattern ../../.ssh/*", ssh, home_rule()});
  expect_deny(call("Glob", input({{"pattern", "../../.ssh/id_ed25519"}})), {home_rule()});
  expect_deny(call("Glob", input({{"pattern", "~/.ssh/*"}})),
              {"Glob pattern ~/.ssh/*", home_rule()});
  expect_deny(call("Glob", input({{"pattern", "*/../../../.ssh/*"}})),
              {"climbs with \"..\" after a wildcard"});
  expect_deny(call("Glob", input({{"pattern", "*"}, {"path", ssh}})), {"Glob " + ssh, home_rule()});
}

// A project one level below Home, where a single ".." reaches Home itself.
std::string top_project(const AgentTree &tree) {
  tree.file("home/u/proj/main.ts", "export {};\n");
  std::string toml = tree.policy_toml();
  const std::string write = "write = [";
  toml.replace(toml.find(write), write.size(), write + "\"" + tree.at("home/u/proj") + "\", ");
  tree.write_policy(toml);
  return tree.at("home/u/proj");
}

TEST_F(HookTest, GlobBraceAlternativesReachingOutAreDenied) {
  const auto ssh = tree.at("home/u/.ssh");
  // The finding: every alternative is "../../.ssh/*".
  expect_deny(call("Glob", input({{"pattern", "{..,..}/{..,..}/.ssh/*"}})),
              {"Glob pattern {..,..}/{..,..}/.ssh/* (alternative ../../.ssh/*)", ssh, home_rule()});
  const auto top = top_project(tree);
  expect_deny(call("Glob", input({{"pattern", "{x,{..,y}}/.ssh/*"}, {"path", top}})),
              {"(alternative ../.ssh/*)", ssh, home_rule()});
  expect_deny(call("Glob", input({{"pattern", "{.,..}/*"}, {"path", top}})),
              {"Glob pattern {.,..}/* (alternative ../*)", home_rule()});
  // Absolute alternatives replace the path, as an absolute pattern does.
  expect_deny(call("Glob", input({{"pattern", "{/root,/tmp}/*"}, {"path", top}})),
              {"(alternative /tmp/*)", "the search would read below it", home_rule()});
  expect_deny(call("Glob", input({{"pattern", "{src,~/.ssh}/*"}})),
              {"(alternative ~/.ssh/*)", home_rule()});
}

TEST_F(HookTest, GlobComponentsThatCanMatchDotDotAfterAWildcardAreDenied) {
  for (const std::string component : {"[.][.]", "\\.\\.", ".[.]", "[!a][!a]", "[,-0]."}) {
    const auto pattern = component + "/.ssh/*";
    expect_deny(
        call("Glob", input({{"pattern", pattern}})),
        {"Glob pattern " + pattern + " has the component " + component, "can match \"..\""});
  }
  expect_deny(call("Glob", input({{"pattern", "**/../.ssh/*"}})),
              {"Glob pattern **/../.ssh/*", "climbs with \"..\" after a wildcard"});
  expect_deny(call("Glob", input({{"pattern", "src/*/{a,..}/x"}})),
              {"Glob pattern src/*/{a,..}/x (alternative src/*/../x)", "climbs"});
  expect_deny(call("Glob", input({{"pattern", "*/{[.].,b}/x"}})),
              {"(alternative */[.]./x)", "has the component [.]."});
}

TEST_F(HookTest, GlobPatternsTheHookCannotHoldAreDeniedNamingWhy) {
  std::string bomb;
  for (int i = 0; i < 30; ++i) bomb += "{a,b}";
  // run_hook bounds it in time: expanding 2^30 alternatives would not finish.
  expect_deny(call("Glob", input({{"pattern", bomb}})),
              {"Glob pattern " + bomb, "more than 256 alternatives"});
  expect_deny(call("Glob", input({{"pattern", "{{{{{{{{{a}}}}}}}}}"}})),
              {"nests braces deeper than 8 levels"});
  expect_deny(call("Glob", input({{"pattern", "src/{a,b/*.ts"}})),
              {"Glob pattern src/{a,b/*.ts", "\"{\" that is never closed"});
  expect_deny(call("Glob", input({{"pattern", "src/a}/*.ts"}})), {"\"}\" that closes no \"{\""});
  expect_deny(call("Glob", input({{"pattern", "src/[ab/*.ts"}})), {"\"[\" that is never closed"});
  expect_deny(call("Glob", input({{"pattern", "*[/]../.ssh/*"}})), {"class holding \"/\""});
  expect_deny(call("Glob", input({{"pattern", "*\\/../.ssh/*"}})), {"escapes a \"/\""});
  expect_deny(call("Glob", input({{"pattern", "*.ts\\"}})), {"\"\\\" that escapes nothing"});
  expect_deny(call("Glob", input({{"pattern", std::string(5000, 'a')}})), {"5000 characters"});
}

TEST_F(HookTest, EverydayGlobPatternsPass) {
  for (const std::string pattern :
       {"**/*.ts", "src/**/*.{ts,tsx}", "*.md", "{src,test}/**/*.cpp", "[abc]*.txt", "**/.*",
        ".github/workflows/*.{yml,yaml}", "**/{a,b{c,d}}.json", "**/[!.]*", "\\[x\\]/*.ts",
        "docs/{,**/}*.md"}) {
    expect_pass(call("Glob", input({{"pattern", pattern}})));
  }
  const auto reply =
      call("Glob", input({{"pattern", "{src,test}/**/*.cpp"}}), "", {"--decide-allowed"});
  EXPECT_EQ(reply.decision, "allow") << reply.out;
  for (const auto &dir : {"src", "test"}) {
    EXPECT_NE(reply.reason.find("(searching " + tree.at("home/u/src/proj/") + dir + ")"),
              std::string::npos)
        << reply.reason;
  }
}

// Where a Glob reason says the call searches: each "(searching D)", or the tool's path.
std::vector<std::filesystem::path> searched_directories(const std::string &reason,
                                                        const std::string &path) {
  std::vector<std::filesystem::path> out;
  const std::string mark = "(searching ";
  for (auto at = reason.find(mark); at != std::string::npos; at = reason.find(mark, at)) {
    at += mark.size();
    out.push_back(std::filesystem::weakly_canonical(reason.substr(at, reason.find(')', at) - at)));
  }
  if (out.empty()) out.push_back(std::filesystem::weakly_canonical(path));
  return out;
}

std::optional<std::string> on_path(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::string dirs = path == nullptr ? "" : path;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const auto candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return std::nullopt;
}

// The hook's model of the engine against the engine: the real ripgrep run as Claude Code runs
// it for Glob, each file it lists lying (symlinks resolved) in a directory the hook held.
TEST_F(HookTest, RipgrepListsOnlyFilesWhereTheHookSaysAGlobSearches) {
  const auto rg = on_path("rg");
  if (!rg) GTEST_SKIP() << "ripgrep (rg, Debian package ripgrep) is not installed";
  // To run rg from the session's cwd, as Claude Code does.
  const auto env = on_path("env");
  ASSERT_TRUE(env) << "no env on PATH";
  const auto proj = tree.at("home/u/src/proj");
  for (const auto &file : {"src/a.ts", "src/b.tsx", "test/c.cpp", "README.md", "a.txt",
                           ".github/workflows/ci.yml", "docs/guide/intro.md"}) {
    tree.file("home/u/src/proj/" + std::string(file));
  }
  // Claude Code hands rg an absolute pattern's directory as written: a name with a "\" in
  // it is a directory, and rg follows the symlink it names.
  tree.link("home/u/src/proj/li\\nk", tree.at("home/u/.ssh"));
  struct Call {
    std::string pattern, path;
  };
  const std::vector<Call> calls{
      {"**/*.ts", proj},
      {"src/**/*.{ts,tsx}", proj},
      {"*.md", proj},
      {"{src,test}/**/*.cpp", proj},
      {"[abc]*.txt", proj},
      {"*", tree.at("home/u/src/proj/src")},
      {proj + "/src/*.ts", tree.at("outside")},
      {proj + "/{src,test}/*", tree.at("outside")},
      {proj + "/docs/**/*.md", tree.at("outside")},
      {proj + "/li\\nk/*", proj},
      {proj + "/li\\nk/id_*", proj},
  };
  std::size_t listed = 0;
  for (const auto &[pattern, path] : calls) {
    SCOPED_TRACE("Glob pattern " + pattern + " path " + path);
    const auto reply =
        call("Glob", input({{"pattern", pattern}, {"path", path}}), proj, {"--decide-allowed"});
    if (reply.decision != "allow") continue;
    // Claude Code's split: an absolute pattern walks its part before the last "/" ahead of
    // the first "*", "?", "[" or "{"; the rest is the glob.
    std::string root = path, glob = pattern;
    if (pattern.front() == '/') {
      const auto cut = pattern.substr(0, pattern.find_first_of("*?[{")).rfind('/');
      root = pattern.substr(0, cut);
      glob = pattern.substr(cut + 1);
    }
    const auto result =
        sandbox_host::test::run_process({*env, "-C", proj, *rg, "--files", "--glob", glob,
                                         "--sort=modified", "--no-ignore", "--hidden", root});
    ASSERT_TRUE(result.code == 0 || result.code == 1) << result.err;
    const auto searched = searched_directories(reply.reason, path);
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line); ++listed) {
      const auto file = std::filesystem::weakly_canonical(line);
      const bool held = std::any_of(searched.begin(), searched.end(), [&](const auto &dir) {
        const auto relative = file.lexically_relative(dir);
        return !relative.empty() && *relative.begin() != "..";
      });
      EXPECT_TRUE(held) << "rg listed " << line << " (" << file.string()
                        << "), outside what the hook held: " << reply.reason;
    }
  }
  EXPECT_GE(listed, 8u) << "rg listed too little for the comparison to mean anything";
}

TEST_F(HookTest, OtherToolsPass) {
  // Bash from inside a Write path: its sandbox holds what the command does.
  expect_pass(call("Bash", input({{"command", "cat ~/.ssh/id_ed25519"}})));
  expect_pass(call("WebFetch", input({{"url", "https://github.com"}})));
  expect_pass(
      raw(R"({"hook_event_name":"PreToolUse","tool_name":"Task","tool_input":"whatever"})"));
}

// Claude Code's sandbox makes the session's working directory writable to every command, so
// Bash is refused in a session started where the policy does not let commands write.
TEST_F(HookTest, BashIsRefusedInASessionStartedWhereCommandsMayNotWrite) {
  const Object command = input({{"command", "ls"}});
  const std::string fix = "start the session inside one of: " + tree.at("home/u/src") + ", " +
                          tree.at("home/u/.claude/projects");
  for (const std::string &cwd :
       {tree.home(), tree.at("home/u/other"), tree.at("home/u/.claude"),
        tree.at("home/u/.claude/projects"), tree.at("home/u/src/.state/scan"), tree.at("outside"),
        std::string("/")}) {
    SCOPED_TRACE(cwd);
    std::filesystem::create_directories(cwd);
    expect_deny(call("Bash", command, cwd),
                {"Bash: this session runs in " + cwd +
                     ", which the policy does not let commands "
                     "write",
                 fix, "sandbox-host agent policy " + tree.policy_file()});
  }
  expect_pass(call("Bash", command, tree.at("home/u/src")));
  expect_pass(call("Bash", command, tree.at("home/u/src/proj")));
  // The directory is judged where it resolves.
  tree.link("home/u/to-src", tree.at("home/u/src/proj"));
  expect_pass(call("Bash", command, tree.at("home/u/to-src")));
  tree.link("outside/to-home", tree.home());
  expect_deny(
      call("Bash", command, tree.at("outside/to-home")),
      {"Bash: this session runs in " + tree.at("outside/to-home") + " (" + tree.home() + ")"});
  expect_deny(raw(R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}})"),
              {"Bash: the hook's input has no absolute cwd"});
}

TEST_F(HookTest, MalformedInputIsDeniedNamingWhatWasWrong) {
  expect_deny(raw("this is no JSON"), {"not JSON"});
  expect_deny(raw(""), {"not JSON"});
  expect_deny(raw("[1, 2]"), {"not a JSON object"});
  expect_deny(raw(R"({"tool_name":"Read","tool_input":{"file_path":"/etc/hostname"}})"),
              {"hook_event_name"});
  expect_deny(raw(R"({"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{}})"),
              {"PostToolUse"});
  expect_deny(raw(R"({"hook_event_name":"PreToolUse","tool_input":{"file_path":"/x"}})"),
              {"tool_name"});
  expect_deny(raw(R"({"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{}})"),
              {"tool_name"});
  expect_deny(raw(R"({"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":"/x"})"),
              {"Read", "tool_input"});
  expect_deny(call("Read", input({{"path", "/etc/hostname"}})),
              {"Read tool_input has no file_path"});
  expect_deny(call("Read", input({{"file_path", 42}})),
              {"Read tool_input.file_path is not a string"});
  expect_deny(call("Write", input({{"file_path", ""}, {"content", ""}})),
              {"Write tool_input.file_path is empty"});
  expect_deny(call("NotebookEdit", input({{"file_path", tree.at("home/u/src/proj/a.ipynb")}})),
              {"NotebookEdit tool_input has no notebook_path"});
  expect_deny(call("Grep", input({{"pattern", "x"}, {"path", 3}})),
              {"Grep tool_input.path is not a string"});
  expect_deny(call("Glob", input({{"path", tree.at("outside")}})),
              {"Glob tool_input has no pattern"});
  expect_deny(call("Read", input({{"file_path", "main.cpp"}}), "relative/cwd"),
              {"Read main.cpp", "no absolute cwd"});
  expect_deny(
      raw(R"({"hook_event_name":"PreToolUse","tool_name":"Grep","tool_input":{"pattern":"x"}})"),
      {"no path"});
  expect_deny(raw(R"({"hook_event_name":"PreToolUse","tool_name":"Read","cwd":["/"],)"
                  R"("tool_input":{"file_path":"a"}})"),
              {"cwd"});
}

TEST_F(HookTest, InputOverOneMebibyteIsDenied) {
  const std::string padding(1 << 20, ' ');
  expect_deny(
      raw(pre_tool_use("Read", input({{"file_path", tree.at("outside/data.txt")}}), tree.home()) +
          padding),
      {"larger than"});
}

TEST_F(HookTest, WithoutALoadablePolicyFileToolsAreDeniedAndOthersPass) {
  const auto missing = tree.at("no-such-policy.toml");
  const auto read = run_hook(
      missing,
      pre_tool_use("Read", input({{"file_path", tree.at("outside/data.txt")}}), tree.home()));
  expect_deny(read, {"cannot be loaded", missing});
  const auto bash =
      run_hook(missing, pre_tool_use("Bash", input({{"command", "ls"}}), tree.home()));
  expect_pass(bash);
  tree.write_policy("home = \"relative/home\"\n");
  expect_deny(call("Glob", input({{"pattern", "*"}})), {"cannot be loaded", "home"});
  expect_deny(run_hook(missing, "garbage"), {"cannot be loaded"});
}

TEST_F(HookTest, ACommandLineItCannotUseBlocksTheCall) {
  // Exit 2 is the hook protocol's blocking error; any other failure would let the call through.
  const auto reply = run_hook(tree.policy_file(), "{}", {"--no-such-flag"});
  EXPECT_EQ(reply.code, 2) << reply.err;
}

}  // namespace
}  // namespace sandbox_host::agent_hook_test
