// The structured form of a probe warning (sandbox_host/coverage_gaps.hpp): written and read
// back, and what probe makes of a warning not written in it.
#include <sandbox_host/coverage_gaps.hpp>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

TEST(CoverageGaps, AWarningReadsBackAsItsHeadingAndGaps) {
  const std::vector<CoverageGap> gaps{{"a plugin sees the host's name", "the namespaces backend"},
                                      {"no audit (of anything) here", ""},
                                      {"signals are not scoped (ABI 6)", "Linux 6.12+ (ABI 6)"}};
  const std::string warning = coverage_warning("degraded: somewhere", gaps);
  EXPECT_EQ(warning,
            "degraded: somewhere; not covered: a plugin sees the host's name (close: the "
            "namespaces backend); no audit (of anything) here; signals are not scoped (ABI 6) "
            "(close: Linux 6.12+ (ABI 6))");
  const Coverage read = parse_coverage(warning);
  EXPECT_EQ(read.heading, "degraded: somewhere");
  EXPECT_EQ(read.gaps, gaps);
}

TEST(CoverageGaps, AWarningInNoFormIsOneGap) {
  const Coverage read =
      parse_coverage("no confinement: the plugin reads whatever its user can; and writes");
  EXPECT_EQ(read.heading, "");
  ASSERT_EQ(read.gaps.size(), 1u);
  EXPECT_EQ(read.gaps[0].what,
            "no confinement: the plugin reads whatever its user can; and writes");
  EXPECT_EQ(read.gaps[0].close, "");
}

TEST(CoverageGaps, NoWarningNoGaps) {
  EXPECT_TRUE(parse_coverage("").gaps.empty());
}

TEST(CoverageGaps, AParenthesisInsideAGapIsNoClose) {
  const Coverage read = parse_coverage("h; not covered: a (close: b) and more");
  ASSERT_EQ(read.gaps.size(), 1u);
  EXPECT_EQ(read.gaps[0].what, "a (close: b) and more");
  EXPECT_EQ(read.gaps[0].close, "");
}

}  // namespace
}  // namespace sandbox_host
