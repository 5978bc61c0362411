// Asking from inside a real sandbox, where the point is sandboxing: `sandbox-host ask` runs
// as the plugin of `sandbox-host run` under the namespaces and the Landlock backend, as
// root and as nobody, over the spool (in the sandbox's socket directory, the place a
// sandbox may write) and over a broker socket bound into it.
#include "served_broker.hpp"

#include <gtest/gtest.h>

namespace sandbox_host::test {
namespace {

struct Case {
  std::string backend;
  unsigned uid;
};

void PrintTo(const Case &c, std::ostream *out) {
  *out << c.backend << " as uid " << c.uid;
}

class Sandboxed : public testing::TestWithParam<Case> {
 protected:
  Sandboxed()
      : broker_([] {
          BrokerSetup setup = setup_for(GetParam().uid);
          setup.socket = true;
          setup.spool_in_sandbox_dir = true;
          setup.ops = {"ping", "whoami"};
          return setup;
        }()) {}

  // The sandboxed plugin: prints its own pid as it sees it, then becomes `ask`.
  ProcessResult ask_inside(const std::vector<std::string> &where) {
    std::vector<std::string> argv = broker_.as_user();
    for (const std::string &arg :
         {std::string("/usr/bin/env"), "CLAWPATROL_SANDBOX_BACKEND=" + GetParam().backend,
          broker_.sandbox_host(), std::string("run"), std::string("--socket-dir"),
          broker_.sandbox_dir().string(), std::string("--read"), broker_.install().dir().string(),
          std::string("--read"), broker_.socket().string(), std::string("--"),
          std::string("/bin/sh"), std::string("-c"),
          std::string("echo inner=$$; exec \"$0\" ask whoami \"$@\""), broker_.sandbox_host()}) {
      argv.push_back(arg);
    }
    argv.insert(argv.end(), where.begin(), where.end());
    return run_process(argv);
  }

  void expect_identified(const ProcessResult &result) {
    ASSERT_EQ(result.code, 0) << result.err;
    const bool namespaces = GetParam().backend == "namespaces";
    // The broker names the asker in its own pid namespace: not the pid the sandbox shows.
    EXPECT_FALSE(field(result.out, "pid").empty());
    if (namespaces) {
      EXPECT_NE(field(result.out, "pid"), field(result.out, "inner")) << result.out;
    } else {
      EXPECT_EQ(field(result.out, "pid"), field(result.out, "inner")) << result.out;
    }
    EXPECT_EQ(field(result.out, "uid"), std::to_string(GetParam().uid));
    // Another mount namespace (namespaces), or the sandbox's mark (Landlock, which keeps
    // the host's mount namespace).
    EXPECT_EQ(field(result.out, "sandboxed"), "yes") << result.out;
  }

  ServedBroker broker_;
};

TEST_P(Sandboxed, AsksOverTheSpool) {
  expect_identified(ask_inside({"--spool", broker_.spool().string()}));
}

TEST_P(Sandboxed, AsksOverTheBrokerSocket) {
  expect_identified(ask_inside({"--socket", broker_.socket().string()}));
}

INSTANTIATE_TEST_SUITE_P(Broker, Sandboxed,
                         testing::Values(Case{"namespaces", 0}, Case{"namespaces", kNobody},
                                         Case{"landlock", 0}, Case{"landlock", kNobody}),
                         [](const testing::TestParamInfo<Case> &info) {
                           return info.param.backend + (info.param.uid == 0 ? "Root" : "Nobody");
                         });

}  // namespace
}  // namespace sandbox_host::test
