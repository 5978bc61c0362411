// The ABI table of the landlock backend, row by row, against the kernel's documented
// values (Documentation/userspace-api/landlock.rst and include/uapi/linux/landlock.h), so
// that a wrong bit or a right in the wrong row shows up here and not as a ruleset the
// kernel refuses (EINVAL) or, worse, one that silently handles less than it could.
#include "landlock_abi.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <stdexcept>

namespace sandbox_host::landlock {
namespace {

// LANDLOCK_ACCESS_FS_EXECUTE (1 << 0) through LANDLOCK_ACCESS_FS_MAKE_SYM (1 << 12).
constexpr uint64_t kUapiAbi1Fs = (1ULL << 13) - 1;
constexpr uint64_t kUapiRefer = 1ULL << 13;     // LANDLOCK_ACCESS_FS_REFER, ABI 2
constexpr uint64_t kUapiTruncate = 1ULL << 14;  // LANDLOCK_ACCESS_FS_TRUNCATE, ABI 3
constexpr uint64_t kUapiIoctlDev = 1ULL << 15;  // LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5
// LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP, ABI 4.
constexpr uint64_t kUapiTcp = 0x3;
// LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL, ABI 6.
constexpr uint64_t kUapiScopes = 0x3;
// LANDLOCK_RESTRICT_SELF_LOG_SAME_EXEC_OFF | _NEW_EXEC_ON | _SUBDOMAINS_OFF, ABI 7.
constexpr uint32_t kUapiLogFlags = 0x7;

struct Row {
  int abi;
  uint64_t fs, net, scoped;
  uint32_t restrict_flags;
};

constexpr Row kExpected[] = {
    {1, kUapiAbi1Fs, 0, 0, 0},
    {2, kUapiAbi1Fs | kUapiRefer, 0, 0, 0},
    {3, kUapiAbi1Fs | kUapiRefer | kUapiTruncate, 0, 0, 0},
    {4, kUapiAbi1Fs | kUapiRefer | kUapiTruncate, kUapiTcp, 0, 0},
    {5, kUapiAbi1Fs | kUapiRefer | kUapiTruncate | kUapiIoctlDev, kUapiTcp, 0, 0},
    {6, kUapiAbi1Fs | kUapiRefer | kUapiTruncate | kUapiIoctlDev, kUapiTcp, kUapiScopes, 0},
    {7, kUapiAbi1Fs | kUapiRefer | kUapiTruncate | kUapiIoctlDev, kUapiTcp, kUapiScopes,
     kUapiLogFlags},
};

TEST(LandlockAbi, EachRowHoldsExactlyWhatItsAbiAdded) {
  for (const Row &row : kExpected) {
    const AbiRights rights = rights_for(row.abi);
    EXPECT_EQ(rights.abi, row.abi);
    EXPECT_EQ(rights.fs, row.fs) << "ABI " << row.abi;
    EXPECT_EQ(rights.net, row.net) << "ABI " << row.abi;
    EXPECT_EQ(rights.scoped, row.scoped) << "ABI " << row.abi;
    EXPECT_EQ(rights.restrict_flags, row.restrict_flags) << "ABI " << row.abi;
  }
}

TEST(LandlockAbi, TheNamedRightsAreTheKernelsBits) {
  EXPECT_EQ(kFsRefer, kUapiRefer);
  EXPECT_EQ(kFsTruncate, kUapiTruncate);
  EXPECT_EQ(kFsIoctlDev, kUapiIoctlDev);
  EXPECT_EQ(kNetBindTcp | kNetConnectTcp, kUapiTcp);
  EXPECT_EQ(kScopeAbstractUnixSocket, 1ULL << 0);
  EXPECT_EQ(kScopeSignal, 1ULL << 1);
  EXPECT_EQ(kLogNewExecOn, 1U << 1);
  // What a rule on a file (not a directory) may hold, else landlock_add_rule says EINVAL.
  EXPECT_EQ(kFsFileRights, (1ULL << 0) | (1ULL << 1) | (1ULL << 2) | kUapiTruncate | kUapiIoctlDev);
}

// Best effort: a kernel newer than the table is asked for everything the table knows.
TEST(LandlockAbi, ANewerKernelIsUsedAtTheNewestKnownAbi) {
  EXPECT_EQ(kNewestKnownAbi, 7);
  for (int abi : {8, 99, 1000}) {
    const AbiRights newer = rights_for(abi), newest = rights_for(kNewestKnownAbi);
    EXPECT_EQ(newer.abi, newest.abi) << abi;
    EXPECT_EQ(newer.fs, newest.fs) << abi;
    EXPECT_EQ(newer.net, newest.net) << abi;
    EXPECT_EQ(newer.scoped, newest.scoped) << abi;
    EXPECT_EQ(newer.restrict_flags, newest.restrict_flags) << abi;
  }
}

TEST(LandlockAbi, NoAbiBelowOne) {
  EXPECT_THROW(rights_for(0), std::invalid_argument);
  EXPECT_THROW(rights_for(-1), std::invalid_argument);
}

TEST(LandlockAbi, KernelAbiIsTheKernelsAnswer) {
  const long answer = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  EXPECT_EQ(kernel_abi(), answer < 0 ? 0 : static_cast<int>(answer));
}

// The row of this kernel (or the newest known) is a ruleset the kernel accepts, and asking
// for one right more than it knows is refused: the downgrade is what makes it work.
TEST(LandlockAbi, TheKernelAcceptsItsRowAndRefusesMore) {
  const int abi = kernel_abi();
  if (abi < 1) GTEST_SKIP() << "no Landlock on this kernel";
  const AbiRights rights = rights_for(abi);
  RulesetAttr attr{rights.fs, rights.net, rights.scoped};
  const long fd = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  EXPECT_GE(fd, 0) << "the kernel (ABI " << abi << ") refused its own row: errno " << errno;
  if (fd >= 0) ::close(static_cast<int>(fd));

  // A newer kernel than the table may know that bit.
  if (abi > kNewestKnownAbi) return;
  RulesetAttr beyond = attr;
  beyond.handled_access_fs |= (rights.fs + 1);  // the next bit up
  EXPECT_EQ(::syscall(SYS_landlock_create_ruleset, &beyond, sizeof beyond, 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
}  // namespace sandbox_host::landlock
