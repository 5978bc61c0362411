#include "landlock_abi.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace sandbox_host::landlock {
namespace {

constexpr uint64_t kAbi1Fs = kFsExecute | kFsWriteFile | kFsReadFile | kFsReadDir | kFsRemoveDir |
                             kFsRemoveFile | kFsMakeChar | kFsMakeDir | kFsMakeReg | kFsMakeSock |
                             kFsMakeFifo | kFsMakeBlock | kFsMakeSym;
constexpr uint64_t kAbi2Fs = kAbi1Fs | kFsRefer;
constexpr uint64_t kAbi3Fs = kAbi2Fs | kFsTruncate;
constexpr uint64_t kAbi5Fs = kAbi3Fs | kFsIoctlDev;
constexpr uint64_t kTcp = kNetBindTcp | kNetConnectTcp;
constexpr uint64_t kScopes = kScopeAbstractUnixSocket | kScopeSignal;
constexpr uint32_t kLogFlags = kLogSameExecOff | kLogNewExecOn | kLogSubdomainsOff;

constexpr std::array<AbiRights, kNewestKnownAbi> kTable{{
    {1, kAbi1Fs, 0, 0, 0},
    {2, kAbi2Fs, 0, 0, 0},
    {3, kAbi3Fs, 0, 0, 0},
    {4, kAbi3Fs, kTcp, 0, 0},
    {5, kAbi5Fs, kTcp, 0, 0},
    {6, kAbi5Fs, kTcp, kScopes, 0},
    {7, kAbi5Fs, kTcp, kScopes, kLogFlags},
}};

}  // namespace

AbiRights rights_for(int abi) {
  if (abi < 1) throw std::invalid_argument("landlock: no ABI " + std::to_string(abi));
  return kTable[std::min(abi, kNewestKnownAbi) - 1];
}

}  // namespace sandbox_host::landlock
