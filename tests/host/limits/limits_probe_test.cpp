// `sandbox-host probe` on [limits], for the namespaces and the Landlock backend, as root and as
// nobody: which limits hold here and why not, and the memory rlimit without a cgroup.
#include "limits_harness.hpp"

namespace sandbox_host::test {
namespace {

using namespace limits_harness;

TEST_P(LimitsTest, ProbeSaysWhichLimitsHoldHereAndWhyNot) {
  configure("");
  const ProbeRows probe = probe_rows();
  ASSERT_FALSE(probe.by_limit.empty()) << probe.out;
  const auto &by_limit = probe.by_limit;
  const CgroupPlacement placement = CgroupPlacement::find("auto");
  const bool cgroups = root() && placement.bounds("memory");
  // Root's auto cgroups hold memory; nobody has none delegated by default, so each process's
  // RLIMIT_DATA holds it, which probe says with what that leaves out.
  EXPECT_TRUE(by_limit.at("memory")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("memory")->getValue<std::string>("value"), "2G");
  const auto memory_by = by_limit.at("memory")->getArray("by");
  ASSERT_TRUE(memory_by) << probe.out;
  ASSERT_EQ(memory_by->size(), 1u) << probe.out;
  EXPECT_EQ(memory_by->getElement<std::string>(0).rfind(
                cgroups ? "cgroup v" : "RLIMIT_DATA per process (no cgroup)", 0),
            0u)
      << probe.out;
  // RLIMIT_NPROC binds nobody, never root.
  EXPECT_EQ(by_limit.at("processes")->getValue<bool>("enforced"),
            !root() || placement.bounds("pids"))
      << probe.out;
  EXPECT_TRUE(by_limit.at("open_files")->getValue<bool>("enforced"));
  EXPECT_EQ(by_limit.at("tmp_size")->getValue<bool>("enforced"), namespaces()) << probe.out;
  EXPECT_TRUE(by_limit.at("scratch_size")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("scratch_size")->getValue<std::string>("value"), "1G");
  EXPECT_TRUE(by_limit.at("scratch_files")->getValue<bool>("enforced")) << probe.out;
  // Off unless the operator sets it.
  EXPECT_FALSE(by_limit.at("lifetime")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("lifetime")->getValue<std::string>("value"), "unlimited");
}

TEST_P(LimitsTest, ProbeSaysTheMemoryRlimitHoldsWithoutACgroup) {
  configure("[limits]\ncgroup = \"off\"\nmemory = \"256M\"\n");
  const ProbeRows probe = probe_rows();
  ASSERT_EQ(probe.by_limit.count("memory"), 1u) << probe.out;
  const Poco::JSON::Object::Ptr memory = probe.by_limit.at("memory");
  EXPECT_TRUE(memory->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(memory->getValue<std::string>("value"), "256M");
  const auto by = memory->getArray("by");
  ASSERT_TRUE(by) << probe.out;
  ASSERT_EQ(by->size(), 1u) << probe.out;
  // The mechanism, then what it leaves out.
  const std::string how = by->getElement<std::string>(0);
  EXPECT_EQ(how.rfind("RLIMIT_DATA per process (no cgroup)", 0), 0u) << how;
  EXPECT_NE(how.find("processes times memory"), std::string::npos) << how;
  EXPECT_NE(how.find("shared memory"), std::string::npos) << how;
}

}  // namespace
}  // namespace sandbox_host::test
