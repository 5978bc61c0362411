// Probe tries a user namespace for real, and when the host refuses one, says which setting
// refused it and what would allow it.
#include "fixtures.hpp"
#include "process.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

namespace sandbox_host {
namespace {

using test::ProcessResult;
using test::run_process;

Poco::JSON::Object::Ptr backend_named(const ProcessResult &result, const std::string &name) {
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  auto backends = out->getArray("backends");
  for (size_t i = 0; i < backends->size(); ++i) {
    auto backend = backends->getObject(static_cast<unsigned>(i));
    if (backend->getValue<std::string>("name") == name) return backend;
  }
  return nullptr;
}

const std::vector<std::string> kEnv{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

// Where user namespaces fail, Probe falls back to Landlock and says what that leaves out.
void expect_landlock_chosen(const ProcessResult &result) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U);
  ASSERT_GT(abi, 0) << "this test needs a kernel with Landlock";
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(out->getValue<std::string>("chosen"), "landlock") << result.out;
  auto landlock = backend_named(result, "landlock");
  ASSERT_TRUE(landlock) << result.out;
  EXPECT_TRUE(landlock->getValue<bool>("available"));
  EXPECT_TRUE(landlock->getValue<std::string>("warning").starts_with(
      "degraded: Landlock ABI " + std::to_string(abi) + " without namespaces; not covered: "))
      << landlock->getValue<std::string>("warning");
}

// Where probe found the namespaces backend unavailable and chose landlock: its entry.
Poco::JSON::Object::Ptr namespaces_refused(const ProcessResult &result) {
  EXPECT_EQ(result.code, 0) << result.err;
  expect_landlock_chosen(result);
  auto namespaces = backend_named(result, "namespaces");
  EXPECT_TRUE(namespaces) << result.out << result.err;
  if (namespaces) {
    EXPECT_FALSE(namespaces->getValue<bool>("available"));
  }
  return namespaces;
}

TEST(NamespacesProbe, WorksOnThisHost) {
  ProcessResult result = run_process({SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  auto namespaces = backend_named(result, "namespaces");
  ASSERT_TRUE(namespaces);
  EXPECT_TRUE(namespaces->getValue<bool>("available"))
      << namespaces->getValue<std::string>("reason");
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(out->getValue<std::string>("chosen"), "namespaces");
}

// user.max_user_namespaces is per user namespace: set to 0 inside a namespace of the test's
// own, it refuses sandbox-host's namespaces there without touching the machine.
TEST(NamespacesProbe, NamesMaxUserNamespacesZero) {
  ProcessResult result = run_process(
      {"/usr/bin/unshare", "--user", "--map-root-user", "--", "/bin/sh", "-c",
       "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" probe --json", SANDBOX_HOST_EXE},
      test::with_env(kEnv));
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces);
  EXPECT_EQ(namespaces->getValue<std::string>("reason"),
            "creating a user namespace failed: No space left on device "
            "(user.max_user_namespaces=0)");
  EXPECT_EQ(namespaces->getValue<std::string>("hint"), "sysctl -w user.max_user_namespaces=15000");
}

// The kernel nests user namespaces 32 deep: probe run 32 levels below this test's own (each
// level a real `unshare --user`) cannot make one more, and says that depth may be why.
TEST(NamespacesProbe, NamesTheNestingDepthOfUserNamespaces) {
  // One level per call, then probe --json at the bottom.
  const std::string nest =
      "n=$1; shift; if [ \"$n\" -le 0 ]; then exec \"$@\"; fi; "
      "exec /usr/bin/unshare --user --map-root-user -- /bin/sh -c \"$NEST\" sh $((n-1)) \"$@\"";
  std::vector<std::string> env = kEnv;
  env.push_back("NEST=" + nest);
  // This test may itself run in a user namespace already: count its levels from uid_map
  // alone is not possible, so go down until one more is refused, at most 40.
  ProcessResult result;
  for (int depth = 32; depth <= 40; ++depth) {
    result = run_process(
        {"/bin/sh", "-c", nest, "sh", std::to_string(depth), SANDBOX_HOST_EXE, "probe", "--json"},
        test::with_env(env));
    if (result.code != 0 || result.out.find("\"chosen\":\"namespaces\"") == std::string::npos) {
      break;
    }
  }
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces) << result.out << result.err;
  EXPECT_NE(namespaces->getValue<std::string>("reason").find(
                "(this process's user namespace is nested as deep as the kernel allows"),
            std::string::npos)
      << namespaces->getValue<std::string>("reason");
  EXPECT_NE(namespaces->getValue<std::string>("hint").find("shallower user namespace"),
            std::string::npos)
      << namespaces->getValue<std::string>("hint");
}

TEST(NamespacesProbe, NamesASeccompFilterThatRefusesUserNamespaces) {
  ProcessResult result =
      run_process({DENY_USERNS, SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces);
  EXPECT_EQ(namespaces->getValue<std::string>("reason"),
            "creating a user namespace failed: Operation not permitted (a seccomp filter on this "
            "process, as a container runtime installs, refuses it)");
  EXPECT_NE(namespaces->getValue<std::string>("hint").find("seccomp=unconfined"),
            std::string::npos);
}

TEST(NamespacesProbe, AForcedNamespacesBackendThatCannotWorkIsRefused) {
  std::vector<std::string> env = kEnv;
  env.push_back("CLAWPATROL_SANDBOX_BACKEND=namespaces");
  ProcessResult result = run_process(
      {DENY_USERNS, SANDBOX_HOST_EXE, "run", "--", REPORT_PLUGIN, "report"}, test::with_env(env));
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("sandbox-host run: CLAWPATROL_SANDBOX_BACKEND=namespaces: the forced "
                            "backend does not work here, and a forced backend never falls "
                            "through: creating a user namespace failed: Operation not permitted"),
            std::string::npos)
      << result.err;
}

// A security module that refuses mounts (AppArmor's docker-default profile in a container)
// leaves the user namespace working and every sandbox failing: probe names the mount, not
// the user namespace, and chooses landlock.
TEST(NamespacesProbe, NamesASecurityModuleThatRefusesMounts) {
  const ProcessResult result =
      run_process({DENY_MOUNT, SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces);
  EXPECT_TRUE(namespaces->getValue<std::string>("reason").starts_with(
      "mounting a tmpfs in the new mount namespace failed: Permission denied"))
      << namespaces->getValue<std::string>("reason");
  EXPECT_NE(namespaces->getValue<std::string>("hint").find("AppArmor profile"), std::string::npos);
}

// Root without capabilities (a container that drops them all) makes a user namespace but
// may not map uid 0 into it: the kernel asks CAP_SETFCAP. Probe says so and what to do.
TEST(NamespacesProbe, NamesRootWithoutCapabilities) {
  if (::geteuid() != 0) GTEST_SKIP() << "is about root";
  const ProcessResult result = run_process({"/usr/bin/setpriv", "--bounding-set=-all",
                                            "--inh-caps=-all", SANDBOX_HOST_EXE, "probe", "--json"},
                                           test::with_env(kEnv));
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces);
  EXPECT_EQ(namespaces->getValue<std::string>("reason"),
            "writing the new user namespace's uid and gid maps failed: Operation not permitted");
  EXPECT_NE(namespaces->getValue<std::string>("hint").find("CAP_SETFCAP"), std::string::npos);
}

// A container profile older than Landlock answers EPERM to its system calls, as to all it
// does not list: probe says a seccomp filter refused it (not that the kernel lacks it), no
// backend is chosen, and a launch is refused before anything runs.
TEST(NamespacesProbe, NamesASeccompFilterThatRefusesLandlockToo) {
  const ProcessResult result = run_process(
      {DENY_USERNS, "--and-landlock", SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  EXPECT_EQ(result.code, 1) << "probe's status where no backend works" << result.err;
  auto landlock = backend_named(result, "landlock");
  ASSERT_TRUE(landlock) << result.out << result.err;
  EXPECT_FALSE(landlock->getValue<bool>("available"));
  EXPECT_EQ(landlock->getValue<std::string>("reason"),
            "landlock_create_ruleset failed: Operation not permitted (a seccomp filter on this "
            "process, as a container runtime installs, refuses it)");
  EXPECT_NE(landlock->getValue<std::string>("hint").find("landlock_restrict_self"),
            std::string::npos);
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  EXPECT_TRUE(out->isNull("chosen")) << result.out;

  const ProcessResult launch =
      run_process({DENY_USERNS, "--and-landlock", SANDBOX_HOST_EXE, "run", "--", "/bin/true"},
                  test::with_env(kEnv));
  EXPECT_EQ(launch.code, 125) << launch.err;
  EXPECT_NE(launch.err.find("no sandbox backend works on this host"), std::string::npos)
      << launch.err;
}

// A container masks paths of its /proc (podman and Docker bind /dev/null over /proc/kcore and
// others, and mount /proc/sys read-only), and the kernel then refuses a fresh /proc in a user
// namespace. The test mounts /proc/sys read-only in a mount namespace of its own and
// launches there, as root and as nobody: probe finds namespaces unavailable, says why and
// what would give it back, and chooses landlock, which launches; a forced namespaces backend
// is refused by probe, never left to fail at the launch.
struct MaskedProcCase {
  bool nobody;
};

class MaskedProc : public ::testing::TestWithParam<MaskedProcCase> {
 protected:
  // argv run as the case's user inside a mount namespace whose /proc/sys is a read-only
  // mount of its own, as in a container.
  ProcessResult run_masked(const std::vector<std::string> &argv) const {
    if (::geteuid() != 0) return {};
    std::vector<std::string> masked{
        "/usr/bin/unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        "mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys && "
        "exec \"$@\"",
        "sh"};
    if (GetParam().nobody) {
      const auto nobody = test::as_nobody();
      masked.insert(masked.end(), nobody.begin(), nobody.end());
    }
    masked.insert(masked.end(), argv.begin(), argv.end());
    return run_process(masked, test::with_env(kEnv));
  }

  test::UnprivilegedInstall install_;
};

TEST_P(MaskedProc, ProbeFindsNamespacesUnavailableAndSaysWhatWouldGiveItBack) {
  if (::geteuid() != 0) GTEST_SKIP() << "masking /proc/sys needs root";
  const ProcessResult result = run_masked({install_.sandbox_host(), "probe", "--json"});
  auto namespaces = namespaces_refused(result);
  ASSERT_TRUE(namespaces);
  EXPECT_TRUE(namespaces->getValue<std::string>("reason").starts_with(
      "mounting the sandbox's /proc failed: Operation not permitted: this host's /proc hides "
      "some of its paths"))
      << namespaces->getValue<std::string>("reason");
  EXPECT_NE(namespaces->getValue<std::string>("hint").find("procMount: Unmasked"),
            std::string::npos);
}

TEST_P(MaskedProc, ProbesChoiceLaunchesAndAForcedNamespacesIsRefusedBeforeTheLaunch) {
  if (::geteuid() != 0) GTEST_SKIP() << "masking /proc/sys needs root";
  const ProcessResult chosen = run_masked(
      {install_.sandbox_host(), "run", "--", "/bin/sh", "-c", "head -c 5 /etc/passwd; echo"});
  EXPECT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_EQ(chosen.out, "root:\n") << chosen.err;
  const ProcessResult forced =
      run_masked({install_.sandbox_host(), "run", "--backend", "namespaces", "--", "/bin/true"});
  EXPECT_EQ(forced.code, 125) << forced.err;
  EXPECT_NE(forced.err.find("mounting the sandbox's /proc failed"), std::string::npos)
      << forced.err;
}

INSTANTIATE_TEST_SUITE_P(Users, MaskedProc,
                         ::testing::Values(MaskedProcCase{false}, MaskedProcCase{true}),
                         [](const auto &info) { return info.param.nobody ? "nobody" : "root"; });

}  // namespace
}  // namespace sandbox_host
