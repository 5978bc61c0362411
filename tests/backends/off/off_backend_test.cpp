// The `off` backend end to end: the real sandbox-host binary launching the real report
// plugin, as root and as an unprivileged user.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <thread>

namespace sandbox_host {
namespace {

using test::ProcessOptions;
using test::ProcessResult;
using test::run_process;
using test::TempFile;

const std::string kOffConfig = "[plugins.report]\nsandbox = \"off\"\n";

// The host's environment holds secrets and control variables; none may reach the plugin.
std::vector<std::string> hostile_host_env() {
  return {"PATH=/usr/sbin:/usr/bin:/sbin:/bin",         "HOME=/root",
          "CLAWPATROL_GATEWAY_TOKEN=ghp_0123456789",    "AWS_SECRET_ACCESS_KEY=secret",
          "SSH_AUTH_SOCK=/run/user/0/ssh-agent.socket", "LD_LIBRARY_PATH=/opt/gateway/lib"};
}

std::vector<std::string> run_argv(const TempFile &config, std::vector<std::string> plugin) {
  std::vector<std::string> argv{SANDBOX_HOST_EXE, "run",    "--config", config.path().string(),
                                "--name",         "report", "--",       REPORT_PLUGIN};
  argv.insert(argv.end(), plugin.begin(), plugin.end());
  return argv;
}

// One descriptor of the host, opened without O_CLOEXEC, so sandbox-host inherits it.
class LeakyDescriptor {
 public:
  LeakyDescriptor() : fd_(::open("/etc/hostname", O_RDONLY)) {}
  ~LeakyDescriptor() { ::close(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_;
};

void expect_confined_process_state(const ProcessResult &result, unsigned uid) {
  ASSERT_EQ(result.code, 0) << result.err;
  test::PluginReport report = test::parse_report(result.out);
  ASSERT_GT(report.pid, 0) << result.out;
  EXPECT_EQ(report.uid, uid);

  // Own session and process group: no controlling terminal shared with the host.
  EXPECT_EQ(report.sid, report.pid);
  EXPECT_EQ(report.pgid, report.pid);
  // Dies with its parent.
  EXPECT_EQ(report.pdeathsig, SIGKILL);

  // BaseEnv and nothing else.
  auto home = std::find_if(report.env.begin(), report.env.end(),
                           [](const std::string &e) { return e.starts_with("HOME="); });
  ASSERT_NE(home, report.env.end());
  const std::string tmp = home->substr(5);
  EXPECT_EQ(tmp.rfind("/tmp/sandbox-host-", 0), 0u) << tmp;
  EXPECT_EQ(report.env, (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin",
                                                  "LANG=C.UTF-8", "HOME=" + tmp, "TMPDIR=" + tmp}));
  EXPECT_EQ(report.cwd.empty(), false);
  // The private directories were removed after the run.
  EXPECT_FALSE(std::filesystem::exists(tmp));

  // stdin, stdout, stderr, and the one the plugin opened to list its descriptors.
  ASSERT_EQ(report.fds.size(), 4u) << result.out;
  EXPECT_EQ(report.fds.at(0), "/dev/null");
  EXPECT_TRUE(report.fds.at(3).ends_with("/fd")) << report.fds.at(3);
}

TEST(OffBackend, RootLaunchSeesOnlyBaseEnvNoHostDescriptorAndItsOwnSession) {
  TempFile config(kOffConfig, "config.toml");
  LeakyDescriptor leak;
  ASSERT_GE(leak.fd(), 3);
  ProcessResult result =
      run_process(run_argv(config, {"report"}), test::with_env(hostile_host_env()));
  expect_confined_process_state(result, 0);
  // stdout is the plugin's alone: its first line is the plugin's first line.
  EXPECT_EQ(result.out.rfind("pid ", 0), 0u);
}

TEST(OffBackend, UnprivilegedLaunchSeesTheSame) {
  TempFile config(kOffConfig, "config.toml");
  test::UnprivilegedInstall install;
  LeakyDescriptor leak;
  std::vector<std::string> argv = test::as_nobody();
  for (std::string arg : {install.sandbox_host(), std::string("run"), std::string("--config"),
                          config.path().string(), std::string("--name"), std::string("report"),
                          std::string("--"), install.report_plugin(), std::string("report")}) {
    argv.push_back(arg);
  }
  ProcessResult result = run_process(argv, test::with_env(hostile_host_env()));
  expect_confined_process_state(result, test::kNobody);
  EXPECT_EQ(result.err, "");
}

TEST(OffBackend, ExitStatusPassesThrough) {
  TempFile config(kOffConfig, "config.toml");
  EXPECT_EQ(run_process(run_argv(config, {"report", "42"})).code, 42);
  EXPECT_EQ(run_process(run_argv(config, {"report", "0"})).code, 0);
  // Killed by a signal: 128 + the signal, as a shell reports it.
  // SIGUSR1's default action ends the process, and no sanitizer runtime catches it.
  EXPECT_EQ(run_process(run_argv(config, {"signal", std::to_string(SIGUSR1)})).code, 128 + SIGUSR1);
}

// The pid of the plugin that `run` launched, from its "ready <pid>" line; 0 if none came.
pid_t ready_plugin(test::RunningProcess &run) {
  auto ready = run.read_line(std::chrono::seconds(10));
  EXPECT_TRUE(ready && ready->starts_with("ready ")) << ready.value_or("<nothing>");
  return ready && ready->starts_with("ready ") ? std::stoi(ready->substr(6)) : 0;
}

TEST(OffBackend, TerminationSignalsReachThePlugin) {
  TempFile config(kOffConfig, "config.toml");
  test::RunningProcess run(run_argv(config, {"sleep", "30"}));
  const pid_t plugin = ready_plugin(run);
  ASSERT_GT(plugin, 0);
  ASSERT_EQ(::kill(run.pid(), SIGTERM), 0);
  ProcessResult result = run.wait(std::chrono::seconds(10));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.code, 128 + SIGTERM);
  EXPECT_TRUE(test::process_gone(plugin));
}

TEST(OffBackend, ThePluginDiesWithItsParent) {
  TempFile config(kOffConfig, "config.toml");
  test::RunningProcess run(run_argv(config, {"sleep", "30"}));
  const pid_t plugin = ready_plugin(run);
  ASSERT_GT(plugin, 0);
  ASSERT_FALSE(test::process_gone(plugin));
  ASSERT_EQ(::kill(run.pid(), SIGKILL), 0);
  run.wait(std::chrono::seconds(10));
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = test::process_gone(plugin);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "plugin " << plugin << " outlived sandbox-host";
  if (!gone) ::kill(plugin, SIGKILL);
}

TEST(OffBackend, GivenDirectoriesAndReadPathsAreUsedAndKept) {
  TempFile config(kOffConfig, "config.toml");
  TempFile dirs("", "unused");
  std::filesystem::create_directory(dirs.dir() / "sock");
  std::filesystem::create_directory(dirs.dir() / "scratch");
  ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(), "--name", "report",
                   "--socket-dir", (dirs.dir() / "sock").string(), "--tmp-dir",
                   (dirs.dir() / "scratch").string(), "--read", "/usr/share", "--network",
                   "outbound", "--", REPORT_PLUGIN, "report"});
  ASSERT_EQ(result.code, 0) << result.err;
  auto report = test::parse_report(result.out);
  EXPECT_NE(
      std::find(report.env.begin(), report.env.end(), "HOME=" + (dirs.dir() / "scratch").string()),
      report.env.end());
  EXPECT_TRUE(std::filesystem::is_directory(dirs.dir() / "sock"));
  EXPECT_TRUE(std::filesystem::is_directory(dirs.dir() / "scratch"));
}

TEST(OffBackend, OffIsNeverUsedUnlessWritten) {
  // off is enabled and works, the plugin's table does not say sandbox = "off", and nothing
  // else works: the launch is refused.
  TempFile config(
      "[backends]\nenabled = [\"off\"]\npriority = []\n[plugins.report]\n"
      "network = \"none\"\n",
      "config.toml");
  ProcessResult result =
      run_process(run_argv(config, {"report"}), test::with_env(hostile_host_env()));
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("sandbox-host run: no sandbox backend works on this host "
                            "(backends.priority is empty)"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("sandbox-host: refused: probe plugin=report rule=no-backend"),
            std::string::npos)
      << result.err;
}

TEST(OffBackend, BadInputGetsANamedErrorAndExit125) {
  TempFile config(kOffConfig, "config.toml");
  ProcessResult bad_network =
      run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(), "--network", "lan",
                   "--", REPORT_PLUGIN});
  EXPECT_EQ(bad_network.code, 125);
  EXPECT_NE(bad_network.err.find("--network lan: not a network; allowed: none, outbound"),
            std::string::npos)
      << bad_network.err;

  ProcessResult missing = run_process(
      {SANDBOX_HOST_EXE, "run", "--config", config.path().string(), "--", "/nonexistent/plugin"});
  EXPECT_EQ(missing.code, 125);
  EXPECT_NE(missing.err.find("plugin binary /nonexistent/plugin: No such file or directory"),
            std::string::npos)
      << missing.err;

  TempFile broken("[plugins.report]\nsandbox = off\n", "config.toml");
  ProcessResult bad_config = run_process(run_argv(broken, {"report"}));
  EXPECT_EQ(bad_config.code, 125);
  EXPECT_NE(bad_config.err.find(broken.path().string() + ":2: not valid TOML: "), std::string::npos)
      << bad_config.err;
}

TEST(OffBackend, PreparedIsRefusedSinceOffPreparesNothing) {
  TempFile config(kOffConfig, "config.toml");
  ProcessResult result = run_process({SANDBOX_HOST_EXE, "run", "--config", config.path().string(),
                                      "--name", "report", "--prepared", "--", REPORT_PLUGIN});
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("--prepared: backend off does not prepare sandboxes"),
            std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace sandbox_host

namespace sandbox_host {
namespace {

// The library path a gateway uses: Host::command, then spawn(), with one descriptor passed on
// purpose and one the host left open by mistake.
TEST(Spawn, OnlyStdioAndExplicitlyPassedDescriptorsReachThePlugin) {
  Config config = test::test_config({"off"}, {});
  config.plugins["report"].sandbox = "off";
  Host host(config);
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  LeakyDescriptor leak;
  int channel[2];
  ASSERT_EQ(::pipe2(channel, O_CLOEXEC), 0);
  t.spec.args = {"report-fd", std::to_string(channel[1])};

  Child child = spawn(host.command(t.spec, host.mode_for("report")), {channel[1]});
  ::close(channel[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) out.append(buffer, n);
  ::close(channel[0]);
  EXPECT_EQ(child.wait().shell_status(), 0);

  test::PluginReport report = test::parse_report(out);
  // 0-2, the passed pipe (also dup'ed onto 1 by the plugin), and its /proc/self/fd listing.
  ASSERT_EQ(report.fds.size(), 5u) << out;
  EXPECT_TRUE(report.fds.at(channel[1]).starts_with("pipe:")) << report.fds.at(channel[1]);
  for (const auto &[fd, target] : report.fds) EXPECT_NE(target, "/etc/hostname") << fd;
  EXPECT_EQ(report.sid, report.pid);
}

TEST(Spawn, AMissingProgramIsANamedError) {
  LaunchCommand command;
  command.program = "/nonexistent/plugin";
  command.env = {"PATH=/usr/bin"};
  try {
    spawn(command);
    FAIL() << "spawned a missing program";
  } catch (const std::system_error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("spawn /nonexistent/plugin: ", 0), 0u) << e.what();
    EXPECT_EQ(e.code().value(), ENOENT);
  }
}

}  // namespace
}  // namespace sandbox_host
