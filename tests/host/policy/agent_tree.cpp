#include "agent_tree.hpp"

#include "process.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sandbox_host::agent_hook_test {
namespace fs = std::filesystem;

AgentTree::AgentTree() : temp_("", ".keep"), root_(fs::canonical(temp_.dir()) / "root") {
  fs::create_directories(root_);
  file("home/u/.ssh/id_ed25519", "PRIVATE KEY");
  file("home/u/.gitconfig", "[user]\n");
  file("home/u/.bashrc", "");
  file("home/u/src/proj/main.cpp", "int main() {}\n");
  file("home/u/src/.state/scan/index", "secret index");
  file("home/u/.claude/settings.json", "{}");
  file("home/u/.claude/projects/p1/memory/notes.md", "notes");
  file("run/user/egress/bundle.pem", "CA");
  file("run/user/agent.sock", "");
  file("outside/data.txt", "data");
}

void AgentTree::file(const std::string &relative, const std::string &contents) const {
  const fs::path path = root_ / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path) << contents;
}

void AgentTree::link(const std::string &relative, const std::string &target) const {
  const fs::path path = root_ / relative;
  fs::create_directories(path.parent_path());
  fs::create_symlink(target, path);
}

std::string AgentTree::policy_toml() const {
  auto quoted = [](const std::string &s) { return "\"" + s + "\""; };
  std::ostringstream toml;
  toml << "home = " << quoted(home()) << "\n"
       << "runtime = " << quoted(at("run/user")) << "\n"
       << "egress = " << quoted(at("run/user/egress")) << "\n"
       << "read = [" << quoted(at("home/u/.gitconfig")) << "]\n"
       << "write = [" << quoted(at("home/u/src")) << ", " << quoted(at("home/u/.claude/projects"))
       << "]\n"
       << "deny = [" << quoted(at("home/u/src/.state/scan")) << "]\n"
       << "harness = " << quoted(at("home/u/.claude")) << "\n"
       << "tool_write = [" << quoted(at("home/u/.claude/projects/*/memory")) << ", "
       << quoted(at("home/u/.plans")) << "]\n"
       << "domains = [\"github.com\", \"*.github.com\"]\n"
       << "proxy_port = 3128\n"
       << "exe = \"/opt/sandbox-host/bin/sandbox-host\"\n"
       << "[vars]\nGOFLAGS = \"-mod=mod\"\n";
  return toml.str();
}

void AgentTree::write_policy(const std::string &toml) const {
  std::ofstream(policy_file()) << toml;
}

std::string pre_tool_use(const std::string &tool, const Poco::JSON::Object &tool_input,
                         const std::string &cwd) {
  Poco::JSON::Object call;
  call.set("session_id", "3f6c2a1e-8d4b-4c59-9a0e-5b7d1f2e3c4a");
  call.set("transcript_path",
           "/home/u/.claude/projects/-home-u-src/3f6c2a1e-8d4b-4c59-9a0e-5b7d1f2e3c4a.jsonl");
  call.set("cwd", cwd);
  call.set("permission_mode", "default");
  call.set("hook_event_name", "PreToolUse");
  call.set("tool_name", tool);
  call.set("tool_input", tool_input);
  call.set("tool_use_id", "toolu_01ABCDEF");
  std::ostringstream out;
  call.stringify(out);
  return out.str();
}

HookReply run_hook(const std::string &policy_file, const std::string &input,
                   const std::vector<std::string> &extra) {
  sandbox_host::test::TempFile stdin_file(input, "stdin.json");
  UniqueFd in(::open(stdin_file.path().c_str(), O_RDONLY | O_CLOEXEC));
  if (!in) throw std::runtime_error("cannot open " + stdin_file.path().string());
  std::vector<std::string> argv{SANDBOX_HOST_EXE, "hook", "--policy", policy_file};
  argv.insert(argv.end(), extra.begin(), extra.end());
  sandbox_host::test::ProcessOptions options;
  options.stdin_fd = in.get();
  const auto result = sandbox_host::test::run_process(argv, options);
  HookReply reply{result.code, result.out, result.err, "", ""};
  if (result.out.empty()) return reply;
  // One JSON line: parse it with Poco, another implementation than the one that wrote it.
  EXPECT_EQ(result.out.back(), '\n') << result.out;
  const auto answer = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  const auto specific = answer->getObject("hookSpecificOutput");
  EXPECT_TRUE(specific) << result.out;
  if (!specific) return reply;
  EXPECT_EQ(specific->getValue<std::string>("hookEventName"), "PreToolUse");
  reply.decision = specific->getValue<std::string>("permissionDecision");
  reply.reason = specific->getValue<std::string>("permissionDecisionReason");
  return reply;
}

}  // namespace sandbox_host::agent_hook_test
