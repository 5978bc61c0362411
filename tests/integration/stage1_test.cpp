// Stage 1: the re-exec'd child strips its control variables, hands the Spec to the backend
// module and, when setup fails, says so in exactly one stderr line and exits 87.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spec_codec.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace sandbox_host {
namespace {

using test::ProcessResult;
using test::run_process;
using test::TempFile;

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

// This test binary started as a stage-1 child with the given control variables.
ProcessResult stage1_child(std::vector<std::string> control) {
  control.push_back("PATH=/usr/bin:/bin");
  return run_process({self_exe()}, test::with_env(control));
}

void expect_one_line_87(const ProcessResult &result, const std::string &line) {
  EXPECT_EQ(result.code, kStage1ExitCode);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, std::string(kStage1ErrorPrefix) + line + "\n");
}

std::string stage1_var(const std::string &value) {
  return std::string(kEnvStage1) + "=" + value;
}
std::string spec_var(const std::string &value) {
  return std::string(kEnvSpec) + "=" + value;
}

TEST(Stage1, AMissingSpecFailsInOneLine) {
  expect_one_line_87(stage1_child({stage1_var("reexec")}),
                     "spec: CLAWPATROL_SANDBOX_SPEC is not set");
}

TEST(Stage1, AMalformedSpecFailsInOneLine) {
  ProcessResult result = stage1_child({stage1_var("reexec"), spec_var("{\"backend\":")});
  EXPECT_EQ(result.code, kStage1ExitCode);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("clawpatrol-sandbox: spec: not a JSON object", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1);
}

TEST(Stage1, AMissingBackendModuleFailsInOneLine) {
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  std::string spec = encode_stage1_payload({"reexec", "/nonexistent/backend_reexec.so", t.spec});
  expect_one_line_87(stage1_child({stage1_var("reexec"), spec_var(spec)}),
                     "load backend: module /nonexistent/backend_reexec.so: cannot stat the file");
}

TEST(Stage1, TheSpecMustBeForTheNamedBackend) {
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  std::string spec =
      encode_stage1_payload({"other", std::string(TEST_MODULE_DIR) + "/backend_reexec.so", t.spec});
  expect_one_line_87(stage1_child({stage1_var("reexec"), spec_var(spec)}),
                     "spec: written for backend \"other\", but CLAWPATROL_SANDBOX_STAGE1 names "
                     "\"reexec\"");
}

TEST(Stage1, CommandReexecsThisBinaryWithTheSpec) {
  Host host(test::test_config({"reexec"}, {"reexec"}));
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  LaunchCommand command = host.command(t.spec, "reexec");
  EXPECT_EQ(command.program, "/proc/self/exe");
  EXPECT_TRUE(command.args.empty());
  auto spec = std::find_if(command.env.begin(), command.env.end(), [](const std::string &e) {
    return e.starts_with(std::string(kEnvSpec) + "=");
  });
  ASSERT_NE(spec, command.env.end());
  Stage1Payload payload = decode_stage1_payload(spec->substr(kEnvSpec.size() + 1));
  EXPECT_EQ(payload.backend, "reexec");
  EXPECT_EQ(payload.module_file, std::string(TEST_MODULE_DIR) + "/backend_reexec.so");
  EXPECT_EQ(payload.spec.binary_path, t.spec.binary_path);
  EXPECT_EQ(payload.spec.args, t.spec.args);
  EXPECT_NE(std::find(command.env.begin(), command.env.end(), stage1_var("reexec")),
            command.env.end());
  EXPECT_NE(std::find(command.env.begin(), command.env.end(), "REEXEC_TEST_BACKEND=1"),
            command.env.end());
}

std::string reexec_config() {
  return "module_dirs = [\"" + std::string(TEST_MODULE_DIR) + "\", \"" +
         std::string(BUILD_MODULE_DIR) +
         "\"]\n[backends]\nenabled = [\"reexec\"]\n"
         "priority = [\"reexec\"]\n";
}

TEST(Stage1, TheChildStripsItsControlVariablesBeforeThePluginRuns) {
  TempFile config(reexec_config(), "config.toml");
  ProcessResult result = run_process(
      {SANDBOX_HOST_EXE, "run", "--config", config.path().string(), "--", REPORT_PLUGIN, "report"},
      test::with_env({"PATH=/usr/bin:/bin", "CLAWPATROL_GATEWAY_TOKEN=ghp_0123456789"}));
  ASSERT_EQ(result.code, 0) << result.err;
  auto report = test::parse_report(result.out);
  ASSERT_EQ(report.env.size(), 5u) << result.out;
  EXPECT_EQ(report.env[4], "REEXEC_TEST_BACKEND=1");
  for (const auto &var : report.env) EXPECT_FALSE(var.starts_with("CLAWPATROL_")) << var;
}

TEST(Stage1, ASetupFailureIsOneStderrLineAndExit87) {
  TempFile config(reexec_config(), "config.toml");
  ProcessResult result = run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(),
                                      "--name", "fail-setup", "--", REPORT_PLUGIN, "report"});
  expect_one_line_87(result, "mount: refused on purpose by the test backend second line");
}

}  // namespace
}  // namespace sandbox_host
