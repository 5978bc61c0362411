// Stage 1: the re-exec'd child strips its control variables, hands the Spec to the backend
// module and, when setup fails, says so in exactly one stderr line and exits 87.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/sandboxtest.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>

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
  // The plugin's environment travels in the Spec, for its own execve; stage 1's holds
  // sandbox-host's control variables and nothing else.
  EXPECT_NE(std::find(payload.spec.env.begin(), payload.spec.env.end(), "REEXEC_TEST_BACKEND=1"),
            payload.spec.env.end());
  EXPECT_NE(std::find(payload.spec.env.begin(), payload.spec.env.end(),
                      "PATH=/usr/local/bin:/usr/bin:/bin"),
            payload.spec.env.end());
  for (const auto &entry : command.env) EXPECT_TRUE(entry.starts_with("CLAWPATROL_")) << entry;
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

// A backend built before the Spec carried the environment (ABI 1.9) execs with environ: it
// gets the plugin's there, after stage 1 itself started with sandbox-host's variables alone.
TEST(Stage1, ABackendOlderThanSpecEnvGetsThePluginsEnvironmentAsEnviron) {
  TempFile config("module_dirs = [\"" + std::string(TEST_MODULE_DIR) +
                      "\"]\n[backends]\nenabled = [\"olderexec\"]\npriority = [\"olderexec\"]\n",
                  "config.toml");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(), "--env",
                   "FOO=from-the-caller", "--", REPORT_PLUGIN, "report"},
                  test::with_env({"PATH=/usr/bin:/bin"}));
  ASSERT_EQ(result.code, 0) << result.err;
  const auto report = test::parse_report(result.out);
  EXPECT_NE(std::find(report.env.begin(), report.env.end(), "FOO=from-the-caller"),
            report.env.end());
  for (const auto &var : report.env) EXPECT_FALSE(var.starts_with("CLAWPATROL_")) << var;
}

TEST(Stage1, ASetupFailureIsOneStderrLineAndExit87) {
  TempFile config(reexec_config(), "config.toml");
  ProcessResult result = run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(),
                                      "--name", "fail-setup", "--", REPORT_PLUGIN, "report"});
  expect_one_line_87(result, "mount: refused on purpose by the test backend second line");
}

// ---- a prepared stage 1 (CLAWPATROL_SANDBOX_PREPARED) ---------------------------------------

std::string prepared_var(const std::string &value) {
  return std::string(kEnvPrepared) + "=" + value;
}

std::string namespaces_module() {
  return std::string(BUILD_MODULE_DIR) + "/backend_namespaces.so";
}

// A descriptor at a fixed number without close-on-exec, so the stage-1 child started next
// inherits it there, as a pool's control descriptor; closed again on destruction.
class InheritedFd {
 public:
  InheritedFd(int source, int number) : number_(::dup2(source, number)) {
    if (number_ != number) throw std::system_error(errno, std::generic_category(), "dup2");
  }
  ~InheritedFd() { ::close(number_); }
  InheritedFd(const InheritedFd &) = delete;
  InheritedFd &operator=(const InheritedFd &) = delete;
  int number() const noexcept { return number_; }

 private:
  int number_;
};

constexpr int kControlFd = 57;

struct ControlChannel {
  UniqueFd host, sandbox;
};

ControlChannel control_channel() {
  ChannelPair pair = make_launch_channel();
  return {UniqueFd(pair.host), UniqueFd(pair.sandbox)};
}

TEST(Stage1Prepared, AMalformedPayloadFailsInOneLine) {
  ProcessResult result = stage1_child({stage1_var("namespaces"), prepared_var("{not json")});
  EXPECT_EQ(result.code, kStage1ExitCode);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("clawpatrol-sandbox: spec: not a JSON object: ", 0), 0u) << result.err;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
}

TEST(Stage1Prepared, AControlDescriptorAtOrBelowStderrFailsInOneLine) {
  std::string payload =
      encode_prepared_payload({"namespaces", namespaces_module(), Network::none, 2});
  expect_one_line_87(stage1_child({stage1_var("namespaces"), prepared_var(payload)}),
                     "spec: field \"control_fd\" is not a descriptor above 2");
}

TEST(Stage1Prepared, AControlDescriptorThatIsNotOpenFailsInOneLine) {
  ASSERT_EQ(::fcntl(kControlFd, F_GETFD), -1) << "descriptor " << kControlFd << " is in use";
  std::string payload =
      encode_prepared_payload({"namespaces", namespaces_module(), Network::none, kControlFd});
  expect_one_line_87(stage1_child({stage1_var("namespaces"), prepared_var(payload)}),
                     "prepare: control descriptor " + std::to_string(kControlFd) + " is not open");
}

TEST(Stage1Prepared, ThePayloadMustBeForTheNamedBackend) {
  ControlChannel channel = control_channel();
  InheritedFd control(channel.sandbox.get(), kControlFd);
  std::string payload =
      encode_prepared_payload({"other", namespaces_module(), Network::none, kControlFd});
  expect_one_line_87(stage1_child({stage1_var("namespaces"), prepared_var(payload)}),
                     "spec: written for backend \"other\", but CLAWPATROL_SANDBOX_STAGE1 names "
                     "\"namespaces\"");
}

TEST(Stage1Prepared, TheModuleMustBeTheNamedBackend) {
  ControlChannel channel = control_channel();
  InheritedFd control(channel.sandbox.get(), kControlFd);
  const std::string module = std::string(TEST_MODULE_DIR) + "/backend_reexec.so";
  std::string payload = encode_prepared_payload({"namespaces", module, Network::none, kControlFd});
  expect_one_line_87(stage1_child({stage1_var("namespaces"), prepared_var(payload)}),
                     "load backend: " + module + " is backend \"reexec\", not \"namespaces\"");
}

TEST(Stage1Prepared, ABackendThatDoesNotPrepareFailsInOneLine) {
  ControlChannel channel = control_channel();
  InheritedFd control(channel.sandbox.get(), kControlFd);
  std::string payload =
      encode_prepared_payload({"cbackend", std::string(TEST_MODULE_DIR) + "/backend_cbackend.so",
                               Network::none, kControlFd});
  expect_one_line_87(stage1_child({stage1_var("cbackend"), prepared_var(payload)}),
                     "prepare: backend cbackend does not prepare sandboxes");
}

bool namespaces_work() {
  Host host(test::test_config({"namespaces"}, {"namespaces"}));
  return host.probe_all().at(0).available;
}

// A namespaces sandbox prepared by this binary, started as a pool starts one; ready() waits
// for its report.
class PreparedSandbox {
 public:
  explicit PreparedSandbox(Network network)
      : channel_(control_channel()),
        control_(channel_.sandbox.get(), kControlFd),
        process_({self_exe()},
                 test::with_env({stage1_var("namespaces"),
                                 prepared_var(encode_prepared_payload(
                                     {"namespaces", namespaces_module(), network, kControlFd}))})) {
    channel_.sandbox.reset();
  }
  bool ready() {
    pollfd ready{channel_.host.get(), POLLIN, 0};
    char byte = 0;
    return ::poll(&ready, 1, 10'000) == 1 && ::read(channel_.host.get(), &byte, 1) == 1 &&
           byte == 'R';
  }
  int channel() const { return channel_.host.get(); }
  void close_channel() { channel_.host.reset(); }
  ProcessResult wait() { return process_.wait(std::chrono::seconds(10)); }

 private:
  ControlChannel channel_;
  InheritedFd control_;
  test::RunningProcess process_;
};

TEST(Stage1Prepared, AHostThatClosesTheChannelWithoutALaunchEndsTheSandboxInOneLine) {
  if (!namespaces_work()) GTEST_SKIP() << "the namespaces backend does not work here";
  PreparedSandbox sandbox(Network::none);
  ASSERT_TRUE(sandbox.ready());
  sandbox.close_channel();
  expect_one_line_87(sandbox.wait(), "launch: the host closed the channel without a launch");
}

TEST(Stage1Prepared, ALaunchForAnotherNetworkIsRefusedOnTheLaunchsStderr) {
  if (!namespaces_work()) GTEST_SKIP() << "the namespaces backend does not work here";
  PreparedSandbox sandbox(Network::none);
  ASSERT_TRUE(sandbox.ready());
  sandboxtest::TempSpec t("report", REPORT_PLUGIN, Network::outbound);
  int err[2];
  ASSERT_EQ(::pipe2(err, O_CLOEXEC), 0);
  UniqueFd err_read(err[0]), err_write(err[1]);
  UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  t.spec.env = {"PATH=/usr/bin:/bin"};
  send_launch(sandbox.channel(), {t.spec}, {null.get(), null.get(), err_write.get()});
  err_write.reset();
  ProcessResult result = sandbox.wait();
  EXPECT_EQ(result.code, kStage1ExitCode);
  EXPECT_EQ(result.err, "");
  std::string launch_err;
  char buffer[512];
  for (pollfd readable{err_read.get(), POLLIN, 0}; ::poll(&readable, 1, 10'000) == 1;) {
    ssize_t n = ::read(err_read.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    launch_err.append(buffer, static_cast<size_t>(n));
  }
  EXPECT_EQ(launch_err,
            "clawpatrol-sandbox: launch: network outbound, but this sandbox was prepared for "
            "none\n");
}

}  // namespace
}  // namespace sandbox_host
