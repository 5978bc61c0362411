// The landlock backend's escape corpus on the launch itself: an exec that fails is a set-up
// failure, and ordinary programs run; and the instantiation of the whole corpus, every file
// of it, as root and as nobody.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// ---- set-up failures -------------------------------------------------------------------

TEST_P(LandlockEscape, AnExecThatFailsIsASetupFailure) {
  // Both pass the host's checks (executable regular files); one's interpreter exists
  // nowhere, the other's only in a host directory nothing grants (execute refused).
  test::TempFile missing("#!/nonexistent/interpreter\n", "missing-interpreter");
  fs::permissions(missing.path(), kWorldReadableDir);
  test::TempFile host_only("", "host-only-interpreter");
  const fs::path interpreter = host_only.dir() / "sh";
  fs::copy_file("/bin/sh", interpreter);
  fs::permissions(interpreter, kWorldReadableDir);
  write_file(host_only.path(), "#!" + interpreter.string() + "\necho escaped\n", kWorldReadableDir);

  for (const auto &[binary, reason] : {std::pair{missing.path(), "No such file or directory"},
                                       std::pair{host_only.path(), "Permission denied"}}) {
    ProcessResult result = run(binary.string(), {});
    EXPECT_EQ(result.code, 87) << binary << "\n" << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err, "clawpatrol-sandbox: exec: " + binary.string() + ": " + reason + "\n");
  }
}

// ---- what a plugin may do --------------------------------------------------------------

TEST_P(LandlockEscape, OrdinaryProgramsRun) {
  ProcessResult sh = run("/bin/sh", {"-c", "echo ok"});
  EXPECT_EQ(sh.code, 0) << sh.err;
  EXPECT_EQ(sh.out, "ok\n");

  ProcessResult env = run("/usr/bin/env", {});
  EXPECT_EQ(env.code, 0) << env.err;
  const std::string tmp = tmp_dir().string();
  EXPECT_EQ(env.out, "PATH=/usr/local/bin:/usr/bin:/bin\nLANG=C.UTF-8\nHOME=" + tmp +
                         "\nTMPDIR=" + tmp + "\n");

  // A shell's "> /dev/null" opens with O_TRUNC; a pipeline and a file in TmpDir work.
  ProcessResult shell = run("/bin/sh", {"-c",
                                        "echo discarded > /dev/null && echo kept > \"$HOME/f\" && "
                                        "cat \"$HOME/f\" | tr a-z A-Z"});
  EXPECT_EQ(shell.code, 0) << shell.err;
  EXPECT_EQ(shell.out, "KEPT\n");

  EXPECT_EQ(attempt({"cwd"}).verdict, "ALLOWED " + tmp);
  // sandbox-host's own private directories work too.
  Launch defaults;
  defaults.explicit_dirs = false;
  Attempt cwd = attempt({"cwd"}, defaults);
  EXPECT_TRUE(Allowed(cwd));
  EXPECT_TRUE(cwd.verdict.starts_with("ALLOWED /tmp/sandbox-host-")) << cwd;
  EXPECT_TRUE(Allowed(attempt({"write", "from-plugin"}, defaults)));
}

INSTANTIATE_TEST_SUITE_P(AsUser, LandlockEscape, kEveryCase, case_name);

}  // namespace
}  // namespace sandbox_host
