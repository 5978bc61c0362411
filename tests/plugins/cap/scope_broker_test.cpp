// scope and cap-slot through the whole path: a real `sandbox-host serve` (as root and as
// nobody) with the cgroup v1 driver, asked by `sandbox-host sandbox scope` from inside a
// namespaces sandbox (`sandbox-host run`). The command it runs must land in the new
// scope, held to its cap by the kernel, while the shell that asked stays where it was.
#include "cap_harness.hpp"
#include "served_broker.hpp"

#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

namespace cap_test {
namespace {
namespace fs = std::filesystem;
using sandbox_host::test::BrokerSetup;
using sandbox_host::test::field;
using sandbox_host::test::kNobody;
using sandbox_host::test::ProcessResult;
using sandbox_host::test::run_process;
using sandbox_host::test::ServedBroker;

// The slots' parent cgroup, handed to the broker's user.
std::unique_ptr<TestCgroup> slots_for(unsigned uid) {
  auto parent = std::make_unique<TestCgroup>(own_memory_cgroup());
  if (::chown(parent->path().c_str(), uid, uid) != 0) throw std::runtime_error("chown slots");
  return parent;
}

BrokerSetup cap_setup(unsigned uid, const fs::path &parent) {
  BrokerSetup setup = sandbox_host::test::setup_for(uid);
  setup.spool_in_sandbox_dir = true;
  setup.ops = {"ping", "scope", "cap-slot"};
  setup.op_tables = "[ops.scope]\nparent = \"" + parent.string() +
                    "\"\n[ops.cap-slot]\nparent = \"" + parent.string() + "\"\n";
  return setup;
}

class ScopeThroughTheBroker : public testing::TestWithParam<unsigned> {
 protected:
  ScopeThroughTheBroker()
      : slots_(slots_for(GetParam())), broker_(cap_setup(GetParam(), slots_->path())) {
    hog_ = broker_.install().add_binary(MEMORY_HOG);
  }

  // `sandbox-host run` under the namespaces backend, as the broker's user, of /bin/sh -c
  // script with $0 sandbox-host, $1 the spool and $2 the memory hog.
  ProcessResult in_sandbox(const std::string &script) const {
    std::vector<std::string> argv = broker_.as_user();
    for (const std::string &arg :
         {std::string("/usr/bin/env"), std::string("CLAWPATROL_SANDBOX_BACKEND=namespaces"),
          broker_.sandbox_host(), std::string("run"), std::string("--socket-dir"),
          broker_.sandbox_dir().string(), std::string("--read"), broker_.install().dir().string(),
          std::string("--"), std::string("/bin/sh"), std::string("-c"), script,
          broker_.sandbox_host(), broker_.spool().string(), hog_}) {
      argv.push_back(arg);
    }
    return run_process(argv);
  }

  std::unique_ptr<TestCgroup> slots_;  // outlives the broker and what it moved
  ServedBroker broker_;
  std::string hog_;
};

TEST_P(ScopeThroughTheBroker, RunsTheCommandInsideTheSandboxInItsCappedScope) {
  const ProcessResult result = in_sandbox(R"sh(
echo "before=$(grep :memory: /proc/self/cgroup)"
"$0" sandbox scope --spool "$1" --slice slot1.slice --max 32M --swap 0 --unit fits.scope -- \
  /bin/sh -c 'echo "inside=$(grep :memory: /proc/self/cgroup)"; exec "$0" 8' "$2"
echo "fits=$?"
"$0" sandbox scope --spool "$1" --slice slot1.slice --max 32M --swap 0 --unit hog.scope -- "$2" 64
echo "hog=$?"
echo "after=$(grep :memory: /proc/self/cgroup)"
)sh");
  ASSERT_EQ(result.code, 0) << result.out << result.err;
  // The command ran in the new scope (the sandbox's cgroup namespace shows the path from
  // where the sandbox started, this test's own cgroup).
  const fs::path slice = slots_->path() / "slot1.slice";
  EXPECT_TRUE(field(result.out, "inside")
                  .ends_with("/" + slots_->path().filename().string() + "/slot1.slice/fits.scope"))
      << result.out;
  EXPECT_NE(result.out.find("touched 8 MiB"), std::string::npos) << result.out;
  EXPECT_EQ(field(result.out, "fits"), "0");
  // The hog wants 64 MiB of a 32 MiB cap with no swap: its cgroup's OOM killer ends it.
  EXPECT_EQ(field(result.out, "hog"), std::to_string(128 + SIGKILL)) << result.out << result.err;
  EXPECT_EQ(result.out.find("touched 64 MiB"), std::string::npos);
  EXPECT_EQ(read_file(slice / "hog.scope/memory.limit_in_bytes"), std::to_string(32 << 20) + "\n");
  EXPECT_EQ(read_file(slice / "hog.scope/memory.memsw.limit_in_bytes"),
            std::to_string(32 << 20) + "\n");
  EXPECT_NE(read_file(slice / "hog.scope/memory.oom_control").find("oom_kill 1"),
            std::string::npos);
  // Only the requester moved: the shell that asked stays in the sandbox's cgroup.
  EXPECT_FALSE(field(result.out, "before").empty());
  EXPECT_EQ(field(result.out, "after"), field(result.out, "before")) << result.out;
}

TEST_P(ScopeThroughTheBroker, RefusedRunsNothing) {
  std::vector<std::string> argv = broker_.as_user();
  for (const std::string &arg :
       {broker_.sandbox_host(), std::string("sandbox"), std::string("scope"),
        std::string("--spool"), broker_.spool().string(), std::string("--slice"),
        std::string("../x.slice"), std::string("--max"), std::string("32M"), std::string("--swap"),
        std::string("0"), std::string("--"), std::string("/bin/echo"), std::string("ran")}) {
    argv.push_back(arg);
  }
  const ProcessResult result = run_process(argv);
  EXPECT_EQ(result.code, 126);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "sandbox-host sandbox scope: refused: scope: slice \"../x.slice\" contains \"/\"\n");
  EXPECT_FALSE(fs::exists(slots_->path() / "x.slice"));
}

TEST_P(ScopeThroughTheBroker, RefusesARequestThatNamesAProcess) {
  const std::string init_before = cgroup_of(1, "memory");
  const ProcessResult result = broker_.spool_client(
      "good",
      R"({"op":"scope","slice":"slot1.slice","max":"32M","swap":"0","unit":"run.scope","pid":1})");
  EXPECT_NE(result.out.find("unknown field \\\"pid\\\""), std::string::npos) << result.out;
  EXPECT_FALSE(fs::exists(slots_->path() / "slot1.slice"));
  EXPECT_EQ(cgroup_of(1, "memory"), init_before);
}

TEST_P(ScopeThroughTheBroker, CapSlotCapsTheSliceAndProbeNamesTheDriver) {
  const ProcessResult capped =
      broker_.ask({"cap-slot", "--slice", "slot2.slice", "--max", "64M", "--swap", "16M"});
  ASSERT_EQ(capped.code, 0) << capped.err;
  EXPECT_EQ(read_file(slots_->path() / "slot2.slice/memory.limit_in_bytes"),
            std::to_string(64 << 20) + "\n");
  EXPECT_EQ(read_file(slots_->path() / "slot2.slice/memory.memsw.limit_in_bytes"),
            std::to_string(80 << 20) + "\n");

  // probe shows what each op module reports about itself, which the host names nothing of.
  const std::string config = (broker_.root() / "config.toml").string();
  const ProcessResult probe =
      run_process({broker_.sandbox_host(), "probe", "--verbose", "--config", config});
  const std::string report = "\n    driver: cgroup1 (parent " + slots_->path().string() +
                             ")\n    chosen: auto: no systemd; parent " + slots_->path().string() +
                             " is on a cgroup v1 hierarchy\n";
  EXPECT_NE(probe.out.find("\n  scope: loaded (0.1.0)" + report), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("\n  cap-slot: loaded (0.1.0)" + report), std::string::npos)
      << probe.out;

  const ProcessResult json =
      run_process({broker_.sandbox_host(), "probe", "--config", config, "--json"});
  Poco::JSON::Parser parser;
  const auto ops = parser.parse(json.out).extract<Poco::JSON::Object::Ptr>()->getArray("ops");
  ASSERT_TRUE(ops) << json.out;
  std::set<std::string> reported;
  for (std::size_t i = 0; i < ops->size(); ++i) {
    const auto op = ops->getObject(i);
    if (op->getValue<std::string>("name") != "scope" &&
        op->getValue<std::string>("name") != "cap-slot") {
      continue;
    }
    reported.insert(op->getValue<std::string>("name"));
    EXPECT_TRUE(op->getValue<bool>("loaded")) << json.out;
    EXPECT_EQ(op->getObject("report")->getValue<std::string>("driver"),
              "cgroup1 (parent " + slots_->path().string() + ")");
  }
  EXPECT_EQ(reported, (std::set<std::string>{"scope", "cap-slot"})) << json.out;
}

TEST_P(ScopeThroughTheBroker, ProbeSaysWhyAnOpDidNotLoad) {
  // The broker's own module directory (its config's first line), and a cap-slot without
  // the parent it requires.
  std::string module_dirs;
  std::getline(std::ifstream(broker_.root() / "config.toml"), module_dirs);
  const fs::path config = broker_.root() / "unloadable.toml";
  std::ofstream(config) << module_dirs << "\n[ops]\nenabled = [\"cap-slot\"]\n"
                        << "[ops.cap-slot]\ndriver = \"cgroup1\"\n";
  const ProcessResult probe =
      run_process({broker_.sandbox_host(), "probe", "--verbose", "--config", config.string()});
  EXPECT_NE(probe.out.find("\n  cap-slot: not loaded: module "), std::string::npos) << probe.out;
  EXPECT_NE(probe.out.find("init failed: ops.cap-slot.parent: is required"), std::string::npos)
      << probe.out;
}

INSTANTIATE_TEST_SUITE_P(Cap, ScopeThroughTheBroker, testing::Values(0u, kNobody),
                         [](const testing::TestParamInfo<unsigned> &info) {
                           return std::string(info.param == 0 ? "Root" : "Nobody");
                         });

}  // namespace
}  // namespace cap_test
