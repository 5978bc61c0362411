// The landlock backend's escape corpus on privileges and the kernel's surface: the filtered
// syscalls, personalities, the LDT, setuid programs left on the host, TIOCSTI.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// ---- privileges and the kernel's surface ------------------------------------------------

TEST_P(LandlockEscape, KernelAttackSurfaceIsFiltered) {
  EXPECT_TRUE(DeniedWith(attempt({"userns"}), "unshare=EPERM clone=EPERM clone3=ENOSYS"));
  EXPECT_TRUE(DeniedWith(attempt({"keyring"}), "keyctl=EPERM add_key=EPERM"));
  EXPECT_TRUE(DeniedWith(attempt({"mount"}), "mount=EPERM umount=EPERM"));
  for (const char *call : {"bpf", "perf", "userfaultfd"}) {
    EXPECT_TRUE(DeniedWith(attempt({call}), "EPERM")) << call;
  }
  expect_seccomp_records({"seccomp: add_key", "seccomp: bpf", "seccomp: clone (CLONE_NEWUSER)",
                          "seccomp: keyctl", "seccomp: mount", "seccomp: perf_event_open",
                          "seccomp: umount2", "seccomp: unshare (CLONE_NEWUSER)",
                          "seccomp: userfaultfd", "seccomp: userfaultfd"});
}

// A persona is inherited across execve(): ADDR_NO_RANDOMIZE would turn ASLR off, and
// READ_IMPLIES_EXEC make readable memory executable, for everything the plugin runs. The
// query must still answer (and show the persona unchanged).
TEST_P(LandlockEscape, PersonalitiesThatWeakenItsChildrenAreRefused) {
  EXPECT_TRUE(DeniedWith(attempt({"personality"}),
                         "no_randomize=EPERM read_implies_exec=EPERM high=EPERM query=0"));
  expect_seccomp_records({kPersonalityRule, kPersonalityRule, kPersonalityRule});
}

TEST_P(LandlockEscape, TheLdtIsOutOfReach) {
#if defined(__x86_64__)
  EXPECT_TRUE(DeniedWith(attempt({"modify-ldt"}), "EPERM"));
  expect_seccomp_records({"seccomp: modify_ldt"});
#else
  GTEST_SKIP() << "modify_ldt exists on x86 only";
#endif
}

// SocketDir and TmpDir are plain host directories here (no nosuid mount in between): a
// setuid program left there would work on the host. Only the filter stands in the way.
TEST_P(LandlockEscape, NoSetuidProgramCanBeLeftOnTheHost) {
  for (const fs::path &dir : {socket_dir(), tmp_dir()}) {
    Attempt a = attempt({"plant-setuid", dir.string()});
    EXPECT_TRUE(Denied(a)) << dir;
    for (const char *name : {"setuid-chmod", "setgid-chmod", "setuid-create"}) {
      struct stat st {};
      if (::stat((dir / name).c_str(), &st) != 0) continue;
      EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u)
          << (dir / name) << " on the host: mode " << std::oct << st.st_mode << std::dec
          << ", owner " << st.st_uid;
    }
  }
  expect_seccomp_records({"seccomp: chmod (S_ISUID/S_ISGID)", "seccomp: chmod (S_ISUID/S_ISGID)",
                          "seccomp: chmod (S_ISUID/S_ISGID)", "seccomp: chmod (S_ISUID/S_ISGID)",
                          "seccomp: openat (O_CREAT, S_ISUID/S_ISGID)",
                          "seccomp: openat (O_CREAT, S_ISUID/S_ISGID)"});
}

TEST_P(LandlockEscape, NoInputCanBePushedIntoATerminal) {
  expect_no_terminal_input();
  expect_seccomp_records({"seccomp: ioctl (TIOCSTI)", "seccomp: ioctl (TIOCSTI)"});
}

}  // namespace
}  // namespace sandbox_host
