// Inside a container without a cgroup namespace, each cgroup hierarchy is mounted from the
// container's own cgroup down, while /proc/self/cgroup names that cgroup in full. Probe must
// find the cgroup where the mount shows it, not below it again. The test makes that view
// itself (as root, on a cgroup v1 memory hierarchy): a cgroup of its own, bound over the
// hierarchy's mount point in a mount namespace of its own, with probe inside it.
#include "fixtures.hpp"
#include "process.hpp"

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <sandbox_host/cgroup_mounts.hpp>

namespace sandbox_host {
namespace {

TEST(CgroupView, ProbeFindsItsCgroupWhereAContainersMountShowsIt) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a cgroup and a mount namespace needs root";
  if (cgroup::cgroup_filesystem("/sys/fs/cgroup/memory") != "cgroup1") {
    GTEST_SKIP() << "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory here";
  }
  // The cgroup is made below the test's own, which it moves into and back out of; the
  // memory hierarchy's mount point then shows that cgroup at its top, as a container's does.
  const std::string script = R"(
    set -e
    own=$(awk -F: '$2 == "memory" {print $3}' /proc/self/cgroup)
    base=/sys/fs/cgroup/memory${own%/}
    view=$base/sandbox-host-view-$$
    mkdir "$view"
    trap 'echo $$ > "$base/cgroup.procs"; rmdir "$view"' EXIT
    echo $$ > "$view/cgroup.procs"
    unshare --mount --propagation private -- /bin/sh -c \
      'mount --bind "$1" /sys/fs/cgroup/memory && exec "$2" probe --json' sh "$view" "$0"
  )";
  const test::ProcessResult result = test::run_process({"/bin/sh", "-c", script, SANDBOX_HOST_EXE});
  ASSERT_EQ(result.code, 0) << result.err;
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  const std::string description =
      out->getObject("limits")->getObject("cgroup")->getValue<std::string>("description");
  EXPECT_NE(description.find("memory under /sys/fs/cgroup/memory"), std::string::npos)
      << description;
  EXPECT_EQ(description.find("sandbox-host-view-"), std::string::npos)
      << "looked for the cgroup below the mount's view of it again: " << description;
}

}  // namespace
}  // namespace sandbox_host
