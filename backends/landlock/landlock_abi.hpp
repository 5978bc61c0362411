// Landlock's user-space interface up to ABI 7, and one table of what each ABI can restrict.
// Defined here rather than taken from <linux/landlock.h>: the headers of the build host
// (Debian 12: ABI 2) may be older than the kernel the sandbox runs on.
#pragma once

#include <sandbox_host/backends/landlock_version.hpp>

#include <cstdint>

namespace sandbox_host::landlock {

// Rights on files and directories.
inline constexpr uint64_t kFsExecute = 1ULL << 0;
inline constexpr uint64_t kFsWriteFile = 1ULL << 1;
inline constexpr uint64_t kFsReadFile = 1ULL << 2;
inline constexpr uint64_t kFsReadDir = 1ULL << 3;
inline constexpr uint64_t kFsRemoveDir = 1ULL << 4;
inline constexpr uint64_t kFsRemoveFile = 1ULL << 5;
inline constexpr uint64_t kFsMakeChar = 1ULL << 6;
inline constexpr uint64_t kFsMakeDir = 1ULL << 7;
inline constexpr uint64_t kFsMakeReg = 1ULL << 8;
inline constexpr uint64_t kFsMakeSock = 1ULL << 9;
inline constexpr uint64_t kFsMakeFifo = 1ULL << 10;
inline constexpr uint64_t kFsMakeBlock = 1ULL << 11;
inline constexpr uint64_t kFsMakeSym = 1ULL << 12;
inline constexpr uint64_t kFsRefer = 1ULL << 13;     // ABI 2
inline constexpr uint64_t kFsTruncate = 1ULL << 14;  // ABI 3
inline constexpr uint64_t kFsIoctlDev = 1ULL << 15;  // ABI 5
// The rights that apply to a file (a rule on a file may hold no other).
inline constexpr uint64_t kFsFileRights =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

// TCP (ABI 4).
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;

// IPC leaving the domain (ABI 6).
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// landlock_restrict_self() flags (ABI 7): which denials reach the kernel's audit log.
inline constexpr uint32_t kLogSameExecOff = 1U << 0;
inline constexpr uint32_t kLogNewExecOn = 1U << 1;
inline constexpr uint32_t kLogSubdomainsOff = 1U << 2;

struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI 4; the kernel reads only as much as it knows
  uint64_t scoped = 0;              // ABI 6
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

inline constexpr int kRulePathBeneath = 1;

// What one ABI can restrict: go-landlock's table, one row per version.
struct AbiRights {
  int abi = 0;
  uint64_t fs = 0;
  uint64_t net = 0;
  uint64_t scoped = 0;
  uint32_t restrict_flags = 0;
};

inline constexpr int kNewestKnownAbi = 7;

// The row for abi; a kernel newer than the table is used at kNewestKnownAbi (best effort:
// what this code knows how to ask for). abi must be at least 1.
AbiRights rights_for(int abi);

}  // namespace sandbox_host::landlock
