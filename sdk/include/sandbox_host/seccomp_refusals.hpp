// The refusals of the seccomp filter every Linux backend of this project loads, as data:
// the backends make the filter's rules from it, and the host names a refused call's rule
// from it when the filter sends the call to the host's supervisor (seccomp_channel.hpp). A
// test runs the generated filters over every system call to hold the two to one answer;
// docs/security-model.md lists it (a test compares them).
#pragma once

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sandbox_host {

// One entry of the default filter's deny list, with why it is there.
struct DeniedSyscall {
  std::string_view name;
  std::string_view reason;
};

inline constexpr DeniedSyscall kDenied[] = {
    {"keyctl", "the kernel keyring is not namespaced: the launching user's keys live there"},
    {"add_key", "the kernel keyring is not namespaced"},
    {"request_key", "the kernel keyring is not namespaced"},
    {"bpf", "eBPF programs and maps are kernel attack surface"},
    {"perf_event_open", "performance counters leak host activity and are attack surface"},
    {"userfaultfd", "a common tool for turning kernel races into exploits"},
    {"kexec_load", "replaces the running kernel"},
    {"kexec_file_load", "replaces the running kernel"},
    {"init_module", "loads kernel code"},
    {"finit_module", "loads kernel code"},
    {"delete_module", "unloads kernel code"},
    {"mount", "the mount tree is fixed once stage 1 has built it"},
    {"umount2", "unmounting could reveal what a mount hides"},
    {"pivot_root", "the root is fixed once stage 1 has built it"},
    {"move_mount", "new mount API: the mount tree is fixed"},
    {"open_tree", "new mount API: the mount tree is fixed"},
    {"fsopen", "new mount API: the mount tree is fixed"},
    {"fsconfig", "new mount API: the mount tree is fixed"},
    {"fsmount", "new mount API: the mount tree is fixed"},
    {"fspick", "new mount API: the mount tree is fixed"},
    {"mount_setattr", "could clear read-only or nosuid on the sandbox's mounts"},
    {"ptrace", "no debugging of other processes, the sandbox's init included"},
    {"process_vm_readv", "reads another process's memory"},
    {"process_vm_writev", "writes another process's memory"},
    {"setns", "no joining other namespaces"},
    {"open_by_handle_at", "opens files by handle, around the mount tree"},
    {"io_uring_setup", "io_uring is a large attack surface and bypasses this filter"},
    {"acct", "host-wide process accounting"},
    {"swapon", "host-wide swap"},
    {"swapoff", "host-wide swap"},
    {"reboot", "host-wide"},
    {"syslog", "the kernel log leaks addresses and host activity"},
    // x86 only (no such call elsewhere): a long line of kernel bugs behind a call that only
    // 16-bit and Wine-style segment code needs; Docker's and Chromium's filters refuse it too.
    {"modify_ldt", "per-process segment descriptors: a long history of kernel bugs"},
    // Argument filters; see install_seccomp_filter().
    {"clone (CLONE_NEWUSER)", "no nested user namespaces: they re-grant capabilities"},
    {"unshare (CLONE_NEWUSER)", "no nested user namespaces: they re-grant capabilities"},
    {"clone (CLONE_PARENT)",
     "the new process would be the launcher's child, outside the sandbox's process tree: a "
     "zombie of the host's that no one waits for"},
    {"clone3", "its flags sit in memory a filter cannot read; answered ENOSYS so libc uses clone"},
    {"ioctl (TIOCSTI)", "pushes input into a terminal: keystrokes into the host's shell"},
    {"ioctl (TIOCLINUX)", "reads and pastes a virtual console's contents"},
    // Neither glibc nor Go's runtime calls personality(2); setarch, linux32 and uname26 set
    // the harmless values, and every personality is inherited across execve().
    {"personality (other than 0, 0x8, 0x20000, 0x20008, 0xffffffff)",
     "ADDR_NO_RANDOMIZE turns ASLR off and READ_IMPLIES_EXEC makes readable memory executable "
     "for the plugin's children; PER_LINUX, PER_LINUX32, UNAME26 and the query stay allowed"},
    // Files in SocketDir and TmpDir are the host's: nosuid holds inside the sandbox only, so
    // a setuid or setgid bit set here would be honoured on the host (systemd's
    // RestrictSUIDSGID= refuses the same calls).
    {"chmod (S_ISUID/S_ISGID)", "a setuid or setgid file would work on the host"},
    {"fchmod (S_ISUID/S_ISGID)", "a setuid or setgid file would work on the host"},
    {"fchmodat (S_ISUID/S_ISGID)", "a setuid or setgid file would work on the host"},
    {"fchmodat2 (S_ISUID/S_ISGID)", "a setuid or setgid file would work on the host"},
    {"open (O_CREAT, S_ISUID/S_ISGID)", "creates a setuid or setgid file"},
    {"openat (O_CREAT, S_ISUID/S_ISGID)", "creates a setuid or setgid file"},
    {"creat (S_ISUID/S_ISGID)", "creates a setuid or setgid file"},
    {"mknod (S_ISUID/S_ISGID)", "creates a setuid or setgid file"},
    {"mknodat (S_ISUID/S_ISGID)", "creates a setuid or setgid file"},
    {"openat2",
     "its mode sits in memory a filter cannot read; answered ENOSYS so libc uses openat"},
};

// IPC objects a namespace of its own would hide: System V's are named by keys and ids
// global to the ipc namespace, POSIX message queues by names in it. Refused where the
// sandbox has no ipc namespace (Landlock).
inline constexpr const char *kSharedIpcCalls[] = {
    "shmget",  "shmat",     "shmdt",        "shmctl",          "msgget",     "msgsnd",
    "msgrcv",  "msgctl",    "semget",       "semop",           "semtimedop", "semctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",  "mq_getsetattr",
};

struct Refusal {
  std::string_view rule;    // as kDenied names it, e.g. "ioctl (TIOCSTI)"
  std::string_view reason;  // why the filter refuses it
  int error = 0;            // what the plugin's call returns
};

// The reading of refusal_of(), below.
namespace seccomp_detail {

#if defined(__x86_64__)
inline constexpr std::uint32_t kNativeArchitecture = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr std::uint32_t kNativeArchitecture = AUDIT_ARCH_AARCH64;
#else
#error "refusal_of(): name this architecture's AUDIT_ARCH_* here"
#endif

inline constexpr int kFchmodat2 = 452;  // as seccomp_rules.cpp: newer than the build's headers

inline constexpr std::string_view kNoIpcNamespace =
    "without an ipc namespace, System V IPC and POSIX message queues are the host's, shared "
    "with every process of the launching user";
inline constexpr std::string_view kUnixSocketsOnly =
    "network \"none\" without a network namespace: only unix sockets";

inline std::optional<Refusal> denied(std::string_view rule, int error = EPERM) {
  for (const DeniedSyscall &entry : kDenied) {
    if (entry.name == rule) return Refusal{entry.name, entry.reason, error};
  }
  return std::nullopt;  // a rule not in the table: the test over every call finds it
}

inline bool has(std::uint64_t word, std::uint64_t bits) {
  return (word & bits) != 0;
}

// The setuid and setgid bits in a mode argument.
inline bool set_id(std::uint64_t mode) {
  return has(mode, S_ISUID | S_ISGID);
}

inline bool creates(std::uint64_t flags) {
  // __O_TMPFILE is two bits (O_DIRECTORY among them), as the rule's masked compare reads it.
  return has(flags, O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE;
}

// personality(2)'s unsigned int: the query and the harmless personas pass.
inline bool harmless_persona(std::uint64_t arg) {
  const std::uint32_t persona = static_cast<std::uint32_t>(arg);
  return persona == 0xFFFFFFFFu ||
         (persona & ~(std::uint32_t{PER_LINUX32} | std::uint32_t{UNAME26})) == 0;
}

// kSharedIpcCalls by number, for their rules' names.
struct NumberedCall {
  long nr;
  std::string_view name;
};
inline constexpr NumberedCall kSharedIpcNumbers[] = {
    {SYS_shmget, "shmget"},
    {SYS_shmat, "shmat"},
    {SYS_shmdt, "shmdt"},
    {SYS_shmctl, "shmctl"},
    {SYS_msgget, "msgget"},
    {SYS_msgsnd, "msgsnd"},
    {SYS_msgrcv, "msgrcv"},
    {SYS_msgctl, "msgctl"},
    {SYS_semget, "semget"},
    {SYS_semop, "semop"},
    {SYS_semtimedop, "semtimedop"},
    {SYS_semctl, "semctl"},
    {SYS_mq_open, "mq_open"},
    {SYS_mq_unlink, "mq_unlink"},
    {SYS_mq_timedsend, "mq_timedsend"},
    {SYS_mq_timedreceive, "mq_timedreceive"},
    {SYS_mq_notify, "mq_notify"},
    {SYS_mq_getsetattr, "mq_getsetattr"},
};

inline std::optional<Refusal> shared_ipc_refusal(long nr) {
  for (const NumberedCall &call : kSharedIpcNumbers) {
    if (call.nr == nr) return Refusal{call.name, kNoIpcNamespace, EPERM};
  }
  return std::nullopt;
}

inline std::optional<Refusal> default_refusal(const seccomp_data &call) {
  const auto *a = call.args;
  switch (call.nr) {
    case SYS_keyctl:
      return denied("keyctl");
    case SYS_add_key:
      return denied("add_key");
    case SYS_request_key:
      return denied("request_key");
    case SYS_bpf:
      return denied("bpf");
    case SYS_perf_event_open:
      return denied("perf_event_open");
    case SYS_userfaultfd:
      return denied("userfaultfd");
    case SYS_kexec_load:
      return denied("kexec_load");
    case SYS_kexec_file_load:
      return denied("kexec_file_load");
    case SYS_init_module:
      return denied("init_module");
    case SYS_finit_module:
      return denied("finit_module");
    case SYS_delete_module:
      return denied("delete_module");
    case SYS_mount:
      return denied("mount");
    case SYS_umount2:
      return denied("umount2");
    case SYS_pivot_root:
      return denied("pivot_root");
    case SYS_move_mount:
      return denied("move_mount");
    case SYS_open_tree:
      return denied("open_tree");
    case SYS_fsopen:
      return denied("fsopen");
    case SYS_fsconfig:
      return denied("fsconfig");
    case SYS_fsmount:
      return denied("fsmount");
    case SYS_fspick:
      return denied("fspick");
    case SYS_mount_setattr:
      return denied("mount_setattr");
    case SYS_ptrace:
      return denied("ptrace");
    case SYS_process_vm_readv:
      return denied("process_vm_readv");
    case SYS_process_vm_writev:
      return denied("process_vm_writev");
    case SYS_setns:
      return denied("setns");
    case SYS_open_by_handle_at:
      return denied("open_by_handle_at");
    case SYS_io_uring_setup:
      return denied("io_uring_setup");
    case SYS_acct:
      return denied("acct");
    case SYS_swapon:
      return denied("swapon");
    case SYS_swapoff:
      return denied("swapoff");
    case SYS_reboot:
      return denied("reboot");
    case SYS_syslog:
      return denied("syslog");
#ifdef SYS_modify_ldt
    case SYS_modify_ldt:
      return denied("modify_ldt");
#endif
    case SYS_clone:
      if (has(a[0], CLONE_NEWUSER)) return denied("clone (CLONE_NEWUSER)");
      if (has(a[0], CLONE_PARENT)) return denied("clone (CLONE_PARENT)");
      return std::nullopt;
    case SYS_unshare:
      if (has(a[0], CLONE_NEWUSER)) return denied("unshare (CLONE_NEWUSER)");
      return std::nullopt;
    case SYS_ioctl:
      if (static_cast<std::uint32_t>(a[1]) == TIOCSTI) return denied("ioctl (TIOCSTI)");
      if (static_cast<std::uint32_t>(a[1]) == TIOCLINUX) return denied("ioctl (TIOCLINUX)");
      return std::nullopt;
    case SYS_personality:
      if (harmless_persona(a[0])) return std::nullopt;
      return denied("personality (other than 0, 0x8, 0x20000, 0x20008, 0xffffffff)");
    case SYS_chmod:
      return set_id(a[1]) ? denied("chmod (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_fchmod:
      return set_id(a[1]) ? denied("fchmod (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_fchmodat:
      return set_id(a[2]) ? denied("fchmodat (S_ISUID/S_ISGID)") : std::nullopt;
    case kFchmodat2:
      return set_id(a[2]) ? denied("fchmodat2 (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_creat:
      return set_id(a[1]) ? denied("creat (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_mknod:
      return set_id(a[1]) ? denied("mknod (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_mknodat:
      return set_id(a[2]) ? denied("mknodat (S_ISUID/S_ISGID)") : std::nullopt;
    case SYS_open:
      return creates(a[1]) && set_id(a[2]) ? denied("open (O_CREAT, S_ISUID/S_ISGID)")
                                           : std::nullopt;
    case SYS_openat:
      return creates(a[2]) && set_id(a[3]) ? denied("openat (O_CREAT, S_ISUID/S_ISGID)")
                                           : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace seccomp_detail

// The refusal of call, read against the rules of every filter: a call reaches the host only
// when its own filter refused it or traced it, and no traced call is among any filter's
// refusals. nullopt where no rule refuses it: a call the learn filter traced, or one of
// another architecture, which every filter kills instead.
inline std::optional<Refusal> refusal_of(const seccomp_data &call) noexcept {
  using namespace seccomp_detail;
  if (call.arch != kNativeArchitecture) return std::nullopt;
  if (std::optional<Refusal> refusal = default_refusal(call)) return refusal;
  if (std::optional<Refusal> refusal = shared_ipc_refusal(call.nr)) return refusal;
  if (call.nr == SYS_socket && call.args[0] != AF_UNIX) {
    return Refusal{"socket (not AF_UNIX)", kUnixSocketsOnly, EAFNOSUPPORT};
  }
  return std::nullopt;
}

}  // namespace sandbox_host
