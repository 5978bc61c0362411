// Loads a seccomp filter: a BPF program the build compiled from seccomp_rules.cpp, so a launch
// spends no time in libseccomp (docs/benchmarks.md); the unix socket filter stacked on it is
// a few instructions, written out here.
#include "seccomp_program.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/seccomp_channel.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

namespace sandbox_host::backends {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kNativeArchitecture = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kNativeArchitecture = AUDIT_ARCH_AARCH64;
#else
#error "install_unix_socket_filter(): name this architecture's AUDIT_ARCH_* here"
#endif

// x32 system calls come with x86_64's architecture and this bit set in their number.
constexpr std::uint32_t kX32SyscallBit = 0x40000000;

// socket(2)'s family is an int: the kernel reads the argument's low 32 bits only, so the
// filter compares those, whatever the upper ones hold.
constexpr std::uint32_t kFirstArgumentLowWord =
    offsetof(seccomp_data, args[0]) + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4);

constexpr std::uint32_t kRefuse = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);

// socket(AF_UNIX, ...) refused; a system call of another architecture or ABI refused too (the
// default filter below kills it first), since socketcall(2) and x32 would carry the family
// past this filter; everything else allowed.
constexpr sock_filter kUnixSocketProgram[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeArchitecture, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, kRefuse),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32SyscallBit, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, kRefuse),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kFirstArgumentLowWord),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, kRefuse),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

// The kernel accepts a filter from an unprivileged process only under no_new_privs.
void require_no_new_privs() {
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) set_no_new_privs();
}

void load(const sock_fprog &program, const char *what) {
  require_no_new_privs();
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    throw_errno("seccomp", std::string("load ") + what);
  }
}

const sock_fprog &program_for(Namespaces namespaces, Verdicts verdicts) {
  return kSeccompPrograms[static_cast<int>(namespaces)][static_cast<int>(verdicts)];
}

}  // namespace

void install_seccomp_filter(Namespaces namespaces) {
  load(program_for(namespaces, Verdicts::errno_only), "the filter");
}

void install_seccomp_filter(Namespaces namespaces, SeccompChannel &channel) {
  if (channel.fd() < 0) return install_seccomp_filter(namespaces);
  require_no_new_privs();
  const int listener = static_cast<int>(::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                                  SECCOMP_FILTER_FLAG_NEW_LISTENER,
                                                  &program_for(namespaces, channel.verdicts())));
  if (listener < 0) {
    // EBUSY: a filter this process inherited has a listener already (a container runtime's
    // supervisor), and a process may have one only. EINVAL: a kernel older than 5.0. The
    // sandbox then holds to the same rules, answered by the filter, unrecorded; the host
    // records that once.
    const int error = errno;
    if (error != EBUSY && error != EINVAL) throw_errno("seccomp", "load the filter");
    channel.decline(error);
    return install_seccomp_filter(namespaces);
  }
  const UniqueFd owned(listener);
  channel.hand_over(listener);
}

void install_unix_socket_filter() {
  load({static_cast<unsigned short>(std::size(kUnixSocketProgram)),
        const_cast<sock_filter *>(kUnixSocketProgram)},
       "the unix socket filter");
}

}  // namespace sandbox_host::backends
