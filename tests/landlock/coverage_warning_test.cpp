// Probe's warning for Landlock names, item by item, what the kernel's ABI leaves uncovered:
// the gaps of every ABI (no namespaces), and each ABI-dependent gap exactly below the ABI
// that closes it. The escape corpus (escape_test.cpp, WarningSaysTruly_*) checks that the
// gaps named here really exist.
#include "coverage_warning.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sandbox_host::landlock {
namespace {

// Present at every ABI: what only namespaces would cover.
const std::vector<std::string> kAlwaysUncovered{
    "no pid namespace: the host's processes share the plugin's pid space",
    "pids can be probed",
    "stat(2) tells the existence, size and times of files outside the grants",
    "/tmp, /dev/shm and /proc are not granted at all, but for the plugin's own /proc/<pid>",
    "connect(2) to the launching user's unix sockets by path",
    "the host's name is visible",
    "no network namespace: a plugin with network proxied is refused, never run with the host's "
    "network",
    // An agent policy's view, as grants by complement (view_grants.cpp).
    "under an agent policy (sandbox-host run --policy), a directory holding a rule of less "
    "access below it",
    "cannot be listed and nothing in it can be created, removed or renamed",
    "an entry made later, at the top level too, gets nothing",
    "/proc and /dev are not granted beyond the system's devices",
    "unix sockets are refused there: socket(2) of AF_UNIX fails, socketpair(2) works",
};

// A gap, and the first ABI that closes it.
struct AbiGap {
  std::string text;
  int closed_at;
};
const std::vector<AbiGap> kAbiGaps{
    {"truncate(2) of any file the launching user may write is not restricted", 3},
    {"a TCP socket the plugin did not create (one passed to it over a unix socket) can still "
     "connect",
     4},
    {"ioctl(2) on device files is not restricted", 5},
    {"signals to the launching user's processes and, with network none, abstract unix sockets "
     "of the host are not scoped",
     6},
    {"denials are not written to the kernel's audit log", 7},
};

std::vector<std::string> items_of(const std::string &warning, int abi) {
  const std::string prefix =
      "degraded: Landlock ABI " + std::to_string(abi) + " without namespaces; not covered: ";
  EXPECT_TRUE(warning.starts_with(prefix)) << warning;
  std::vector<std::string> items;
  std::string rest = warning.substr(std::min(prefix.size(), warning.size()));
  for (size_t start = 0;;) {
    const size_t end = rest.find("; ", start);
    items.push_back(rest.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return items;
}

TEST(LandlockCoverageWarning, NamesEachGapBelowTheAbiThatClosesIt) {
  for (int abi = 1; abi <= 7; ++abi) {
    const std::string warning = coverage_warning(abi);
    for (const auto &text : kAlwaysUncovered) {
      EXPECT_NE(warning.find(text), std::string::npos) << "ABI " << abi << ": " << text;
    }
    size_t open_gaps = 0;
    for (const auto &gap : kAbiGaps) {
      const bool named = warning.find(gap.text) != std::string::npos;
      EXPECT_EQ(named, abi < gap.closed_at)
          << "ABI " << abi << (named ? " names " : " does not name ") << gap.text;
      if (abi < gap.closed_at) ++open_gaps;
    }
    // Five items for the missing namespaces, one for an agent policy's view, one per gap
    // left open, nothing else.
    EXPECT_EQ(items_of(warning, abi).size(), 6 + open_gaps) << warning;
  }
}

TEST(LandlockCoverageWarning, AtAbi7OnlyTheMissingNamespacesAndTheViewRemain) {
  const std::vector<std::string> items = items_of(coverage_warning(7), 7);
  ASSERT_EQ(items.size(), 6u);
  EXPECT_TRUE(items[0].starts_with("no pid namespace")) << items[0];
  EXPECT_TRUE(items[1].starts_with("no mount namespace")) << items[1];
  EXPECT_TRUE(items[2].starts_with("connect(2) to the launching user's unix sockets")) << items[2];
  EXPECT_TRUE(items[3].starts_with("no uts namespace")) << items[3];
  EXPECT_TRUE(items[4].starts_with("no network namespace")) << items[4];
  EXPECT_TRUE(items[5].starts_with("under an agent policy")) << items[5];
}

TEST(LandlockCoverageWarning, AtAbi1EveryGapIsOpen) {
  EXPECT_EQ(items_of(coverage_warning(1), 1).size(), 6 + kAbiGaps.size());
}

// A kernel newer than the backend knows is used at ABI 7: its warning names the ABI found
// and the gaps of ABI 7.
TEST(LandlockCoverageWarning, ANewerKernelHasAbi7sGaps) {
  const std::string newer = coverage_warning(9);
  EXPECT_TRUE(newer.starts_with("degraded: Landlock ABI 9 without namespaces")) << newer;
  EXPECT_EQ(items_of(newer, 9), items_of(coverage_warning(7), 7));
}

}  // namespace
}  // namespace sandbox_host::landlock
