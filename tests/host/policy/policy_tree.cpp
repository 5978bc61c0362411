#include "policy_tree.hpp"

#include <fstream>

namespace sandbox_host::policy::test {
namespace fs = std::filesystem;

PolicyTree::PolicyTree() : temp_("", "unused"), root_(fs::canonical(temp_.dir())) {
  file("home/u/.secret", "the home's secret");
  file("home/u/.config/tool/settings", "tool settings");
  file("home/u/src/main.c", "int main;");
  file("home/u/.state/journal", "state");
  file("home/u/.state/scan/key", "the scanner's key");
  file("home/u/.claude/settings.json", "{}");
  dir("home/u/.claude/projects/p1/memory");
  dir("run/user/clawpatrol-sandbox/egress");
  file("run/user/clawpatrol-sandbox/egress/ca.pem", "ca");
  file("run/user/docker.sock", "socket");
  file("outside/file", "outside");

  policy.home = at("home/u");
  policy.runtime = at("run/user");
  policy.egress = at("run/user/clawpatrol-sandbox/egress");
  policy.read = {at("home/u/.config/tool"), at("home/u/.claude")};
  policy.write = {at("home/u/src"), at("home/u/.state"), at("home/u/.claude/projects")};
  policy.deny = {at("home/u/.state/scan")};
  policy.harness = at("home/u/.claude");
  policy.tool_write = {at("home/u/.claude/projects/*/memory")};
}

void PolicyTree::dir(const std::string &relative) const {
  fs::create_directories(root_ / relative);
}

void PolicyTree::file(const std::string &relative, const std::string &contents) const {
  fs::create_directories((root_ / relative).parent_path());
  std::ofstream(root_ / relative) << contents;
}

void PolicyTree::link(const std::string &relative, const std::string &target) const {
  fs::create_directories((root_ / relative).parent_path());
  fs::create_symlink(target, root_ / relative);
}

}  // namespace sandbox_host::policy::test
