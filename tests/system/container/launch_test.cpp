// sandbox-host inside a container, as an operator runs it there: probe names a backend and
// that backend launches; a backend forced where probe found it wanting is refused by probe
// with its reason, never left to fail at setup (exit 87); and the sandbox keeps the
// container's own secrets from the plugin. Every case of the matrix in podman.hpp (the
// container's user, its seccomp profile and its /proc), and the settings of deploy/kubernetes'
// DaemonSets.
#include "fixtures.hpp"
#include "podman.hpp"
#include "probe_view.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using namespace test::container;
using namespace std::chrono_literals;

class InContainer : public ::testing::TestWithParam<Case> {
 protected:
  // sandbox-host where the container's nobody can run it: the build may sit in root's 0700
  // home, which the overlaid root shows as it is.
  static void SetUpTestSuite() {
    install_ = new test::UnprivilegedInstall;
    demo_plugin_ = install_->add_binary(DEMO_PLUGIN);
  }
  static void TearDownTestSuite() {
    delete install_;
    install_ = nullptr;
  }

  std::string sandbox_host() const { return install_->sandbox_host(); }

  // Runs the steps in this case's container, which sees the install.
  ContainerRun run(const std::vector<std::string> &steps) const {
    return run_in_container(GetParam(), steps, {install_->dir()}, 60s);
  }

  std::string probe_step() const { return shell_words({sandbox_host(), "probe", "--json"}); }

  static inline test::UnprivilegedInstall *install_ = nullptr;
  static inline std::string demo_plugin_;
};

std::string random_suffix() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

TEST_P(InContainer, ProbeChoosesABackendThatLaunches) {
  const ContainerRun r = run(
      {probe_step(), shell_words({sandbox_host(), "run", "--name", "demo", "--", demo_plugin_})});
  if (r.unavailable) GTEST_SKIP() << *r.unavailable;
  ASSERT_EQ(r.steps.size(), 2u) << r.podman.err;
  const StepResult &probe = r.steps[0], &launch = r.steps[1];
  ASSERT_EQ(probe.code, 0) << probe;
  const auto view = read_probe(probe.out);
  ASSERT_TRUE(view) << probe;
  ASSERT_FALSE(view->chosen.empty()) << "probe chose no backend in this container\n" << probe;
  RecordProperty("chosen", view->chosen);

  EXPECT_EQ(launch.code, 0) << "probe chose " << view->chosen << ", which did not launch\n"
                            << launch;
  EXPECT_EQ(launch.out.rfind("1|1|unix|", 0), 0u) << "no go-plugin handshake line\n" << launch;

  // Where the container refuses user namespaces, Landlock is all there is; where it has the
  // settings deploy/kubernetes gives the namespaces backend, namespaces is what it gets (but
  // for a root without CAP_SETFCAP, which the kernel asks of whoever maps uid 0).
  const Case &c = GetParam();
  if (c.seccomp == Seccomp::docker_like) {
    EXPECT_EQ(view->chosen, "landlock") << probe;
  }
  if (c.seccomp == Seccomp::deploy_namespaces && c.proc == Proc::unmasked &&
      (c.user == User::nobody || c.privileges == Privileges::runtime_default)) {
    EXPECT_EQ(view->chosen, "namespaces") << probe;
  }
}

TEST_P(InContainer, ForcedNamespacesIsRefusedByProbeWhereItCannotWork) {
  const ContainerRun r =
      run({probe_step(), shell_words({"/usr/bin/env", "CLAWPATROL_SANDBOX_BACKEND=namespaces",
                                      sandbox_host(), "run", "--", "/bin/true"})});
  if (r.unavailable) GTEST_SKIP() << *r.unavailable;
  ASSERT_EQ(r.steps.size(), 2u) << r.podman.err;
  const StepResult &probe = r.steps[0], &forced = r.steps[1];
  const auto view = read_probe(probe.out);
  ASSERT_TRUE(view) << probe;

  // 87 is a sandbox that could not be set up: probe said the backend works, and it did not.
  EXPECT_NE(forced.code, 87) << "probe said namespaces "
                             << (view->namespaces_available ? "available" : "unavailable")
                             << ", and the launch failed at setup\n"
                             << forced;
  if (view->namespaces_available) {
    EXPECT_EQ(forced.code, 0) << forced;
  } else {
    EXPECT_EQ(forced.code, 125) << forced;
    EXPECT_FALSE(view->namespaces_reason.empty()) << probe;
    // The refusal says which backend was forced and why it does not work here.
    EXPECT_NE(forced.err.find("CLAWPATROL_SANDBOX_BACKEND=namespaces"), std::string::npos)
        << forced;
    EXPECT_NE(forced.err.find(view->namespaces_reason), std::string::npos)
        << "the refusal does not give probe's reason \"" << view->namespaces_reason << "\"\n"
        << forced;
  }
}

TEST_P(InContainer, TheContainersSecretIsOutOfReachAndSystemFilesAreNot) {
  const std::string suffix = random_suffix();
  // A file only the container's user may read, where no grant reaches: root's home, or a
  // 0700 directory of nobody's.
  const std::string dir = GetParam().user == User::root ? "/root/.sandbox-host-secret-" + suffix
                                                        : "/tmp/sandbox-host-secret-" + suffix;
  const std::string secret = dir + "/secret";
  const std::string contents = "container-secret-" + suffix;
  const ContainerRun r =
      run({"umask 077 && mkdir " + shell_words({dir}) + " && printf '%s\\n' " +
               shell_words({contents}) + " > " + shell_words({secret}) + " && cat " +
               shell_words({secret}),
           shell_words({sandbox_host(), "run", "--", "/bin/cat", secret}),
           shell_words({sandbox_host(), "run", "--", "/bin/cat", "/etc/passwd"})});
  if (r.unavailable) GTEST_SKIP() << *r.unavailable;
  ASSERT_EQ(r.steps.size(), 3u) << r.podman.err;
  const StepResult &own = r.steps[0], &sandboxed = r.steps[1], &system = r.steps[2];
  // The container's user reads it: only the sandbox stands in the way.
  ASSERT_EQ(own.code, 0) << own;
  ASSERT_NE(own.out.find(contents), std::string::npos) << own;

  // cat ran and failed: neither a refused launch (125) nor a failed setup (87).
  EXPECT_EQ(sandboxed.code, 1) << sandboxed;
  EXPECT_EQ(sandboxed.out.find(contents), std::string::npos) << sandboxed;
  EXPECT_NE(sandboxed.err.find("cat: " + secret), std::string::npos) << sandboxed;

  EXPECT_EQ(system.code, 0) << system;
  EXPECT_NE(system.out.find("root:x:0:0:"), std::string::npos) << system;
}

// Where the container's seccomp profile refuses user namespaces, probe's hint names the
// setting of this container's runtime (podman, here) that gives them back, in its JSON and in
// the text a person reads, and the Landlock it chose instead lists its gaps.
TEST_P(InContainer, ProbeNamesTheContainerSettingThatRefusesUserNamespaces) {
  const ContainerRun r = run({probe_step(), shell_words({sandbox_host(), "probe"})});
  if (r.unavailable) GTEST_SKIP() << *r.unavailable;
  ASSERT_EQ(r.steps.size(), 2u) << r.podman.err;
  const StepResult &json = r.steps[0], &text = r.steps[1];
  const auto view = read_probe(json.out);
  ASSERT_TRUE(view) << json;
  const std::string podman_setting =
      "this is a podman container: run it with --security-opt "
      "seccomp=<a profile that allows unshare";
  if (GetParam().seccomp != Seccomp::docker_like) {
    // Elsewhere the user namespace is made, so no seccomp setting is named.
    EXPECT_EQ(view->namespaces_hint.find(podman_setting), std::string::npos) << json;
    return;
  }
  EXPECT_FALSE(view->namespaces_available) << json;
  EXPECT_NE(view->namespaces_reason.find("(a seccomp filter on this process"), std::string::npos)
      << json;
  EXPECT_NE(view->namespaces_hint.find(podman_setting), std::string::npos) << json;
  EXPECT_EQ(view->chosen, "landlock") << json;
  EXPECT_GT(view->chosen_gaps, 0u) << json;
  // The text says it among its first lines, under the reason for passing namespaces over.
  ASSERT_EQ(text.code, 0) << text;
  EXPECT_EQ(text.out.rfind("chosen: landlock\nwhy: ", 0), 0u) << text;
  const std::size_t hint = text.out.find("    hint: this is a podman container");
  const std::size_t gaps = text.out.find("not covered (degraded: Landlock ABI");
  EXPECT_NE(hint, std::string::npos) << text;
  EXPECT_NE(gaps, std::string::npos) << text;
  EXPECT_LT(hint, gaps) << text;
}

INSTANTIATE_TEST_SUITE_P(Matrix, InContainer, ::testing::ValuesIn(every_case()), case_name);
INSTANTIATE_TEST_SUITE_P(Kubernetes, InContainer, ::testing::ValuesIn(kubernetes_cases()),
                         case_name);

}  // namespace
}  // namespace sandbox_host
