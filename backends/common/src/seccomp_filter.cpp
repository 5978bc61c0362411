// The default seccomp filter: allow by default, refuse with EPERM the system calls a plugin
// has no business making and that widen the kernel's attack surface or reach outside the
// sandbox. Capabilities are gone already; this list stands even where a kernel bug or a
// forgotten capability would let one of them through. docs/security-model.md mirrors it.
#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <memory>
#include <string>

namespace sandbox_host::backends {
namespace {

constexpr DeniedSyscall kDenied[] = {
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
    // Argument filters; see install_seccomp_filter().
    {"clone (CLONE_NEWUSER)", "no nested user namespaces: they re-grant capabilities"},
    {"unshare (CLONE_NEWUSER)", "no nested user namespaces: they re-grant capabilities"},
    {"clone3", "its flags sit in memory a filter cannot read; answered ENOSYS so libc uses clone"},
    {"ioctl (TIOCSTI)", "pushes input into a terminal: keystrokes into the host's shell"},
    {"ioctl (TIOCLINUX)", "reads and pastes a virtual console's contents"},
};

void add(scmp_filter_ctx ctx, uint32_t action, int syscall, const char *name, unsigned count = 0,
         const scmp_arg_cmp *args = nullptr) {
  if (syscall == __NR_SCMP_ERROR) return;  // not a system call on this architecture
  int rc = seccomp_rule_add_array(ctx, action, syscall, count, args);
  if (rc != 0) throw SetupError("seccomp", std::string("rule for ") + name + ": " + strerror(-rc));
}

}  // namespace

const DeniedSyscall *denied_syscalls(unsigned &count) noexcept {
  count = sizeof kDenied / sizeof kDenied[0];
  return kDenied;
}

void install_seccomp_filter() {
  std::unique_ptr<void, decltype(&seccomp_release)> ctx(seccomp_init(SCMP_ACT_ALLOW),
                                                        &seccomp_release);
  if (!ctx) throw SetupError("seccomp", "seccomp_init failed");
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);

  for (const auto &entry : kDenied) {
    if (entry.name.find(' ') != std::string_view::npos || entry.name == "clone3") continue;
    const std::string name(entry.name);
    add(ctx.get(), deny, seccomp_syscall_resolve_name(name.c_str()), name.c_str());
  }

  const scmp_arg_cmp new_user_clone = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  add(ctx.get(), deny, SCMP_SYS(clone), "clone", 1, &new_user_clone);
  add(ctx.get(), deny, SCMP_SYS(unshare), "unshare", 1, &new_user_clone);
  add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3");
  // The request is an int; compare its low 32 bits whatever the upper ones hold.
  const scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI);
  const scmp_arg_cmp tioclinux = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCLINUX);
  add(ctx.get(), deny, SCMP_SYS(ioctl), "ioctl TIOCSTI", 1, &tiocsti);
  add(ctx.get(), deny, SCMP_SYS(ioctl), "ioctl TIOCLINUX", 1, &tioclinux);

  int rc = seccomp_load(ctx.get());
  if (rc != 0) throw SetupError("seccomp", std::string("load the filter: ") + strerror(-rc));
}

}  // namespace sandbox_host::backends
