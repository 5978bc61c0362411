// Probe falls back to Landlock where user namespaces do not work, with the warning the
// backend's own code writes for this kernel's ABI; CLAWPATROL_SANDBOX_BACKEND=landlock
// forces it where namespaces work too. Through the real `sandbox-host probe` and `run`.
#include "coverage_warning.hpp"
#include "fixtures.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using test::ProcessResult;
using test::run_process;

const std::vector<std::string> kEnv{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

std::vector<std::string> env_forcing(const std::string &backend) {
  std::vector<std::string> env = kEnv;
  env.push_back("CLAWPATROL_SANDBOX_BACKEND=" + backend);
  return env;
}

Poco::JSON::Object::Ptr parsed(const ProcessResult &result) {
  return Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
}

Poco::JSON::Object::Ptr backend_named(const Poco::JSON::Object::Ptr &out, const std::string &name) {
  auto backends = out->getArray("backends");
  for (size_t i = 0; i < backends->size(); ++i) {
    auto backend = backends->getObject(static_cast<unsigned>(i));
    if (backend->getValue<std::string>("name") == name) return backend;
  }
  return nullptr;
}

// The plugin's pid and whether it could list /proc: a shell's own pid, then `ls /proc`'s
// verdict. Under namespaces the shell is pid 2 (its init is 1) and /proc is its own; under
// Landlock its pid is the host's and /proc is not granted.
struct Where {
  int pid = 0;
  bool proc_listed = false;
};
Where where_it_ran(const ProcessResult &result) {
  Where where;
  std::istringstream in(result.out);
  std::string proc;
  in >> where.pid >> proc;
  where.proc_listed = proc == "proc-listed";
  return where;
}
const std::vector<std::string> kWhereAmI{
    "--", "/bin/sh", "-c", "echo $$; ls /proc >/dev/null 2>&1 && echo proc-listed || echo no-proc"};

class LandlockProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  }
  static std::vector<std::string> run_argv(const std::string &exe) {
    std::vector<std::string> argv{exe, "run"};
    argv.insert(argv.end(), kWhereAmI.begin(), kWhereAmI.end());
    return argv;
  }
};

TEST_F(LandlockProbe, ChosenWithItsWarningWhereUserNamespacesAreRefused) {
  ProcessResult result =
      run_process({DENY_USERNS, SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  auto out = parsed(result);
  const int abi = landlock::kernel_abi();
  const std::string expected_warning = landlock::coverage_warning(abi);

  EXPECT_EQ(out->getValue<std::string>("chosen"), "landlock") << result.out;
  EXPECT_EQ(out->getValue<std::string>("warning"), expected_warning);
  EXPECT_EQ(out->getValue<int>("landlock_abi"), abi);
  auto namespaces = backend_named(out, "namespaces");
  ASSERT_TRUE(namespaces) << result.out;
  EXPECT_FALSE(namespaces->getValue<bool>("available"));
  auto landlock = backend_named(out, "landlock");
  ASSERT_TRUE(landlock) << result.out;
  EXPECT_TRUE(landlock->getValue<bool>("available"));
  EXPECT_EQ(landlock->getValue<std::string>("warning"), expected_warning);

  // What the warning must say on this kernel, in the operator's words.
  const std::string warning = out->getValue<std::string>("warning");
  EXPECT_TRUE(warning.starts_with("degraded: Landlock ABI " + std::to_string(abi) +
                                  " without namespaces; not covered: "))
      << warning;
  for (const char *item :
       {"no pid namespace", "no mount namespace", "stat(2)",
        "connect(2) to the launching user's unix sockets by path", "no uts namespace"}) {
    EXPECT_NE(warning.find(item), std::string::npos) << item;
  }
  if (abi >= 7) {
    for (const char *closed : {"truncate(2)", "TCP", "ioctl(2)", "signals", "audit log"}) {
      EXPECT_EQ(warning.find(closed), std::string::npos) << closed << " is covered at ABI " << abi;
    }
  }
}

TEST_F(LandlockProbe, AFallbackLaunchRunsUnderLandlock) {
  ProcessResult result = run_process(
      [] {
        std::vector<std::string> argv{DENY_USERNS};
        auto run = run_argv(SANDBOX_HOST_EXE);
        argv.insert(argv.end(), run.begin(), run.end());
        return argv;
      }(),
      test::with_env(kEnv));
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  const Where where = where_it_ran(result);
  EXPECT_GT(where.pid, 2) << result.out;
  EXPECT_FALSE(where.proc_listed) << result.out;
}

TEST_F(LandlockProbe, ForcedWhereNamespacesWorkToo) {
  ProcessResult probe = run_process({SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(kEnv));
  ASSERT_EQ(probe.code, 0) << probe.err;
  ASSERT_EQ(parsed(probe)->getValue<std::string>("chosen"), "namespaces")
      << "this test needs a host where namespaces work";
  // The host asks the kernel nothing; both Linux backends report its Landlock ABI.
  EXPECT_EQ(parsed(probe)->getValue<int>("landlock_abi"), landlock::kernel_abi());
  for (const char *name : {"namespaces", "landlock"}) {
    auto backend = backend_named(parsed(probe), name);
    ASSERT_TRUE(backend) << probe.out;
    EXPECT_EQ(backend->getValue<int>("landlock_abi"), landlock::kernel_abi()) << name;
  }

  ProcessResult forced_probe =
      run_process({SANDBOX_HOST_EXE, "probe", "--json"}, test::with_env(env_forcing("landlock")));
  ASSERT_EQ(forced_probe.code, 0) << forced_probe.err;
  EXPECT_EQ(parsed(forced_probe)->getValue<std::string>("chosen"), "landlock");
  EXPECT_EQ(parsed(forced_probe)->getValue<std::string>("warning"),
            landlock::coverage_warning(landlock::kernel_abi()));

  // The contrast: unforced, the namespaces backend runs it as pid 2 with a /proc of its own.
  ProcessResult unforced = run_process(run_argv(SANDBOX_HOST_EXE), test::with_env(kEnv));
  ASSERT_EQ(unforced.code, 0) << unforced.err;
  EXPECT_EQ(where_it_ran(unforced).pid, 2) << unforced.out;
  EXPECT_TRUE(where_it_ran(unforced).proc_listed) << unforced.out;

  ProcessResult forced =
      run_process(run_argv(SANDBOX_HOST_EXE), test::with_env(env_forcing("landlock")));
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_GT(where_it_ran(forced).pid, 2) << forced.out;
  EXPECT_FALSE(where_it_ran(forced).proc_listed) << forced.out;
}

TEST_F(LandlockProbe, ForcedAsAnUnprivilegedUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become nobody";
  test::UnprivilegedInstall install;
  std::vector<std::string> argv = test::as_nobody();
  for (const std::string &arg : run_argv(install.sandbox_host())) argv.push_back(arg);
  ProcessResult forced = run_process(argv, test::with_env(env_forcing("landlock")));
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_GT(where_it_ran(forced).pid, 2) << forced.out;
  EXPECT_FALSE(where_it_ran(forced).proc_listed) << forced.out;
}

}  // namespace
}  // namespace sandbox_host
