// The default seccomp filter's rules: allow by default, refuse with EPERM the system calls a
// plugin has no business making and that widen the kernel's attack surface or reach outside
// the sandbox. Capabilities are gone already; this list stands even where a kernel bug or a
// forgotten capability would let one of them through. docs/security-model.md mirrors it.
//
// libseccomp compiles them to BPF at build time (tools/seccomp_bpf_generator.cpp), so a
// launch only loads the finished program (seccomp_filter.cpp).
#include "seccomp_rules.hpp"

#include <sandbox_host/backends/learn_traced_calls.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/seccomp_refusals.hpp>

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::backends {

using sandbox_host::kDenied;
using sandbox_host::kSharedIpcCalls;
namespace {

// fchmodat2 (Linux 6.6) is newer than this libseccomp; its number is the same on every
// architecture, as for every system call added since 5.1.
constexpr int kFchmodat2 = 452;

void add(scmp_filter_ctx ctx, uint32_t action, int syscall, const char *name, unsigned count = 0,
         const scmp_arg_cmp *args = nullptr) {
  if (syscall == __NR_SCMP_ERROR) return;  // not a system call on this architecture
  int rc = seccomp_rule_add_array(ctx, action, syscall, count, args);
  if (rc != 0) throw SetupError("seccomp", std::string("rule for ") + name + ": " + strerror(-rc));
}

// personality(2)'s argument is an unsigned int: the kernel reads its low 32 bits only.
constexpr scmp_datum_t kLowWord = 0xFFFFFFFFu;
// PER_LINUX (0), PER_LINUX32, UNAME26, both of them, and the query: a word of all ones.
constexpr scmp_datum_t kHarmlessPersonaBits = scmp_datum_t{PER_LINUX32} | scmp_datum_t{UNAME26};

// Refuses every personality but the harmless ones. A libseccomp rule compares an argument
// once, so "none of these values" is a union of masked compares, each matching only words
// outside the harmless set:
// - another bit set and another bit clear: among the other bits taken in a cycle, a set one
//   followed by a clear one, which every word with some but not all of them set has;
// - every other bit set and a harmless bit clear: the words left, but for the query.
void refuse_other_personalities(scmp_filter_ctx ctx, uint32_t action) {
  std::vector<scmp_datum_t> other_bits;
  for (unsigned bit = 0; bit < 32; ++bit) {
    if ((kHarmlessPersonaBits & (scmp_datum_t{1} << bit)) == 0) {
      other_bits.push_back(scmp_datum_t{1} << bit);
    }
  }
  for (std::size_t i = 0; i < other_bits.size(); ++i) {
    const scmp_datum_t set = other_bits[i], clear = other_bits[(i + 1) % other_bits.size()];
    const scmp_arg_cmp some_but_not_all = SCMP_A0(SCMP_CMP_MASKED_EQ, set | clear, set);
    add(ctx, action, SCMP_SYS(personality), "personality", 1, &some_but_not_all);
  }
  const scmp_datum_t others = kLowWord & ~kHarmlessPersonaBits;
  for (const scmp_datum_t harmless : {scmp_datum_t{PER_LINUX32}, scmp_datum_t{UNAME26}}) {
    const scmp_arg_cmp all_but_a_harmless_one =
        SCMP_A0(SCMP_CMP_MASKED_EQ, others | harmless, others);
    add(ctx, action, SCMP_SYS(personality), "personality", 1, &all_but_a_harmless_one);
  }
}

// A refusal answered by the filter itself, or by the host's seccomp supervisor, which records
// it and answers the same errno (host/src/seccomp/).
uint32_t refusal_action(Verdicts verdicts, int error) {
  return verdicts == Verdicts::errno_only ? SCMP_ACT_ERRNO(error) : SCMP_ACT_NOTIFY;
}

}  // namespace

const DeniedSyscall *denied_syscalls(unsigned &count) noexcept {
  count = sizeof kDenied / sizeof kDenied[0];
  return kDenied;
}

SeccompContext build_default_filter(Verdicts verdicts) {
  SeccompContext ctx(seccomp_init(SCMP_ACT_ALLOW), &seccomp_release);
  if (!ctx) throw SetupError("seccomp", "seccomp_init failed");
  const uint32_t deny = refusal_action(verdicts, EPERM);

  for (const auto &entry : kDenied) {
    if (entry.name.find(' ') != std::string_view::npos || entry.name == "clone3" ||
        entry.name == "openat2") {
      continue;  // argument filters and ENOSYS answers, added below
    }
    const std::string name(entry.name);
    add(ctx.get(), deny, seccomp_syscall_resolve_name(name.c_str()), name.c_str());
  }

  const scmp_arg_cmp new_user_clone = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER);
  add(ctx.get(), deny, SCMP_SYS(clone), "clone", 1, &new_user_clone);
  const scmp_arg_cmp parent_clone = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT);
  add(ctx.get(), deny, SCMP_SYS(clone), "clone", 1, &parent_clone);
  add(ctx.get(), deny, SCMP_SYS(unshare), "unshare", 1, &new_user_clone);
  add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), "clone3");
  // The request is an int; compare its low 32 bits whatever the upper ones hold.
  const scmp_arg_cmp tiocsti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI);
  const scmp_arg_cmp tioclinux = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCLINUX);
  add(ctx.get(), deny, SCMP_SYS(ioctl), "ioctl TIOCSTI", 1, &tiocsti);
  add(ctx.get(), deny, SCMP_SYS(ioctl), "ioctl TIOCLINUX", 1, &tioclinux);
  refuse_other_personalities(ctx.get(), deny);

  // Setuid and setgid bits, each on its own: a rule is one AND of argument comparisons.
  for (const scmp_datum_t bit : {scmp_datum_t{S_ISUID}, scmp_datum_t{S_ISGID}}) {
    const scmp_arg_cmp mode1 = SCMP_A1(SCMP_CMP_MASKED_EQ, bit, bit);
    const scmp_arg_cmp mode2 = SCMP_A2(SCMP_CMP_MASKED_EQ, bit, bit);
    const scmp_arg_cmp mode3 = SCMP_A3(SCMP_CMP_MASKED_EQ, bit, bit);
    add(ctx.get(), deny, SCMP_SYS(chmod), "chmod", 1, &mode1);
    add(ctx.get(), deny, SCMP_SYS(fchmod), "fchmod", 1, &mode1);
    add(ctx.get(), deny, SCMP_SYS(fchmodat), "fchmodat", 1, &mode2);
    int fchmodat2 = seccomp_syscall_resolve_name("fchmodat2");
    add(ctx.get(), deny, fchmodat2 == __NR_SCMP_ERROR ? kFchmodat2 : fchmodat2, "fchmodat2", 1,
        &mode2);
    add(ctx.get(), deny, SCMP_SYS(creat), "creat", 1, &mode1);
    add(ctx.get(), deny, SCMP_SYS(mknod), "mknod", 1, &mode1);
    add(ctx.get(), deny, SCMP_SYS(mknodat), "mknodat", 1, &mode2);
    // O_TMPFILE creates a file with a mode too.
    for (const scmp_datum_t creating : {scmp_datum_t{O_CREAT}, scmp_datum_t{__O_TMPFILE}}) {
      const scmp_arg_cmp open_args[] = {SCMP_A1(SCMP_CMP_MASKED_EQ, creating, creating), mode2};
      const scmp_arg_cmp openat_args[] = {SCMP_A2(SCMP_CMP_MASKED_EQ, creating, creating), mode3};
      add(ctx.get(), deny, SCMP_SYS(open), "open", 2, open_args);
      add(ctx.get(), deny, SCMP_SYS(openat), "openat", 2, openat_args);
    }
  }
  add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), "openat2");
  return ctx;
}

const char *const *shared_ipc_calls(unsigned &count) noexcept {
  count = sizeof kSharedIpcCalls / sizeof kSharedIpcCalls[0];
  return kSharedIpcCalls;
}

SeccompContext build_filter(Substitute substitute, Verdicts verdicts) {
  SeccompContext ctx = build_default_filter(verdicts);
  if (substitute != Substitute::nothing) {
    for (const char *name : kSharedIpcCalls) {
      add(ctx.get(), refusal_action(verdicts, EPERM), seccomp_syscall_resolve_name(name), name);
    }
  }
  if (substitute == Substitute::ipc_and_net_namespaces) {
    // All 64 bits compared: a family with stray upper bits is refused too, never let through.
    const scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
    add(ctx.get(), refusal_action(verdicts, EAFNOSUPPORT), SCMP_SYS(socket), "socket (not AF_UNIX)",
        1, &not_unix);
  }
  if (verdicts == Verdicts::notify_and_trace) {
    // The same action as the refusals': libseccomp merges a call's rules, and the host tells
    // a refused call from a traced one by its arguments (seccomp_refusal.cpp).
    for (const char *name : kLearnTracedCalls) {
      add(ctx.get(), SCMP_ACT_NOTIFY, seccomp_syscall_resolve_name(name), name);
    }
  }
  return ctx;
}

}  // namespace sandbox_host::backends
