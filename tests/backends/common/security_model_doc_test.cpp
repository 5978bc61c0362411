#include "seccomp_rules.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace sandbox_host {
namespace {

// docs/security-model.md documents the seccomp filter; it must name every rule the code has.
TEST(SecurityModelDoc, ListsEverySeccompRule) {
  std::ifstream in(std::string(PROJECT_SOURCE_DIR) + "/docs/security-model.md");
  ASSERT_TRUE(in) << "docs/security-model.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  unsigned count = 0;
  const backends::DeniedSyscall *denied = backends::denied_syscalls(count);
  ASSERT_GT(count, 30u);
  for (unsigned i = 0; i < count; ++i) {
    EXPECT_NE(text.str().find("`" + std::string(denied[i].name) + "`"), std::string::npos)
        << denied[i].name << " is filtered but not documented";
  }
}

// The calls the filter refuses in place of an ipc namespace (the landlock backend's).
TEST(SecurityModelDoc, ListsEveryIpcCallRefusedWithoutAnIpcNamespace) {
  std::ifstream in(std::string(PROJECT_SOURCE_DIR) + "/docs/security-model.md");
  ASSERT_TRUE(in) << "docs/security-model.md is missing";
  std::stringstream text;
  text << in.rdbuf();
  unsigned count = 0;
  const char *const *calls = backends::shared_ipc_calls(count);
  ASSERT_GT(count, 10u);
  for (unsigned i = 0; i < count; ++i) {
    EXPECT_NE(text.str().find("`" + std::string(calls[i]) + "`"), std::string::npos)
        << calls[i] << " is refused but not documented";
  }
}

}  // namespace
}  // namespace sandbox_host
