// The container suite's fixture: one podman container whose root is the host's own, overlaid
// (`--rootfs /:O`), so that the build and the test's install are there without an image, run
// under the settings an operator's container runtime picks: the user, the seccomp profile and
// whether /proc is masked. Each test runs a few commands in it, one after another, and reads
// each one's exit status and output on its own.
#pragma once

#include "process.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sandbox_host::test::container {

// The container's user: root (without CAP_SYS_ADMIN, as any container's), or nobody.
enum class User { root, nobody };

// The container's seccomp profile: podman's own default, which allows unprivileged user
// namespaces; one that refuses them the way Docker's and containerd's defaults do without
// CAP_SYS_ADMIN (Kubernetes' RuntimeDefault on containerd); or the Localhost profile shipped
// in deploy/kubernetes for the namespaces backend.
enum class Seccomp { runtime_default, docker_like, deploy_namespaces };

// The container's /proc: masked and partly read-only (every runtime's default), or unmasked
// (podman's unmask=ALL, Kubernetes' procMount: Unmasked).
enum class Proc { masked, unmasked };

// The container's capabilities: the runtime's default set, or none and no_new_privs (a
// Kubernetes container with capabilities.drop [ALL] and allowPrivilegeEscalation false, as
// the Pod Security Standards' restricted level asks and deploy/kubernetes gives).
enum class Privileges { runtime_default, none };

struct Case {
  User user;
  Seccomp seccomp;
  Proc proc;
  Privileges privileges = Privileges::runtime_default;
};

void PrintTo(const Case &c, std::ostream *out);
std::string case_name(const ::testing::TestParamInfo<Case> &info);

// Every combination, for INSTANTIATE_TEST_SUITE_P.
std::vector<Case> every_case();
// The cases whose user is root.
std::vector<Case> root_cases();
// deploy/kubernetes' two DaemonSets' containers (nobody, no capabilities, no_new_privs; the
// namespaces one with its Localhost profile and /proc unmasked, the landlock one with a
// RuntimeDefault that refuses user namespaces), and the namespaces one's run as root, which
// then has no CAP_SETFCAP to map uid 0 into a user namespace.
std::vector<Case> kubernetes_cases();

// What one command printed and how it ended.
struct StepResult {
  int code = -1;
  std::string out;
  std::string err;
};

std::ostream &operator<<(std::ostream &out, const StepResult &step);

// A command line for the container's /bin/sh: the words quoted, so that none is split or
// expanded.
std::string shell_words(const std::vector<std::string> &argv);

// What came out of one container: every step's result, in order, or why podman could not
// start it (then steps is empty and the test should skip with that reason).
struct ContainerRun {
  std::vector<StepResult> steps;
  std::optional<std::string> unavailable;
  ProcessResult podman;  // podman's own exit and output
};

// Runs `steps` (shell commands) in one container of case `c`, each with stdin from
// /dev/null, whatever the one before it did. `mounts` are host directories bind-mounted
// read-only at the same path, for what must be there even where the overlaid root does not
// show it (a directory on another file system than /).
ContainerRun run_in_container(const Case &c, const std::vector<std::string> &steps,
                              const std::vector<std::filesystem::path> &mounts,
                              std::chrono::milliseconds timeout);

}  // namespace sandbox_host::test::container
