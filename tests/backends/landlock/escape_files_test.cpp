// The landlock backend's escape corpus on files: secrets in the home and the gateway's state,
// writes outside SocketDir and TmpDir, truncate, read paths read-only, the plugin's binary,
// symlinks out of a read path.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// ---- files -----------------------------------------------------------------------------

TEST_P(LandlockEscape, SecretsInTheHomeAndTheGatewayStateCannotBeReadOrListed) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  ScopedPath state_dir("/var/lib/sandbox-host-test-" + random_suffix());
  fs::create_directory(state_dir.path());
  fs::permissions(state_dir.path(), kWorldReadableDir);
  hand_to_user(state_dir.path());
  const fs::path state = state_dir.path() / "state.db";
  write_file(state, "gateway-state\n", kWorldReadable);
  hand_to_user(state);

  EXPECT_TRUE(DeniedWith(attempt({"read", secret.string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", secret.parent_path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"read", state.string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", state_dir.path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/var/lib"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/etc"}), "EACCES"));
  // Only the non-secret part of /etc is granted (root could read shadow on the host).
  EXPECT_TRUE(DeniedWith(attempt({"read", "/etc/shadow"}), "EACCES"));
  EXPECT_TRUE(Allowed(attempt({"read", "/etc/passwd"})));
}

TEST_P(LandlockEscape, WritesOutsideSocketDirAndTmpDirAreRefused) {
  const std::string name = "sandbox-host-escape-" + random_suffix();
  // The host's /tmp and /var/tmp are writable by everyone, the workspace (beside SocketDir
  // and TmpDir) is the launching user's own: only Landlock stands in the way there.
  for (const fs::path &target :
       {fs::path("/" + name), fs::path("/usr/" + name), fs::path("/etc/" + name),
        fs::path("/usr/bin/" + name), fs::path("/tmp/" + name), fs::path("/var/tmp/" + name),
        fs::path("/dev/shm/" + name), workspace_.dir() / name}) {
    EXPECT_TRUE(DeniedWith(attempt({"write", target.string()}), "EACCES")) << target;
    EXPECT_FALSE(fs::exists(target)) << target << " appeared on the host";
    std::error_code ignored;
    fs::remove(target, ignored);
  }
  // An existing file of the launching user's, writable on the host.
  ScopedPath own("/tmp/sandbox-host-test-own-" + random_suffix());
  write_file(own.path(), "host data\n", kWorldReadable);
  hand_to_user(own.path());
  EXPECT_TRUE(DeniedWith(attempt({"open-write", own.path().string()}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"write", own.path().string()}), "EACCES"));
  EXPECT_EQ(slurp(own.path()), "host data\n");
}

// SocketDir's parent is the launching user's: a grant on SocketDir must not reach beside it.
TEST_P(LandlockEscape, WritesBesideASocketDirOutsideTmpAreRefused) {
  ScopedPath parent("/var/tmp/sandbox-host-test-" + random_suffix());
  fs::create_directory(parent.path());
  fs::permissions(parent.path(), kWorldReadableDir);
  hand_to_user(parent.path());
  fs::create_directory(parent.path() / "sock");
  hand_to_user(parent.path() / "sock");
  Launch launch;
  launch.socket_dir = (parent.path() / "sock").string();

  const fs::path beside = parent.path() / "beside";
  EXPECT_TRUE(DeniedWith(attempt({"write", beside.string()}, launch), "EACCES"));
  EXPECT_FALSE(fs::exists(beside));
  EXPECT_TRUE(Allowed(attempt({"write", (parent.path() / "sock/inside").string()}, launch)));
  EXPECT_TRUE(fs::exists(parent.path() / "sock/inside"));
}

TEST_P(LandlockEscape, TruncateOfAFileOutsideTheGrantsIsRefused) {
  if (abi() < 3) GTEST_SKIP() << "truncate(2) is restricted from ABI 3; the warning says so";
  ScopedPath own("/tmp/sandbox-host-test-truncate-" + random_suffix());
  write_file(own.path(), "host data\n", kWorldReadable);
  hand_to_user(own.path());
  EXPECT_TRUE(DeniedWith(attempt({"truncate", own.path().string()}), "EACCES"));
  EXPECT_EQ(slurp(own.path()), "host data\n");
}

TEST_P(LandlockEscape, WritesInSocketDirAndTmpDirReachTheHostAtTheSamePath) {
  for (const fs::path &target : {socket_dir() / "from-plugin", tmp_dir() / "from-plugin"}) {
    EXPECT_TRUE(Allowed(attempt({"write", target.string()}))) << target;
    EXPECT_EQ(slurp(target), "written by escape_plugin\n") << target;
    struct stat st {};
    ASSERT_EQ(::stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid()) << target;
    // Its own files it may also truncate.
    EXPECT_TRUE(Allowed(attempt({"truncate", target.string()}))) << target;
    EXPECT_EQ(slurp(target), "") << target;
  }
}

TEST_P(LandlockEscape, ReadPathsAreReadOnly) {
  test::TempFile data("data\n", "data.txt");
  hand_to_user(data.dir());
  hand_to_user(data.path());
  test::TempFile single("single\n", "single.txt");
  hand_to_user(single.path());
  Launch launch;
  launch.read = {data.dir().string(), single.path().string()};

  Attempt read = attempt({"read", data.path().string()}, launch);
  EXPECT_TRUE(Allowed(read));
  EXPECT_EQ(read.verdict, "ALLOWED data.");
  EXPECT_EQ(attempt({"list", data.dir().string()}, launch).verdict, "ALLOWED data.txt");
  EXPECT_EQ(attempt({"read", single.path().string()}, launch).verdict, "ALLOWED single.");
  // The launching user owns them: only Landlock refuses.
  for (const fs::path &path : {data.path(), single.path()}) {
    EXPECT_TRUE(DeniedWith(attempt({"write", path.string()}, launch), "EACCES")) << path;
    if (abi() >= 3) {
      EXPECT_TRUE(DeniedWith(attempt({"truncate", path.string()}, launch), "EACCES")) << path;
    }
  }
  EXPECT_TRUE(DeniedWith(attempt({"write", (data.dir() / "new").string()}, launch), "EACCES"));
  EXPECT_EQ(slurp(data.path()), "data\n");
  EXPECT_EQ(slurp(single.path()), "single\n");
  EXPECT_FALSE(fs::exists(data.dir() / "new"));
  // A file ReadPath grants that file alone, not its directory.
  EXPECT_TRUE(DeniedWith(attempt({"list", single.dir().string()}, launch), "EACCES"));
}

// The plugin's binary, owned by the launching user, is granted read and execute only. A
// running ELF binary refuses writes by itself (ETXTBSY) before Landlock is asked, so the
// plugin here is a script, which its interpreter only reads: it has escape_plugin (granted
// as a ReadPath) try to write and truncate the script.
TEST_P(LandlockEscape, ThePluginsBinaryIsReadOnly) {
  test::TempFile script("", "plugin.sh");
  write_file(script.path(), "#!/bin/sh\nexec " + plugin() + " \"$1\" \"$0\"\n", kWorldReadableDir);
  hand_to_user(script.path());
  const std::string before = slurp(script.path());
  Launch launch;
  launch.read = {plugin()};
  EXPECT_TRUE(
      DeniedWith(to_attempt(run(script.path().string(), {"open-write"}, launch)), "EACCES"));
  EXPECT_TRUE(DeniedWith(to_attempt(run(script.path().string(), {"write"}, launch)), "EACCES"));
  if (abi() >= 3) {
    EXPECT_TRUE(
        DeniedWith(to_attempt(run(script.path().string(), {"truncate"}, launch)), "EACCES"));
  }
  EXPECT_EQ(slurp(script.path()), before);
  // The ELF plugin itself: refused too, whichever check answers first.
  EXPECT_TRUE(Denied(attempt({"write-binary"})));
}

TEST_P(LandlockEscape, SymlinksInAReadPathLeadNowhereOutsideTheGrants) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  test::TempFile data("inside\n", "data.txt");
  test::TempFile sibling("sibling-secret\n", "secret.txt");
  const fs::path dir = data.dir() / "granted";
  fs::create_directory(dir);
  fs::rename(data.path(), dir / "data.txt");
  fs::create_symlink(secret, dir / "to-secret");
  fs::create_symlink(sibling.path(), dir / "to-sibling");
  fs::create_symlink(fs::relative(sibling.path(), dir), dir / "to-sibling-relative");
  fs::create_symlink(dir / "data.txt", dir / "to-inside");
  Launch launch;
  launch.read = {dir.string()};

  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-secret").string()}, launch), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"read", (dir / "to-sibling").string()}, launch), "EACCES"));
  EXPECT_TRUE(
      DeniedWith(attempt({"read", (dir / "to-sibling-relative").string()}, launch), "EACCES"));
  Attempt inside = attempt({"read", (dir / "to-inside").string()}, launch);
  EXPECT_TRUE(Allowed(inside));
  EXPECT_EQ(inside.verdict, "ALLOWED inside.");
}

}  // namespace
}  // namespace sandbox_host
