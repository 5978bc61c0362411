// SandboxPool with the real namespaces backend: a launch in a prepared sandbox gives the
// plugin what a cold launch gives it (environment, stdio, exit status, confinement, the
// launch's own paths), and every way a prepared sandbox can be unusable still ends in a
// launch that works.
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/sandboxtest.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using sandboxtest::TempSpec;

// Every wait of these tests ends by then; a launch takes tens of milliseconds.
constexpr std::chrono::milliseconds kTimeout = 10s;

// Whether done() became true before timeout, checked every 10 ms.
bool eventually(const std::function<bool()> &done, std::chrono::milliseconds timeout = kTimeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

using test::make_pipe;
using test::Pipe;

// How /proc/<pid>/fd names a pipe end, to tell the test's pipes from any other.
std::string proc_name(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "?";
  return "pipe:[" + std::to_string(st.st_ino) + "]";
}

// What a launched plugin did, as its launcher sees it.
struct Outcome {
  ExitStatus status;
  std::string out;
  std::string err;
  bool timed_out = false;
};

std::ostream &operator<<(std::ostream &os, const Outcome &o) {
  return os << "exit code " << o.status.code << " signal " << o.status.signal
            << (o.timed_out ? " (timed out)" : "") << "\nstdout:\n"
            << o.out << "stderr:\n"
            << o.err;
}

// A plugin's stdin, stdout and stderr: pipes whose other ends the test holds.
class PluginStdio {
 public:
  Stdio stdio() const { return {in_.read.get(), out_.write.get(), err_.write.get()}; }
  std::string out_name() const { return proc_name(out_.write.get()); }
  std::string err_name() const { return proc_name(err_.write.get()); }
  std::string in_name() const { return proc_name(in_.read.get()); }

  // After the launch: feeds input, reads stdout and stderr until every writer is gone, then
  // waits for the launch's process to exit (all bounded).
  Outcome finish(Child &child, const std::string &input = "") {
    in_.read.reset();
    out_.write.reset();
    err_.write.reset();
    if (!input.empty() && ::write(in_.write.get(), input.data(), input.size()) < 0) {
      ADD_FAILURE() << "write the plugin's stdin: " << std::strerror(errno);
    }
    in_.write.reset();
    Outcome outcome;
    outcome.timed_out = !read_until_eof(outcome.out, outcome.err);
    if (!eventually([&] { return test::process_gone(child.pid()); })) {
      outcome.timed_out = true;
      ::kill(child.pid(), SIGKILL);
    }
    outcome.status = child.wait();
    if (outcome.timed_out) ADD_FAILURE() << "the plugin did not finish in time; " << outcome;
    return outcome;
  }

  // Reads stdout until a whole line came, bounded; nullopt at EOF or timeout.
  std::optional<std::string> read_line() {
    std::string line;
    const auto deadline = Clock::now() + kTimeout;
    while (line.empty() || line.back() != '\n') {
      pollfd ready{out_.read.get(), POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char c;
      if (::read(out_.read.get(), &c, 1) != 1) return std::nullopt;
      line.push_back(c);
    }
    line.pop_back();
    return line;
  }

 private:
  bool read_until_eof(std::string &out, std::string &err) {
    const auto deadline = Clock::now() + kTimeout;
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd fds[2] = {{out_open ? out_.read.get() : -1, POLLIN, 0},
                       {err_open ? err_.read.get() : -1, POLLIN, 0}};
      if (::poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        char buffer[4096];
        ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          (i == 0 ? out : err).append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          (i == 0 ? out_open : err_open) = false;
        }
      }
    }
    return true;
  }

  Pipe in_ = make_pipe();
  Pipe out_ = make_pipe();
  Pipe err_ = make_pipe();
};

Outcome launch_and_finish(SandboxPool &pool, const Spec &spec, const std::string &input = "") {
  PluginStdio io;
  Child child = pool.launch(spec, io.stdio());
  return io.finish(child, input);
}

// Launches spec where the sandbox whose stage 1 is `sandbox` was waiting for it.
Outcome launch_in_sandbox(SandboxPool &pool, const Spec &spec, pid_t sandbox) {
  PluginStdio io;
  Child child = pool.launch(spec, io.stdio());
  EXPECT_EQ(child.pid(), sandbox) << "the launch did not run in the sandbox prepared before it";
  return io.finish(child);
}

// ---- the processes a pool starts ---------------------------------------------------------

// The parent of pid, or nullopt when pid is gone or a zombie.
std::optional<pid_t> live_parent(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  char state = 0;
  pid_t parent = 0;
  rest >> state >> parent;
  if (state == 'Z' || !rest) return std::nullopt;
  return parent;
}

std::vector<pid_t> live_children(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (live_parent(pid) == parent) children.push_back(pid);
  }
  return children;
}

// pid and every process below it.
std::vector<pid_t> process_tree(pid_t root) {
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (pid_t child : live_children(tree[i])) tree.push_back(child);
  }
  return tree;
}

bool runs_this_binary(pid_t pid) {
  struct stat self {};
  struct stat other {};
  return ::stat("/proc/self/exe", &self) == 0 &&
         ::stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &other) == 0 &&
         self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

// The stage-1 processes of this test process still running: with the namespaces backend,
// the prepared sandboxes a pool holds and the sandboxes of plugins still running.
std::vector<pid_t> stage1_processes() {
  std::vector<pid_t> found;
  for (pid_t child : live_children(::getpid())) {
    if (runs_this_binary(child)) found.push_back(child);
  }
  return found;
}

bool all_gone(const std::vector<pid_t> &pids) {
  return std::all_of(pids.begin(), pids.end(), [](pid_t pid) { return test::process_gone(pid); });
}

// Kills a prepared sandbox's stage 1 from outside the pool, as the OOM killer or an operator
// could, and waits until it and its init are gone.
void kill_sandbox(pid_t stage1) {
  const std::vector<pid_t> tree = process_tree(stage1);
  ASSERT_GE(tree.size(), 2u) << "stage 1 " << stage1 << " has no init below it";
  ASSERT_EQ(::kill(stage1, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return all_gone(tree); }))
      << "sandbox " << stage1 << " outlived SIGKILL";
}

std::string error_of(const std::function<void()> &action) {
  try {
    action();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

// The plugin's whole environment, as BaseEnv defines it for spec.
std::vector<std::string> base_env_of(const Spec &spec) {
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + spec.tmp_dir,
          "TMPDIR=" + spec.tmp_dir};
}

std::string sh() {
  return fs::canonical("/bin/sh").string();
}

// A plugin that runs a shell script.
void run_script(Spec &spec, const std::string &script, std::vector<std::string> params = {}) {
  spec.binary_path = sh();
  spec.args = {"-c", script, "sh"};
  spec.args.insert(spec.args.end(), params.begin(), params.end());
}

// What the pools of a test told the audit sink.
std::vector<std::map<std::string, std::string>> pool_records_in(const test::AuditCapture &audit) {
  std::vector<std::map<std::string, std::string>> found;
  for (auto &record : audit.records()) {
    if (record["rule"] == "pool-prepare") found.push_back(record);
  }
  return found;
}

class SandboxPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const BackendStatus &status : host_.probe_all()) {
      if (status.name == "namespaces" && !status.available) {
        GTEST_SKIP() << "the namespaces backend does not work here: " << status.reason;
      }
    }
  }

  std::vector<std::map<std::string, std::string>> pool_records() const {
    return pool_records_in(audit_);
  }

  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"namespaces", "off"}, {"namespaces"}))};
};

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

// ---- which launches use a prepared sandbox ------------------------------------------------

TEST_F(SandboxPoolTest, LaunchesInARowEachGetAPreparedSandbox) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "7"};
  for (int launch = 1; launch <= 3; ++launch) {
    Outcome outcome = launch_and_finish(pool, t.spec);
    EXPECT_EQ(outcome.status.shell_status(), 7) << "launch " << launch << ": " << outcome;
    // The one before took the only sandbox: this one ran in its replacement.
    EXPECT_EQ(pool.stats().prepared_launches, static_cast<size_t>(launch));
  }
  EXPECT_EQ(pool.stats().cold_launches, 0u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

TEST_F(SandboxPoolTest, TwoPoolsServeTheirOwnNetworks) {
  SandboxPool none(host_, "namespaces", Network::none);
  SandboxPool outbound(host_, "namespaces", Network::outbound);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  for (int round = 0; round < 2; ++round) {
    t.spec.network = Network::none;
    EXPECT_EQ(launch_and_finish(none, t.spec).status.shell_status(), 0);
    t.spec.network = Network::outbound;
    EXPECT_EQ(launch_and_finish(outbound, t.spec).status.shell_status(), 0);
  }
  EXPECT_EQ(none.stats().prepared_launches, 2u);
  EXPECT_EQ(outbound.stats().prepared_launches, 2u);
  EXPECT_EQ(none.stats().cold_launches + outbound.stats().cold_launches, 0u);
}

TEST_F(SandboxPoolTest, WithoutReplaceOnlyDepthLaunchesArePreparedAndTheNextRunsColdAtOnce) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .replace = false, .ready_timeout = 60s});
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  // Well past refill_delay, and no replacement was started.
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(stage1_processes().empty());

  // Not after ready_timeout (60 s) waiting for a sandbox that will never come: a hang
  // bound with a wide margin, not a speed check.
  const auto started = Clock::now();
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_LT(Clock::now() - started, 30s);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(SandboxPoolTest, ASpecForAnotherNetworkRunsColdAndWorks) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN, Network::outbound);
  t.spec.args = {"report", "5"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 5) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 0u);

  // The prepared sandbox was left for a launch it fits.
  t.spec.network = Network::none;
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 5);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
}

// No namespaces needed: these backends never prepare.
class NonPreparingBackend : public ::testing::TestWithParam<std::string> {};

TEST_P(NonPreparingBackend, LaunchesColdAndWork) {
  const std::string mode = GetParam();
  Host host(test::test_config({mode}, {}));
  EXPECT_FALSE(host.prepares(mode));
  SandboxPool pool(host, mode, Network::none);
  EXPECT_FALSE(pool.preparing());
  // Nothing to wait for: at once, not after the timeout.
  const auto started = Clock::now();
  EXPECT_EQ(pool.wait_ready(kTimeout), 0u);
  EXPECT_LT(Clock::now() - started, 1s);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "3"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 3) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().prepared_launches, 0u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

// off: the unsandboxed backend; cbackend: a module built against ABI 1.0, whose table ends
// before stage1_prepared.
INSTANTIATE_TEST_SUITE_P(SandboxPool, NonPreparingBackend, ::testing::Values("off", "cbackend"));

TEST(SandboxPoolModules, OnlyAnAbi11ModuleWithStage1PreparedPrepares) {
  auto prepares = [](const fs::path &file) {
    return BackendModule(std::make_shared<const LoadedModule>(file, ModuleKind::backend))
        .prepares();
  };
  EXPECT_FALSE(prepares(fs::path(TEST_MODULE_DIR) / "backend_cbackend.so"));
  EXPECT_FALSE(prepares(fs::path(BUILD_MODULE_DIR) / "backend_off.so"));
  EXPECT_TRUE(prepares(fs::path(BUILD_MODULE_DIR) / "backend_namespaces.so"));
}

// ---- launches the pool refuses ---------------------------------------------------------------

TEST_F(SandboxPoolTest, ABadSpecThrowsAsCommandDoesAndThePoolServesTheNextLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  Spec bad = t.spec;
  bad.binary_path = "bin/report_plugin";

  const std::string from_command = error_of([&] { host_.command(bad, "namespaces"); });
  ASSERT_EQ(from_command,
            "plugin \"report\": spec BinaryPath: \"bin/report_plugin\" is not an absolute path");
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  EXPECT_THROW(pool.launch(bad), SpecError);
  EXPECT_EQ(error_of([&] { pool.launch(bad); }), from_command);

  // The sandbox the refused launch would have taken is still there for this one.
  EXPECT_EQ(launch_in_sandbox(pool, t.spec, prepared.front()).status.shell_status(), 0);
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches, 1u);
  EXPECT_EQ(stats.cold_launches, 0u);
  EXPECT_EQ(stats.failed, 0u);
}

// The cold launch's transport (CLAWPATROL_SANDBOX_SPEC) holds a Spec to the same bound as a
// prepared sandbox's, and says so, rather than leaving execve to fail with E2BIG.
TEST_F(SandboxPoolTest, AColdLaunchOfAnOversizedSpecThrowsTheSameLengthError) {
  TempSpec t("big", REPORT_PLUGIN);
  const std::string arg(70 * 1024, 'a');
  t.spec.args = {"report", arg, arg};
  std::string what;
  try {
    host_.command(t.spec, "namespaces");
    ADD_FAILURE() << "a cold launch of " << 2 * arg.size() << " bytes of arguments did not throw";
  } catch (const std::length_error &e) {
    what = e.what();
  }
  const std::string prefix = "launch for plugin \"big\": ";
  const std::string suffix = " bytes of Spec, over " + std::to_string(kMaxLaunchMessage);
  ASSERT_TRUE(what.starts_with(prefix) && what.ends_with(suffix)) << what;
  // Just under the bound, the launch runs.
  t.spec.args = {"report", std::string(kMaxLaunchMessage - 4096, 'a')};
  PluginStdio io;
  Child child = spawn(host_.command(t.spec, "namespaces"), {}, io.stdio());
  const Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
}

TEST_F(SandboxPoolTest, AnOversizedSpecThrowsLengthErrorAndThePoolServesTheNextLaunch) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("big", REPORT_PLUGIN);
  const std::string arg(70 * 1024, 'a');
  t.spec.args = {"report", arg, arg};

  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  std::string what;
  try {
    pool.launch(t.spec);
    ADD_FAILURE() << "a launch of " << 2 * arg.size() << " bytes of arguments did not throw";
  } catch (const std::length_error &e) {
    what = e.what();
  }
  // "launch for plugin "big": <size> bytes of Spec and environment, over <cap>"
  const std::string prefix = "launch for plugin \"big\": ";
  const std::string suffix =
      " bytes of Spec and environment, over " + std::to_string(kMaxLaunchMessage);
  ASSERT_TRUE(what.starts_with(prefix) && what.ends_with(suffix)) << what;
  const std::string size = what.substr(prefix.size(), what.size() - prefix.size() - suffix.size());
  ASSERT_FALSE(size.empty()) << what;
  ASSERT_TRUE(std::all_of(size.begin(), size.end(), ::isdigit)) << what;
  EXPECT_GT(std::stoul(size), 2 * arg.size());
  EXPECT_EQ(pool.stats().cold_launches, 0u);

  t.spec.args = {"report"};
  EXPECT_EQ(launch_in_sandbox(pool, t.spec, prepared.front()).status.shell_status(), 0);
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches, 1u);
  EXPECT_EQ(stats.cold_launches, 0u);
  EXPECT_EQ(stats.failed, 0u);
}

// ---- prepared sandboxes that cannot be used ---------------------------------------------------

TEST_F(SandboxPoolTest, ASandboxKilledBeforeItsLaunchIsAuditedAndTheLaunchStillRuns) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 1u);
  ASSERT_NO_FATAL_FAILURE(kill_sandbox(prepared.front()));

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_NE(child.pid(), prepared.front());
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.failed, 1u);
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 1u);
  // One failure is not max_failures (3) in a row.
  EXPECT_TRUE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("component"), "namespaces");
  EXPECT_EQ(records[0].at("attempted").rfind("prepared sandbox ", 0), 0u)
      << records[0].at("attempted");
  EXPECT_NE(records[0].at("attempted").find("(stage 1 exit " + std::to_string(128 + SIGKILL)),
            std::string::npos)
      << records[0].at("attempted");
  EXPECT_EQ(records[0].at("hint"), "the launch ran without it");
}

TEST_F(SandboxPoolTest, AfterMaxFailuresInARowThePoolStopsPreparingAndLaunchesRunCold) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 2, .max_failures = 2});
  ASSERT_EQ(pool.wait_ready(kTimeout), 2u);
  const std::vector<pid_t> prepared = stage1_processes();
  ASSERT_EQ(prepared.size(), 2u);
  for (pid_t stage1 : prepared) ASSERT_NO_FATAL_FAILURE(kill_sandbox(stage1));

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().failed, 2u);
  EXPECT_FALSE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("hint"), "the launch ran without it");
  EXPECT_EQ(records[1].at("hint"),
            "the pool stopped preparing sandboxes; launches run without them");

  // A replacement already being started when the pool gave up may still serve one launch;
  // none is started after it.
  for (int launch = 0; launch < 3; ++launch) {
    EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  }
  const PoolStats stats = pool.stats();
  EXPECT_LE(stats.prepared_launches, 1u);
  EXPECT_GE(stats.cold_launches, 3u);
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 4u);
  EXPECT_TRUE(stage1_processes().empty());
  EXPECT_EQ(pool_records().size(), 2u);
}

TEST_F(SandboxPoolTest, ASandboxOlderThanMaxIdleIsNotUsedAndIsNoFailure) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .max_idle = 0ms, .ready_timeout = 300ms});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> old = stage1_processes();
  ASSERT_EQ(old.size(), 1u);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_NE(child.pid(), old.front());
  EXPECT_TRUE(eventually([&] { return test::process_gone(old.front()); }));
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, 1u);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_TRUE(pool_records().empty());
  EXPECT_TRUE(pool.preparing());
}

TEST_F(SandboxPoolTest, WithRenewIdleAnOldSandboxIsReplacedBeforeALaunchAsks) {
  SandboxPool pool(host_, "namespaces", Network::none,
                   {.depth = 1, .max_idle = 500ms, .renew_idle = true});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  const std::vector<pid_t> old = stage1_processes();
  ASSERT_EQ(old.size(), 1u);
  // No launch asks, and still the old one goes and a fresh one takes its place.
  EXPECT_TRUE(eventually([&] {
    const std::vector<pid_t> now = stage1_processes();
    return test::process_gone(old.front()) && now.size() == 1u && now.front() != old.front();
  }));
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 0u);
  EXPECT_TRUE(pool_records().empty());
}

// The preparefails test backend: its prepared sandboxes fail, its cold launches work.
class UnusableSandboxes : public ::testing::Test {
 protected:
  std::vector<std::map<std::string, std::string>> pool_records() const {
    return pool_records_in(audit_);
  }

  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"preparefails"}, {"preparefails"}))};
};

TEST_F(UnusableSandboxes, ASetupFailureIsAuditedWithStage1sLineAndTheLaunchRunsCold) {
  SandboxPool pool(host_, "preparefails", Network::none, {.depth = 1, .max_failures = 2});
  ASSERT_TRUE(pool.preparing());
  EXPECT_EQ(pool.wait_ready(kTimeout), 0u);
  EXPECT_EQ(pool.stats().failed, 1u);
  EXPECT_TRUE(pool.preparing());

  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report"};
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(test::parse_report(outcome.out).env, base_env_of(t.spec));

  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.failed, 2u);
  EXPECT_EQ(stats.cold_launches, 1u);
  EXPECT_EQ(stats.prepared_launches, 0u);
  EXPECT_FALSE(pool.preparing());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 2u);
  for (const auto &record : records) {
    EXPECT_EQ(record.at("component"), "preparefails");
    EXPECT_EQ(record.at("attempted"),
              "prepared sandbox died while setting up (stage 1 exit 87: clawpatrol-sandbox: "
              "mount: refused on purpose by the test backend)");
  }
  EXPECT_EQ(records[1].at("hint"),
            "the pool stopped preparing sandboxes; launches run without them");

  // Given up: nothing is started any more, and launches run cold at once.
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 0);
  EXPECT_EQ(pool.stats().cold_launches, 2u);
  EXPECT_EQ(pool.stats().failed, 2u);
  EXPECT_TRUE(stage1_processes().empty());
}

TEST_F(UnusableSandboxes, ASandboxNotReadyInTimeIsKilledAndTheLaunchRunsCold) {
  SandboxPool pool(host_, "preparefails", Network::outbound,
                   {.depth = 1, .ready_timeout = 200ms, .max_failures = 1});
  TempSpec t("report", REPORT_PLUGIN, Network::outbound);
  t.spec.args = {"report"};
  const auto started = Clock::now();
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  EXPECT_GE(Clock::now() - started, 200ms);
  Outcome outcome = io.finish(child);
  EXPECT_EQ(outcome.status.shell_status(), 0) << outcome;
  EXPECT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 1u);
  EXPECT_FALSE(pool.preparing());
  // The sandbox that never got ready was killed, not left behind.
  EXPECT_TRUE(stage1_processes().empty());

  const auto records = pool_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("attempted"), "prepared sandbox was not ready in time (stage 1 exit " +
                                            std::to_string(128 + SIGKILL) + ")");
}

// ---- the status a prepared sandbox reports ---------------------------------------------------

// The reports test backend: its prepared stage 1 reports a status on its channel (ABI 1.5).
class ReportingSandboxes : public ::testing::Test {
 protected:
  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"reports"}, {"reports"}))};
};

TEST_F(ReportingSandboxes, TheReportedStatusIsTheChildsWhileStage1StillRuns) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report-and-stay", REPORT_PLUGIN);
  PluginStdio io;
  Child child = pool.launch(t.spec, io.stdio());
  ASSERT_EQ(pool.stats().prepared_launches, 1u);
  ASSERT_GE(child.status_fd(), 0);
  pollfd reported{child.status_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&reported, 1, static_cast<int>(kTimeout.count())), 1)
      << "no status report within " << kTimeout.count() << " ms";
  EXPECT_EQ(child.wait().shell_status(), 42);
  // Stage 1 never exits on its own: the status came from the report, not from its exit.
  EXPECT_FALSE(test::process_gone(child.pid()));
  const pid_t stage1 = child.pid();
  { Child done = std::move(child); }  // kills and reaps it
  EXPECT_TRUE(test::process_gone(stage1));
}

TEST_F(ReportingSandboxes, AStatusOutOfRangeIsNotTakenAndStage1sExitCounts) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  TempSpec t("report-out-of-range", REPORT_PLUGIN);
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 7);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(ReportingSandboxes, WithoutAReportStage1sExitIsTheStatus) {
  SandboxPool pool(host_, "reports", Network::none, {.depth = 1, .replace = false});
  TempSpec t("no-report", REPORT_PLUGIN);
  // 90 or 91 would mean status_descriptor() was wrong before or after the launch.
  EXPECT_EQ(launch_and_finish(pool, t.spec).status.shell_status(), 5);
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
}

TEST_F(SandboxPoolTest, APreparedLaunchReportsOnItsChannelAndAColdOneHasNone) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 1, .replace = false});
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  TempSpec t("report", REPORT_PLUGIN);
  t.spec.args = {"report", "42"};
  PluginStdio io;
  Child prepared = pool.launch(t.spec, io.stdio());
  ASSERT_EQ(pool.stats().prepared_launches, 1u);
  ASSERT_GE(prepared.status_fd(), 0);
  EXPECT_EQ(io.finish(prepared).status.shell_status(), 42);

  PluginStdio cold_io;
  Child cold = pool.launch(t.spec, cold_io.stdio());
  ASSERT_EQ(pool.stats().cold_launches, 1u);
  EXPECT_EQ(cold.status_fd(), -1);
  EXPECT_EQ(cold_io.finish(cold).status.shell_status(), 42);
}

// ---- after the launch ------------------------------------------------------------------------

TEST_F(SandboxPoolTest, ASetupFailureAfterTheLaunchIsOneLineOnTheLaunchsStderrAndExit87) {
  SandboxPool pool(host_, "namespaces", Network::none);
  ASSERT_EQ(pool.wait_ready(kTimeout), 1u);
  // The interpreter exists on the host, outside everything the Spec grants.
  test::TempFile interpreter_dir("", "unused");
  const fs::path interpreter = fs::canonical(interpreter_dir.dir()) / "interpreter";
  fs::copy_file("/bin/true", interpreter);
  fs::permissions(interpreter, fs::perms::owner_all);
  test::TempFile script_dir("#!" + interpreter.string() + "\n", "plugin");
  const std::string script = fs::canonical(script_dir.path()).string();
  fs::permissions(script, fs::perms::owner_all);
  ASSERT_EQ(test::run_process({script}).code, 0) << "the script should run on the host";

  TempSpec t("shebang", script);
  Outcome outcome = launch_and_finish(pool, t.spec);
  EXPECT_EQ(outcome.status.shell_status(), kStage1ExitCode) << outcome;
  EXPECT_EQ(outcome.err, "clawpatrol-sandbox: exec: " + script + ": No such file or directory\n");
  EXPECT_EQ(outcome.out, "");
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().failed, 0u);
}

TEST_F(SandboxPoolTest, DestroyingThePoolKillsItsRunningPluginsAndItsSandboxes) {
  std::optional<SandboxPool> pool(std::in_place, host_, "namespaces", Network::none);
  TempSpec t("sleeper", REPORT_PLUGIN);
  t.spec.args = {"sleep", "60"};
  PluginStdio io;
  Child child = pool->launch(t.spec, io.stdio());
  ASSERT_EQ(io.read_line().value_or("<nothing>"), "ready 2");
  ASSERT_EQ(pool->stats().prepared_launches, 1u);
  // Its stage 1, the sandbox's init and the plugin.
  const std::vector<pid_t> plugin = process_tree(child.pid());
  EXPECT_EQ(plugin.size(), 3u);

  ASSERT_EQ(pool->wait_ready(kTimeout), 1u);
  std::vector<pid_t> prepared;
  for (pid_t stage1 : stage1_processes()) {
    if (stage1 == child.pid()) continue;
    for (pid_t pid : process_tree(stage1)) prepared.push_back(pid);
  }
  EXPECT_EQ(prepared.size(), 2u);  // its stage 1 and its init

  pool.reset();
  if (!eventually([&] { return all_gone(plugin) && all_gone(prepared); }, 5s)) {
    ADD_FAILURE() << "processes of the pool outlived it";
    for (pid_t pid : plugin) ::kill(pid, SIGKILL);
    for (pid_t pid : prepared) ::kill(pid, SIGKILL);
  }
  const ExitStatus status = child.wait();
  EXPECT_EQ(status.signal, SIGKILL);
}

TEST_F(SandboxPoolTest, AnyThreadMayLaunchAndThePluginOutlivesIt) {
  SandboxPool pool(host_, "namespaces", Network::none);
  TempSpec t("late", "/bin/sh");
  // Still running when the launching thread has ended: the parent-death signal of what the
  // pool starts belongs to the pool's thread, not the caller's.
  run_script(t.spec, "sleep 0.3; echo alive");
  for (Network network : {Network::none, Network::outbound}) {
    t.spec.network = network;
    PluginStdio io;
    std::optional<Child> child;
    std::string error;
    std::thread launcher([&] {
      try {
        child.emplace(pool.launch(t.spec, io.stdio()));
      } catch (const std::exception &e) {
        error = e.what();
      }
    });
    launcher.join();
    ASSERT_TRUE(child) << error;
    Outcome outcome = io.finish(*child);
    EXPECT_EQ(outcome.status.shell_status(), 0) << to_string(network) << ": " << outcome;
    EXPECT_EQ(outcome.out, "alive\n") << to_string(network);
  }
  EXPECT_EQ(pool.stats().prepared_launches, 1u);
  EXPECT_EQ(pool.stats().cold_launches, 1u);
}

TEST_F(SandboxPoolTest, ConcurrentLaunchesFromManyThreadsAllRun) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 2});
  TempSpec t("report", REPORT_PLUGIN);
  constexpr int kLaunches = 6;
  std::vector<std::future<Outcome>> launches;
  for (int i = 0; i < kLaunches; ++i) {
    Spec spec = t.spec;
    // Every third for another network: cold launches run on the pool's thread meanwhile.
    spec.network = i % 3 == 2 ? Network::outbound : Network::none;
    spec.args = {"report", std::to_string(10 + i)};
    launches.push_back(
        std::async(std::launch::async, [&pool, spec] { return launch_and_finish(pool, spec); }));
  }
  for (int i = 0; i < kLaunches; ++i) {
    if (launches[i].wait_for(2 * kTimeout) != std::future_status::ready) {
      // A launch that never returns holds the pool: nothing to clean up safely.
      ADD_FAILURE() << "launch " << i << " did not return";
      std::abort();
    }
    Outcome outcome = launches[i].get();
    EXPECT_EQ(outcome.status.shell_status(), 10 + i) << outcome;
  }
  const PoolStats stats = pool.stats();
  EXPECT_EQ(stats.prepared_launches + stats.cold_launches, static_cast<size_t>(kLaunches));
  EXPECT_GE(stats.cold_launches, 2u);
  EXPECT_EQ(stats.failed, 0u);
}

TEST_F(SandboxPoolTest, WaitReadyReturnsDepthOnceEverySandboxIsReady) {
  SandboxPool pool(host_, "namespaces", Network::none, {.depth = 3});
  EXPECT_TRUE(pool.preparing());
  EXPECT_EQ(pool.wait_ready(kTimeout), 3u);
  EXPECT_EQ(stage1_processes().size(), 3u);
  // Already ready: again at once.
  const auto started = Clock::now();
  EXPECT_EQ(pool.wait_ready(kTimeout), 3u);
  EXPECT_LT(Clock::now() - started, 1s);
}

}  // namespace
}  // namespace sandbox_host
