// Probe's warning for Landlock names, gap by gap, what the kernel's ABI leaves uncovered: the
// gaps of every ABI (no namespaces), and each ABI-dependent gap exactly below the ABI that
// closes it, each with what closes it. The escape corpus (escape_warning_gaps_test.cpp,
// view_test.cpp, WarningSaysTruly_*) checks that the gaps named here really exist.
#include "coverage_warning.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sandbox_host::landlock {
namespace {

// Present at every ABI: what only namespaces would cover.
const std::vector<std::string> kAlwaysUncovered{
    "no pid namespace: a plugin can probe the host's pids (kill(pid, 0)), not read /proc",
    "a plugin can stat(2) files outside its grants (existence, size, times)",
    "a plugin gets no /tmp, /dev/shm or /proc (but its own /proc/<pid>, not its children's)",
    "a plugin can connect(2) to the launching user's unix sockets by path",
    "a plugin sees the host's name",
    "no network namespace: network proxied is refused, never run with the host's network",
    // An agent policy's view, as grants by complement (view_grants.cpp).
    "run --policy: a directory above a narrower rule cannot be listed, nor changed in it",
    "run --policy: an entry made after the start, at the top level too, gets nothing",
    "run --policy: /proc and /dev hold only the system's devices and its own /proc/<pid>",
    "run --policy: socket(2) of AF_UNIX fails (socketpair(2) works)",
};

// A gap, the first ABI that closes it, and the kernel that brought that ABI.
struct AbiGap {
  std::string text;
  int closed_at;
  std::string close;
};
const std::vector<AbiGap> kAbiGaps{
    {"a plugin can truncate(2) any file its user may write", 3, "Linux 6.2+ (Landlock ABI 3)"},
    {"with network none, a plugin can connect or bind a TCP socket passed to it", 4,
     "Linux 6.7+ (Landlock ABI 4)"},
    {"a plugin can ioctl(2) the device files it may open", 5, "Linux 6.10+ (Landlock ABI 5)"},
    {"signals are not scoped: a plugin can signal the launching user's other processes", 6,
     "Linux 6.12+ (Landlock ABI 6)"},
    {"with network none, a plugin can connect to the host's abstract unix sockets", 6,
     "Linux 6.12+ (Landlock ABI 6)"},
    {"a plugin's denials are not written to the kernel's audit log", 7,
     "Linux 6.15+ (Landlock ABI 7)"},
};

const CoverageGap *gap_saying(const std::vector<CoverageGap> &gaps, const std::string &text) {
  for (const CoverageGap &gap : gaps) {
    if (gap.what.find(text) != std::string::npos) return &gap;
  }
  return nullptr;
}

TEST(LandlockCoverageWarning, NamesEachGapBelowTheAbiThatClosesIt) {
  for (int abi = 1; abi <= 7; ++abi) {
    const std::vector<CoverageGap> gaps = coverage_gaps(abi);
    for (const auto &text : kAlwaysUncovered) {
      const CoverageGap *gap = gap_saying(gaps, text);
      ASSERT_NE(gap, nullptr) << "ABI " << abi << ": " << text;
      EXPECT_EQ(gap->close, "the namespaces backend") << text;
    }
    size_t open_gaps = 0;
    for (const auto &abi_gap : kAbiGaps) {
      const CoverageGap *gap = gap_saying(gaps, abi_gap.text);
      EXPECT_EQ(gap != nullptr, abi < abi_gap.closed_at)
          << "ABI " << abi << (gap ? " names " : " does not name ") << abi_gap.text;
      if (gap != nullptr) {
        EXPECT_EQ(gap->close, abi_gap.close) << abi_gap.text;
      }
      if (abi < abi_gap.closed_at) ++open_gaps;
    }
    // The missing namespaces and an agent policy's view, one per gap left open, nothing else.
    EXPECT_EQ(gaps.size(), kAlwaysUncovered.size() + open_gaps) << coverage_warning(abi);
  }
}

// The one string says the same as the list, in the form probe reads the list back from.
TEST(LandlockCoverageWarning, TheWarningIsTheGapsInTheirStructuredForm) {
  for (int abi = 1; abi <= 9; ++abi) {
    const std::string warning = coverage_warning(abi);
    const std::string heading =
        "degraded: Landlock ABI " + std::to_string(abi) + " without namespaces";
    EXPECT_TRUE(warning.starts_with(heading + "; not covered: ")) << warning;
    const Coverage parsed = parse_coverage(warning);
    EXPECT_EQ(parsed.heading, heading);
    EXPECT_EQ(parsed.gaps, coverage_gaps(abi)) << warning;
    for (const CoverageGap &gap : coverage_gaps(abi)) {
      EXPECT_NE(warning.find(gap.what + " (close: " + gap.close + ")"), std::string::npos)
          << gap.what;
    }
  }
}

// Each gap reads as one line of `sandbox-host probe`, and holds nothing that would split it.
TEST(LandlockCoverageWarning, EachGapIsOneShortLine) {
  for (const CoverageGap &gap : coverage_gaps(1)) {
    EXPECT_LE(gap.what.size(), 92u) << gap.what;
    EXPECT_EQ(gap.what.find("; "), std::string::npos) << gap.what;
    EXPECT_EQ(gap.what.find('\n'), std::string::npos) << gap.what;
    EXPECT_EQ(gap.close.find("; "), std::string::npos) << gap.close;
  }
}

TEST(LandlockCoverageWarning, AtAbi7OnlyTheMissingNamespacesAndTheViewRemain) {
  const std::vector<CoverageGap> gaps = coverage_gaps(7);
  ASSERT_EQ(gaps.size(), kAlwaysUncovered.size());
  for (const CoverageGap &gap : gaps) EXPECT_EQ(gap.close, "the namespaces backend") << gap.what;
  EXPECT_TRUE(gaps[0].what.starts_with("no pid namespace")) << gaps[0].what;
  EXPECT_TRUE(gaps[1].what.starts_with("no mount namespace")) << gaps[1].what;
}

TEST(LandlockCoverageWarning, AtAbi1EveryGapIsOpen) {
  EXPECT_EQ(coverage_gaps(1).size(), kAlwaysUncovered.size() + kAbiGaps.size());
}

// A kernel newer than the backend knows is used at ABI 7: its warning names the ABI found
// and the gaps of ABI 7.
TEST(LandlockCoverageWarning, ANewerKernelHasAbi7sGaps) {
  const std::string newer = coverage_warning(9);
  EXPECT_TRUE(newer.starts_with("degraded: Landlock ABI 9 without namespaces")) << newer;
  EXPECT_EQ(coverage_gaps(9), coverage_gaps(7));
}

}  // namespace
}  // namespace sandbox_host::landlock
