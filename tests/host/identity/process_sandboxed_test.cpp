// Whether a process is sandboxed, against real children: a plain child, one in a new mount
// namespace, nobody under unshare, one that carries the sandbox mark, another user's.
#include "process_identity_harness.hpp"

namespace sandbox_host::broker {
namespace {

using namespace identity_harness;

// ---- sandboxed ------------------------------------------------------------------------------

TEST(Sandboxed, IsFalseForThisProcessAndAPlainChild) {
  EXPECT_FALSE(sandboxed(kProc, ::getpid()));
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  EXPECT_FALSE(sandboxed(kProc, child.pid()));
}

TEST(Sandboxed, IsTrueForAChildInANewMountNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for unshare(CLONE_NEWNS)";
  Child child([] { return ::unshare(CLONE_NEWNS) == 0 ? 0 : errno; });
  const auto result = child.result();
  ASSERT_TRUE(result);
  if (*result == EPERM) GTEST_SKIP() << "unshare(CLONE_NEWNS) is not permitted here";
  ASSERT_EQ(*result, 0) << std::generic_category().message(*result);
  EXPECT_TRUE(sandboxed(kProc, child.pid()));
}

TEST(Sandboxed, IsTrueForNobodyUnderUnshareUrm) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the child as nobody through setpriv";
  auto argv = test::as_nobody();
  argv.insert(argv.end(),
              {"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", "echo ready; exec sleep 60"});
  test::RunningProcess process(argv);
  const auto line = process.read_line(10s);
  if (line != "ready") {
    const auto result = process.wait(5s);
    GTEST_SKIP() << "nobody cannot unshare -Urm here: " << result.err;
  }
  EXPECT_TRUE(sandboxed(kProc, process.pid()));
  EXPECT_EQ(process_uid(kProc, process.pid()), kNobody);
}

// A Landlock sandbox keeps the host's mount namespace; the mark stage 1 puts on every
// process of a sandbox tells it.
TEST(Sandboxed, IsTrueForAChildThatCarriesTheSandboxMark) {
  Child child([] {
    mark_this_process_sandboxed();
    return 0;
  });
  ASSERT_EQ(child.result(), 0);
  EXPECT_TRUE(sandboxed(kProc, child.pid()));
}

// Another user's process: read by prlimit(2) with CAP_SYS_RESOURCE, or from its
// /proc/<pid>/limits without (as root in a container that withholds the capability).
TEST(Sandboxed, TellsTheMarkOfAnotherUsersProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change uids";
  Child marked([] {
    const int became = become_nobody(false);
    if (became != 0) return became;
    mark_this_process_sandboxed();
    return 0;
  });
  Child unmarked([] { return become_nobody(false); });
  ASSERT_EQ(marked.result(), 0);
  ASSERT_EQ(unmarked.result(), 0);
  EXPECT_TRUE(carries_sandbox_mark(marked.pid()));
  EXPECT_FALSE(carries_sandbox_mark(unmarked.pid()));
}

TEST(Sandboxed, ThrowsForAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_THROW(sandboxed(kProc, pid), std::system_error);
}

}  // namespace
}  // namespace sandbox_host::broker
