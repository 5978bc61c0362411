// docs/security-model.md's seatbelt section names everything the profile grants by name, and
// says plainly how far the profile was verified.
#include "golden_cases.hpp"
#include "sbpl_check.hpp"

#include "seatbelt_profile.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace sandbox_host::seatbelt::test {
namespace {

std::string seatbelt_section() {
  std::ifstream in(std::string(PROJECT_SOURCE_DIR) + "/docs/security-model.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t start = doc.find("\n## `seatbelt` (ModeSeatbelt, macOS)\n");
  if (start == std::string::npos) return "";
  return doc.substr(start, doc.find("\n## ", start + 1) - start);
}

TEST(SeatbeltDoc, ListsEveryPathServiceAndSysctlTheProfileNames) {
  const std::string section = seatbelt_section();
  ASSERT_FALSE(section.empty()) << "docs/security-model.md has no seatbelt section";
  for (const auto &golden : golden_cases()) {
    for (const auto &constant : sbpl_string_constants(make_profile(golden.spec).text)) {
      EXPECT_NE(section.find("`" + constant + "`"), std::string::npos)
          << constant << " is in the profile but not in the seatbelt section";
    }
  }
}

TEST(SeatbeltDoc, SaysItWasNotRunOnMacos) {
  EXPECT_NE(seatbelt_section().find("has **not** been run on macOS"), std::string::npos);
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
