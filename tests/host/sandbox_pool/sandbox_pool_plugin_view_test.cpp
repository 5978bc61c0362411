// SandboxPool with the real namespaces backend: a launch in a prepared sandbox gives the
// plugin what a cold launch gives it: its environment, its stdio, its exit status, its
// confinement and limits, and the paths and mounts of its launch made after the sandbox
// was prepared.
#include "sandbox_pool_harness.hpp"

namespace sandbox_host {
namespace {

using namespace pool_harness;

// ---- what the plugin gets -------------------------------------------------------------------

TEST_F(SandboxPoolTest, APreparedLaunchGetsBaseEnvItsStdioAndNothingElse) {
  // Set in the host before the pool exists, so a prepared stage 1 would inherit them.
  test::ScopedEnv token("CLAWPATROL_GATEWAY_TOKEN", "ghp_0123456789");
  test::ScopedEnv forced("CLAWPATROL_SANDBOX_BACKEND", "namespaces");
  test::ScopedEnv secret("AWS_SECRET_ACCESS_KEY", "secret");
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  const std::string in = io.in_name(), out = io.out_name(), err = io.err_name();
  Child child = pool.launch(t.spec, io.stdio());
  Outcome outcome = io.finish(child);
  ASSERT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(outcome.err, "");

  test::PluginReport report = test::parse_report(outcome.out);
  EXPECT_EQ(report.env, base_env_of(t.spec)) << outcome.out;
  // pid 2 below the sandbox's own init, in its own session, started in TmpDir.
  EXPECT_EQ(report.pid, 2);
  EXPECT_EQ(report.sid, 2);
  EXPECT_EQ(report.cwd, t.spec.tmp_dir);
  // The launch's pipes as 0-2, and nothing of the pool (no launch channel) besides the one
  // descriptor the plugin opened to list them.
  ASSERT_EQ(report.fds.size(), 4u) << outcome.out;
  EXPECT_EQ(report.fds.at(0), in);
  EXPECT_EQ(report.fds.at(1), out);
  EXPECT_EQ(report.fds.at(2), err);
  EXPECT_TRUE(report.fds.at(3).ends_with("/fd")) << report.fds.at(3);

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches, 1u);
  EXPECT_EQ(stats.cold_launches, 0u);
  EXPECT_EQ(stats.failed, 0u);
}

TEST_F(SandboxPoolTest, StdinStdoutAndStderrAreThePipesOfTheLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("echo", "/bin/sh");
  run_script(t.spec, "read line; echo \"out: $line\"; echo \"err: $line\" >&2");
  Outcome outcome = launch_and_finish(pool, t.spec, "hello\n");
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(outcome.out, "out: hello\n");
  EXPECT_EQ(outcome.err, "err: hello\n");
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(SandboxPoolTest, ExitCodesAndDeathBySignalComeBackAsFromAColdLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("report", REPORT_PLUGIN);

  t.spec.args = {"report", "42"};
  Outcome exited = launch_and_finish(pool, t.spec);
  EXPECT_EQ(exited.status.code, 42) << exited;
  EXPECT_EQ(exited.status.signal, 0);

  t.spec.args = {"signal", std::to_string(SIGUSR1)};
  Outcome prepared = launch_and_finish(pool, t.spec);
  EXPECT_EQ(prepared.status.shell_status(), 128 + SIGUSR1) << prepared;
  PluginStdio io;
  Child cold_child = spawn(host_.command(t.spec, "namespaces"), {}, io.stdio());
  Outcome cold = io.finish(cold_child);
  EXPECT_EQ(prepared.status.code, cold.status.code);
  EXPECT_EQ(prepared.status.signal, cold.status.signal);

  EXPECT_EQ(pool.stats().prepared_launches, 2u);
  EXPECT_EQ(pool.stats().cold_launches, 0u);
}

TEST_F(SandboxPoolTest, ThePluginIsConfinedAsInAColdLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("status", "/bin/sh");
  run_script(t.spec,
             "exec grep -E "
             "'^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_"
             "filters):' /proc/self/status");
  Outcome prepared = launch_and_finish(pool, t.spec);
  ASSERT_EQ(prepared.status.shell_status(), 0) << prepared;
  ASSERT_EQ(pool.stats().prepared_launches, 1u);

  PluginStdio io;
  Child cold_child = spawn(host_.command(t.spec, "namespaces"), {}, io.stdio());
  Outcome cold = io.finish(cold_child);
  ASSERT_EQ(cold.status.shell_status(), 0) << cold;

  EXPECT_EQ(prepared.out, cold.out);
  // And both are confined: no capability at all, no_new_privs, a seccomp filter.
  for (const std::string line :
       {"CapInh:\t0000000000000000\n", "CapPrm:\t0000000000000000\n", "CapEff:\t0000000000000000\n",
        "CapBnd:\t0000000000000000\n", "CapAmb:\t0000000000000000\n", "NoNewPrivs:\t1\n",
        "Seccomp:\t2\n"}) {
    EXPECT_NE(prepared.out.find(line), std::string::npos) << line << "in:\n" << prepared.out;
  }
}

TEST_F(SandboxPoolTest, APreparedLaunchIsBoundedByTheConfigsLimitsForItsPlugin) {
  Config config = audit_.apply(test::test_config({"namespaces", "off"}, {"namespaces"}));
  config.limits.process.open_files = 99;
  config.limits.process.tmp_size = 4 << 20;
  config.plugins["status"].limits = {{&Limits::processes, 77}};
  Host host(config);
  SandboxPool pool(host, "namespaces", Network::none);
  TempSpec t("status", "/bin/sh");
  // What the caller's Spec says is not what bounds it: the limits are the operator's.
  t.spec.limits.open_files = Limits::kUnlimited;
  run_script(t.spec,
             "grep -E '^Max (processes|open files|file size|core file size) ' /proc/self/limits "
             "| tr -s ' '; stat -f -c 'tmp=%b*%S' /tmp");
  Outcome prepared = launch_and_finish(pool, t.spec);
  ASSERT_EQ(prepared.status.shell_status(), 0) << prepared;
  ASSERT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(prepared.out,
            "Max file size 4294967296 4294967296 bytes \n"
            "Max core file size 0 0 bytes \n"
            "Max processes 77 77 processes \n"
            "Max open files 99 99 files \n"
            "tmp=1024*4096\n");
}

TEST_F(SandboxPoolTest, ThePluginSeesThePathsOfItsLaunchMadeAfterTheSandboxWasPrepared) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);

  // Everything below exists only now, after the sandbox was set up.
  TempSpec t("paths", "/bin/sh");
  test::TempFile granted("granted contents\n", "granted.txt");
  test::TempFile ungranted("", "unused");
  const std::string read_dir = fs::canonical(granted.dir()).string();
  t.spec.read_paths = {read_dir};
  run_script(t.spec,
             "cat \"$1/granted.txt\"\n"
             "if [ -e \"$4\" ]; then echo 'ungranted visible'; else echo 'ungranted hidden'; fi\n"
             "if (echo x > \"$1/new\") 2>/dev/null; then echo 'read path writable';"
             " else echo 'read path read-only'; fi\n"
             "echo from-tmp > \"$3/written.txt\" && echo 'tmp written'\n"
             "echo from-sock > \"$2/written.txt\" && echo 'sock written'\n",
             {read_dir, t.spec.socket_dir, t.spec.tmp_dir, ungranted.dir().string()});

  Outcome outcome = launch_in_sandbox(pool, t.spec, prepared.front());
  ASSERT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(outcome.out,
            "granted contents\nungranted hidden\nread path read-only\ntmp written\n"
            "sock written\n");
  EXPECT_EQ(pool.stats().prepared_launches, 1u);

  auto contents = [](const fs::path &path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(contents(fs::path(t.spec.tmp_dir) / "written.txt"), "from-tmp\n");
  EXPECT_EQ(contents(fs::path(t.spec.socket_dir) / "written.txt"), "from-sock\n");
  EXPECT_FALSE(fs::exists(granted.dir() / "new"));
}

// A directory bind-mounted onto itself with shared propagation, as systemd makes / on most
// hosts; unmounted, with everything mounted below it, on destruction.
class SharedMountPoint {
 public:
  explicit SharedMountPoint(const fs::path &dir) : dir_(dir) {
    if (::mount(dir_.c_str(), dir_.c_str(), nullptr, MS_BIND, nullptr) != 0) {
      error_ = std::strerror(errno);
      return;
    }
    mounted_ = true;
    if (::mount(nullptr, dir_.c_str(), nullptr, MS_SHARED, nullptr) != 0) {
      error_ = std::strerror(errno);
    }
  }
  ~SharedMountPoint() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SharedMountPoint(const SharedMountPoint &) = delete;
  SharedMountPoint &operator=(const SharedMountPoint &) = delete;
  const std::string &error() const noexcept { return error_; }

 private:
  fs::path dir_;
  bool mounted_ = false;
  std::string error_;
};

TEST_F(SandboxPoolTest, ThePluginSeesAHostMountMadeAfterTheSandboxWasPrepared) {
  test::TempFile shared_dir("", "unused");
  const fs::path shared = fs::canonical(shared_dir.dir());
  SharedMountPoint shared_mount(shared);
  if (!shared_mount.error().empty()) {
    GTEST_SKIP() << "cannot make a shared mount here: " << shared_mount.error();
  }
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);

  // A file system mounted only now, as an operator could mount a volume a plugin reads.
  const fs::path volume = shared / "volume";
  fs::create_directory(volume);
  ASSERT_EQ(::mount("tmpfs", volume.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"), 0)
      << std::strerror(errno);
  std::ofstream(volume / "data.txt") << "on the new mount\n";

  TempSpec t("volume", "/bin/sh");
  t.spec.read_paths = {volume.string()};
  run_script(t.spec, "cat \"$1/data.txt\"", {volume.string()});
  Outcome outcome = launch_in_sandbox(pool, t.spec, prepared.front());
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(outcome.out, "on the new mount\n");
}

}  // namespace
}  // namespace sandbox_host
