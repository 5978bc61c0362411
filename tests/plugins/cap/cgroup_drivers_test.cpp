// cap-slot and scope with the cgroupfs drivers, loaded from their module files and asked
// for a real requester, against this machine's real cgroups: cgroup v1's memory hierarchy
// (where memory lives here) and cgroup v2's unified hierarchy (which here has no memory
// controller). And the settings each module refuses when it loads.
#include "cap_harness.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

namespace cap_test {
namespace {
namespace fs = std::filesystem;

sandbox_host::ModuleSettings cgroup_settings(const std::string &driver, const fs::path &parent) {
  return {{"driver", {driver}}, {"parent", {parent.string()}}};
}

std::string trimmed(const fs::path &file) {
  std::string text = read_file(file);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The cgroup path a hierarchy line of /proc/<pid>/cgroup gives for dir, a directory of the
// hierarchy mounted at mount.
std::string as_cgroup(const fs::path &mount, const fs::path &dir) {
  return "/" + fs::relative(dir, mount).string();
}

TEST(Cgroup1Driver, CapsTheSlotsSliceInMemoryAndMemsw) {
  TestCgroup parent(own_memory_cgroup());
  ops_test::Op op("cap-slot", cgroup_settings("cgroup1", parent.path()));
  Requester requester;
  const ops_test::Outcome outcome =
      ask(op, cap_request("cap-slot", "slot1.slice", "32M", "16M"), requester);
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  const fs::path slice = parent.path() / "slot1.slice";
  EXPECT_EQ(trimmed(slice / "memory.limit_in_bytes"), std::to_string(32 << 20));
  // v1 caps memory + swap together: memsw = max + swap.
  EXPECT_EQ(trimmed(slice / "memory.memsw.limit_in_bytes"), std::to_string(48 << 20));
  EXPECT_EQ(outcome.out, "capped slot1.slice: max 33554432, swap 16777216 (cgroup1 (parent " +
                             fs::canonical(parent.path()).string() + "))\n");
  // cap-slot moves nobody.
  EXPECT_NE(cgroup_of(requester.pid(), "memory"), as_cgroup("/sys/fs/cgroup/memory", slice));

  // Raised above the memsw in force, then lowered again: the order of the two writes
  // keeps memsw >= limit, or the kernel would refuse one.
  ASSERT_EQ(ask(op, cap_request("cap-slot", "slot1.slice", "1G", "0"), requester).status, SH_OK);
  EXPECT_EQ(trimmed(slice / "memory.limit_in_bytes"), std::to_string(1 << 30));
  EXPECT_EQ(trimmed(slice / "memory.memsw.limit_in_bytes"), std::to_string(1 << 30));
  ASSERT_EQ(ask(op, cap_request("cap-slot", "slot1.slice", "8M", "infinity"), requester).status,
            SH_OK);
  EXPECT_EQ(trimmed(slice / "memory.limit_in_bytes"), std::to_string(8 << 20));
  EXPECT_EQ(trimmed(slice / "memory.memsw.limit_in_bytes"),
            trimmed(parent.path() / "memory.memsw.limit_in_bytes"));
}

TEST(Cgroup1Driver, MovesTheRequesterAloneIntoItsCappedScope) {
  TestCgroup parent(own_memory_cgroup());
  const std::string before = cgroup_of(::getpid(), "memory");
  {
    ops_test::Op op("scope", cgroup_settings("auto", parent.path()));
    Requester requester;
    const ops_test::Outcome outcome =
        ask(op, cap_request("scope", "slot1.slice", "32M", "0", "run-1.scope"), requester);
    ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
    const fs::path scope = parent.path() / "slot1.slice/run-1.scope";
    EXPECT_EQ(cgroup_of(requester.pid(), "memory"), as_cgroup("/sys/fs/cgroup/memory", scope));
    EXPECT_EQ(trimmed(scope / "cgroup.procs"), std::to_string(requester.pid()));
    EXPECT_EQ(trimmed(scope / "memory.limit_in_bytes"), std::to_string(32 << 20));
    EXPECT_EQ(trimmed(scope / "memory.memsw.limit_in_bytes"), std::to_string(32 << 20));
    // The requester's parent, this test, stays where it was.
    EXPECT_EQ(cgroup_of(::getpid(), "memory"), before);

    // A unit that holds a process is not taken again, as systemd refuses a unit that exists.
    Requester second;
    const ops_test::Outcome again =
        ask(op, cap_request("scope", "slot1.slice", "32M", "0", "run-1.scope"), second);
    EXPECT_EQ(again.status, SH_ERROR);
    EXPECT_EQ(again.error, "scope: unit run-1.scope already exists and holds processes (" +
                               (fs::canonical(parent.path()) / "slot1.slice/run-1.scope").string() +
                               ")");
    EXPECT_EQ(cgroup_of(second.pid(), "memory"), before);
  }
}

TEST(Cgroup1Driver, RefusesARequesterThatHasExited) {
  TestCgroup parent(own_memory_cgroup());
  ops_test::Op op("scope", cgroup_settings("cgroup1", parent.path()));
  Requester requester;
  const pid_t pid = requester.pid();
  requester.end();
  const ops_test::Outcome outcome =
      ask(op, cap_request("scope", "slot1.slice", "32M", "0", "run-1.scope"), requester);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(outcome.error, "scope: the requester has exited") << pid;
}

TEST(Cgroup2Driver, MovesTheRequesterIntoAnUncappedScope) {
  TestCgroup parent(unified_mount());
  ops_test::Op op("scope", cgroup_settings("cgroup2", parent.path()));
  Requester requester;
  const ops_test::Outcome outcome = ask(
      op, cap_request("scope", "slot1.slice", "infinity", "infinity", "run-1.scope"), requester);
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  const fs::path scope = parent.path() / "slot1.slice/run-1.scope";
  EXPECT_EQ(cgroup_of(requester.pid(), ""), as_cgroup(unified_mount(), scope));
  EXPECT_EQ(trimmed(scope / "cgroup.procs"), std::to_string(requester.pid()));
  EXPECT_NE(cgroup_of(::getpid(), ""), as_cgroup(unified_mount(), scope));
}

TEST(Cgroup2Driver, RefusesACapWithoutTheMemoryController) {
  TestCgroup parent(unified_mount());
  ASSERT_EQ(read_file(parent.path() / "cgroup.controllers").find("memory"), std::string::npos)
      << "this host's cgroup2 has memory: this test shows its absence";
  ops_test::Op op("scope", cgroup_settings("auto", parent.path()));
  Requester requester;
  const ops_test::Outcome outcome =
      ask(op, cap_request("scope", "slot1.slice", "32M", "0", "run-1.scope"), requester);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(
      outcome.error.rfind("scope: cgroup2: the memory controller is missing in " +
                              fs::canonical(parent.path()).string() + " (its cgroup.controllers: ",
                          0),
      0u)
      << outcome.error;
  EXPECT_EQ(cgroup_of(requester.pid(), ""), cgroup_of(::getpid(), ""));
  ops_test::Op slot("cap-slot", cgroup_settings("cgroup2", parent.path()));
  EXPECT_NE(ask(slot, cap_request("cap-slot", "slot1.slice", "32M", "0"), requester)
                .error.find("the memory controller is missing"),
            std::string::npos);
}

TEST(CapOps, RefuseBadRequestsWithWhatIsWrong) {
  TestCgroup parent(own_memory_cgroup());
  ops_test::Op scope("scope", cgroup_settings("cgroup1", parent.path()));
  ops_test::Op slot("cap-slot", cgroup_settings("cgroup1", parent.path()));
  Requester requester;
  const std::vector<std::pair<sandbox_host::Request, std::string>> scope_cases{
      {cap_request("scope", "slot1.slice", "32M", "0"),
       "scope: unit is required: the scope to run in, <name>.scope"},
      {cap_request("scope", "slot1.slice", "32M", "0", "../x.scope"),
       "scope: unit \"../x.scope\" contains \"/\""},
      {cap_request("scope", "../slot1.slice", "32M", "0", "run.scope"),
       "scope: slice \"../slot1.slice\" contains \"/\""},
      {cap_request("scope", "slot1.slice", "32Q", "0", "run.scope"),
       "scope: max \"32Q\" is not a size: bytes, or a whole number with K, M, G or T "
       "(1024-based), or \"infinity\""},
  };
  for (const auto &[request, why] : scope_cases) {
    const ops_test::Outcome outcome = ask(scope, request, requester);
    EXPECT_EQ(outcome.status, SH_ERROR);
    EXPECT_EQ(outcome.error, why);
  }
  auto with_args = cap_request("cap-slot", "slot1.slice", "32M", "0");
  with_args.args = {"x"};
  EXPECT_EQ(ask(slot, with_args, requester).error,
            "cap-slot: takes no args; it takes slice, max and swap");
  EXPECT_EQ(
      ask(slot, cap_request("cap-slot", "slot1.slice", "32M", "0", "run.scope"), requester).error,
      "cap-slot: takes no unit; it takes slice, max and swap");
  // Nothing was made for a refused request.
  EXPECT_FALSE(fs::exists(parent.path() / "slot1.slice"));
}

TEST(CapOps, RefuseBadSettingsWhenTheyLoad) {
  TestCgroup v1(own_memory_cgroup());
  TestCgroup v2(unified_mount());
  EXPECT_EQ(ops_test::load_error("scope", {}),
            "ops.scope.parent: is required: the slice (systemd) or cgroup directory (cgroup2, "
            "cgroup1) the slots live under");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup3", v1.path())),
            "ops.scope.driver: \"cgroup3\" is no driver; drivers: auto, systemd, cgroup2, cgroup1");
  EXPECT_EQ(ops_test::load_error("cap-slot", {{"parent", {v1.path().string()}}, {"limit", {"1G"}}}),
            "ops.cap-slot.limit: unknown key; allowed: driver, parent, bus");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup2", v1.path())),
            "ops.scope.parent: \"" + v1.path().string() + "\" is not on cgroup v2 but on cgroup1");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup1", v2.path())),
            "ops.scope.parent: \"" + v2.path().string() + "\" is not on cgroup v1 but on cgroup2");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup1", "/tmp")),
            "ops.scope.parent: \"/tmp\" is not on cgroup v1 but on no cgroup filesystem");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup1", "slots.slice")),
            "ops.scope.parent: the cgroup1 driver takes an absolute cgroup directory, not "
            "\"slots.slice\"");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("cgroup1", v1.path() / "missing")),
            "ops.scope.parent: \"" + (v1.path() / "missing").string() + "\" is no directory");
  EXPECT_EQ(ops_test::load_error(
                "scope",
                {{"driver", {"cgroup1"}}, {"parent", {v1.path().string()}}, {"bus", {"system"}}}),
            "ops.scope.bus: is for the systemd driver, not cgroup1");
  EXPECT_EQ(
      ops_test::load_error("scope", {{"driver", {"systemd"}}, {"parent", {v1.path().string()}}}),
      "ops.scope.parent: the systemd driver (the config's driver) takes the slice the slots "
      "live under, like \"sandbox.slice\", not a path; set driver = \"cgroup2\" or "
      "\"cgroup1\" to write cgroup directories");
  EXPECT_EQ(ops_test::load_error("scope", {{"driver", {"systemd"}}, {"parent", {"-.slice"}}}),
            "ops.scope.parent: parent \"-.slice\" must not start with \"-\" or \".\"");
  EXPECT_EQ(ops_test::load_error("scope", {{"bus", {"nowhere"}}, {"parent", {"sandbox.slice"}}}),
            "ops.scope.bus: \"nowhere\" is neither \"system\", \"user\" nor a D-Bus address "
            "(\"unix:path=...\")");
  EXPECT_EQ(ops_test::load_error("scope", cgroup_settings("auto", v1.path())), "");
}

}  // namespace
}  // namespace cap_test
