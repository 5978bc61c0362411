// sandbox-host probe and modules, as an operator runs them.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/abi.h>
#include <sandbox_host/host/probe.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using test::ProcessResult;
using test::run_process;
using test::TempFile;

std::string test_modules_config(const std::string &rest) {
  return "module_dirs = [\"" + std::string(TEST_MODULE_DIR) + "\", \"" +
         std::string(BUILD_MODULE_DIR) + "\"]\n" + rest;
}

Poco::JSON::Object::Ptr json_of(const ProcessResult &result) {
  return Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
}

TEST(ProbeCommand, NothingWorkingExitsNonZeroAndSaysWhy) {
  TempFile config("[backends]\nenabled = [\"off\"]\npriority = []\n", "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "probe", "--json", "--config", config.path().string()});
  EXPECT_EQ(result.code, 1);
  auto out = json_of(result);
  EXPECT_EQ(out->getValue<std::string>("config"), config.path().string());
  EXPECT_TRUE(out->get("chosen").isEmpty());
  EXPECT_NE(out->getValue<std::string>("error").find("no sandbox backend works on this host"),
            std::string::npos);
  // Only off is enabled, and it looks at no Landlock.
  EXPECT_EQ(out->getValue<int>("landlock_abi"), 0);
  auto backends = out->getArray("backends");
  ASSERT_EQ(backends->size(), 1u);
  auto off = backends->getObject(0);
  EXPECT_EQ(off->getValue<std::string>("name"), "off");
  EXPECT_TRUE(off->getValue<bool>("available"));
  EXPECT_TRUE(off->getValue<bool>("explicit_only"));
}

TEST(ProbeCommand, SaysWhereAProxiedLaunchLeadsAndThroughWhat) {
  const std::string backends = "[backends]\nenabled = [\"off\"]\npriority = []\n";
  auto probe = [](const TempFile &config, bool json) {
    // Egress is among the details, which --verbose adds to the summary.
    std::vector<std::string> argv{SANDBOX_HOST_EXE, "probe", "--config", config.path().string()};
    argv.insert(argv.begin() + 2, json ? "--json" : "--verbose");
    return run_process(argv);
  };
  TempFile none(backends, "config.toml");
  EXPECT_TRUE(json_of(probe(none, true))->get("egress").isEmpty());
  EXPECT_NE(probe(none, false)
                .out.find("egress: none (no [egress] table: network proxied is "
                          "refused)\n"),
            std::string::npos);

  TempFile builtin(backends + "[egress]\nlisten = \"127.0.0.1:8118\"\nsocket = \"/run/e.sock\"\n",
                   "config.toml");
  auto proxy = json_of(probe(builtin, true))->getObject("egress");
  EXPECT_EQ(proxy->getValue<std::string>("implementation"), "proxy");
  EXPECT_TRUE(proxy->getValue<bool>("built_in"));
  EXPECT_EQ(proxy->getValue<std::string>("socket"), "/run/e.sock");
  EXPECT_EQ(proxy->getValue<int>("port"), 8118);
  EXPECT_NE(probe(builtin, false)
                .out.find("egress: proxy (built in)\n  a proxied sandbox's "
                          "127.0.0.1:8118 leads to /run/e.sock\n"),
            std::string::npos);

  TempFile module(test_modules_config(backends + "[egress]\nimplementation = \"connect\"\n"
                                                 "[egress.connect]\nsocket = \"/run/c.sock\"\n"
                                                 "allow = [\"a.test:443\"]\n"),
                  "config.toml");
  auto connect = json_of(probe(module, true))->getObject("egress");
  EXPECT_EQ(connect->getValue<std::string>("implementation"), "connect");
  EXPECT_FALSE(connect->getValue<bool>("built_in"));
  EXPECT_EQ(connect->getValue<std::string>("file"),
            std::string(TEST_MODULE_DIR) + "/egress_connect.so");
  EXPECT_EQ(connect->getValue<std::string>("socket"), "/run/c.sock");
  EXPECT_EQ(connect->getValue<int>("port"), 3128);

  TempFile broken(test_modules_config(backends + "[egress]\nimplementation = \"connect\"\n"),
                  "config.toml");
  auto refused = json_of(probe(broken, true))->getObject("egress");
  EXPECT_NE(refused->getValue<std::string>("error").find(
                "the egress module does not load: module " + std::string(TEST_MODULE_DIR) +
                "/egress_connect.so: init failed: egress.connect.socket: must be an absolute path"),
            std::string::npos)
      << refused->getValue<std::string>("error");
  EXPECT_NE(probe(broken, false).out.find("egress: connect\n  unusable: [egress] implementation"),
            std::string::npos);
}

TEST(ProbeCommand, TextNamesEveryBackendAndTheChoice) {
  TempFile config(test_modules_config("[backends]\nenabled = [\"alpha\", \"beta\", \"off\"]\n"
                                      "priority = [\"beta\", \"alpha\"]\n"),
                  "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "probe", "--verbose", "--config", config.path().string()},
                  test::with_env({"TEST_BACKEND_ALPHA=1", "TEST_BACKEND_BETA=0",
                                  "TEST_BACKEND_BETA_LANDLOCK_ABI=3"}));
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("  alpha      available"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("  beta       unavailable TEST_BACKEND_BETA is not 1\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("hint: export TEST_BACKEND_BETA=1\n"), std::string::npos);
  EXPECT_NE(result.out.find("landlock ABI: 3\n"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.rfind("chosen: alpha\n", 0), 0u) << result.out;
  // beta comes first in the priority: the summary says why it was passed over, and how not.
  EXPECT_NE(result.out.find("\nwhy: first of backends.priority (beta, alpha) that works here; "
                            "before it:\n  beta: TEST_BACKEND_BETA is not 1\n    hint: export "
                            "TEST_BACKEND_BETA=1\n"),
            std::string::npos)
      << result.out;
}

TEST(ProbeCommand, AForcedBackendThatFailsIsAnError) {
  TempFile config(test_modules_config("[backends]\nenabled = [\"alpha\", \"beta\"]\n"
                                      "priority = [\"alpha\", \"beta\"]\n"),
                  "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "probe", "--verbose", "--config", config.path().string()},
                  test::with_env({"TEST_BACKEND_ALPHA=1", "CLAWPATROL_SANDBOX_BACKEND=beta"}));
  EXPECT_EQ(result.code, 1);
  EXPECT_NE(result.out.find("forced: CLAWPATROL_SANDBOX_BACKEND=beta\n"), std::string::npos);
  EXPECT_NE(result.out.find("chosen: none: CLAWPATROL_SANDBOX_BACKEND=beta: the forced backend "
                            "does not work here"),
            std::string::npos)
      << result.out;
}

TEST(ModulesCommand, ListsLoadedAndRefusedModules) {
  TempFile config(test_modules_config("[backends]\nenabled = [\"off\", \"abimajor\"]\n"
                                      "priority = []\n[ops]\nenabled = [\"ping\"]\n"),
                  "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "modules", "--json", "--config", config.path().string()});
  ASSERT_EQ(result.code, 0) << result.err;
  auto out = json_of(result);
  const std::string host_abi =
      std::to_string(SANDBOX_HOST_ABI_MAJOR) + "." + std::to_string(SANDBOX_HOST_ABI_MINOR);
  EXPECT_EQ(out->getValue<std::string>("host_abi"), host_abi);
  auto loaded = out->getArray("loaded");
  ASSERT_EQ(loaded->size(), 2u);
  auto off = loaded->getObject(0);
  EXPECT_EQ(off->getValue<std::string>("kind"), "backend");
  EXPECT_EQ(off->getValue<std::string>("name"), "off");
  EXPECT_EQ(off->getValue<std::string>("abi"), host_abi);
  EXPECT_EQ(off->getValue<std::string>("file"), std::string(BUILD_MODULE_DIR) + "/backend_off.so");
  auto ping = loaded->getObject(1);
  EXPECT_EQ(ping->getValue<std::string>("kind"), "op");
  EXPECT_EQ(ping->getValue<std::string>("name"), "ping");
  auto failed = out->getArray("failed");
  ASSERT_EQ(failed->size(), 1u);
  EXPECT_NE(failed->getObject(0)->getValue<std::string>("error").find(
                "built for module ABI 2.0, this host speaks " + host_abi),
            std::string::npos);
  // The refusal went to the audit sink (stderr) too.
  EXPECT_NE(result.err.find("sandbox-host: refused: module rule=module-load"), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const std::string command : {"probe", "run", "modules"}) {
    ProcessResult result = run_process({SANDBOX_HOST_EXE, command, "--help"});
    EXPECT_EQ(result.code, 0) << command;
    EXPECT_NE(result.out.find("--config"), std::string::npos) << command << ": " << result.out;
  }
  for (const std::vector<std::string> &command : {std::vector<std::string>{"hook"},
                                                  {"env"},
                                                  {"policy", "render"},
                                                  {"policy", "install"},
                                                  {"policy", "check"}}) {
    std::vector<std::string> argv{SANDBOX_HOST_EXE};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.push_back("--help");
    ProcessResult result = run_process(argv);
    EXPECT_EQ(result.code, 0) << command.front();
    EXPECT_NE(result.out.find("--policy"), std::string::npos) << command.front() << result.out;
  }
  ProcessResult run_help = run_process({SANDBOX_HOST_EXE, "run", "--help"});
  for (const char *flag :
       {"--name", "--network", "--socket-dir", "--tmp-dir", "--read", "--policy"}) {
    EXPECT_NE(run_help.out.find(flag), std::string::npos) << flag;
  }
  ProcessResult top = run_process({SANDBOX_HOST_EXE, "--help"});
  EXPECT_EQ(top.code, 0);
  EXPECT_NE(top.out.find("probe"), std::string::npos);
  ProcessResult unknown = run_process({SANDBOX_HOST_EXE, "frobnicate"});
  EXPECT_EQ(unknown.code, 125);
  EXPECT_NE(unknown.err.find("frobnicate"), std::string::npos) << unknown.err;
  // The help and the list of commands come from one registry: the broker's commands too.
  for (const char *command :
       {"probe", "run", "modules", "hook", "env", "policy", "serve", "ask", "egress", "sandbox"}) {
    EXPECT_NE(top.out.find(std::string("\n  ") + command + " "), std::string::npos)
        << command << ": " << top.out;
    EXPECT_NE(
        unknown.err.find(std::string(command) + (std::string(command) == "sandbox" ? " (" : ",")),
        std::string::npos)
        << command << ": " << unknown.err;
  }
  ProcessResult serve_help = run_process({SANDBOX_HOST_EXE, "serve", "--help"});
  EXPECT_EQ(serve_help.code, 0) << serve_help.err;
  EXPECT_NE(serve_help.out.find("--config"), std::string::npos) << serve_help.out;
}

}  // namespace
}  // namespace sandbox_host

namespace sandbox_host {
namespace {

TEST(Audit, RefusalsGoWhereTheConfigSays) {
  TempFile audit("", "audit.jsonl");
  TempFile config("[backends]\nenabled = [\"off\"]\n[audit]\nformat = \"json\"\npath = \"" +
                      audit.path().string() + "\"\n",
                  "config.toml");
  ProcessResult result = run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(),
                                      "--name", "report", "--", REPORT_PLUGIN, "report"});
  EXPECT_EQ(result.code, 125);
  // Not on stderr as text, but in the file as one JSON object.
  EXPECT_EQ(result.err.find("sandbox-host: refused:"), std::string::npos) << result.err;
  std::ifstream in(audit.path());
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  auto record = Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(record->getValue<std::string>("component"), "probe");
  EXPECT_EQ(record->getValue<std::string>("plugin"), "report");
  EXPECT_EQ(record->getValue<std::string>("rule"), "no-backend");
  EXPECT_FALSE(std::getline(in, line));
}

TEST(Audit, ARefusedConfigIsRecorded) {
  TempFile config("[backends]\nenabled = [\"off\"]\nfrobnicate = 1\n", "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "probe", "--config", config.path().string()});
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.err,
            "sandbox-host: refused: config rule=config-file: " + config.path().string() +
                ":3: backends.frobnicate: unknown key; allowed: enabled, priority (hint: "
                "fix the file; `sandbox-host probe --config FILE` checks it)\n");
}

}  // namespace
}  // namespace sandbox_host
