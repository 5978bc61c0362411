// The landlock backend's escape corpus on processes: host processes signalled, traced or read,
// the plugin's privileges, descriptors and environment as the host sees them in /proc, and
// the launcher's death taking the plugin down.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// /proc/<pid>/status of a process, as the host sees it: field -> value, whitespace squeezed.
std::map<std::string, std::string> status_of(pid_t pid) {
  std::map<std::string, std::string> fields;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::istringstream words(line.substr(colon + 1));
    std::string value, word;
    while (words >> word) value += (value.empty() ? "" : " ") + word;
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

std::map<int, std::string> fds_of(pid_t pid) {
  std::map<int, std::string> fds;
  const fs::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto &entry : fs::directory_iterator(dir)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(entry.path(), ec);
    fds[std::stoi(entry.path().filename().string())] = ec ? "?" : target.string();
  }
  return fds;
}

// ---- processes -------------------------------------------------------------------------

TEST_P(LandlockEscape, HostProcessesCannotBeSignalledTracedOrRead) {
  const std::string secret = "host-process-secret-" + random_suffix();
  auto host = host_process(secret);
  const std::string pid = std::to_string(host->pid());
  ASSERT_EQ(status_of(host->pid())["Uid"].substr(0, std::to_string(uid()).size()),
            std::to_string(uid()));

  if (abi() >= 6) {
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, std::to_string(SIGTERM)}), "EPERM"));
    EXPECT_TRUE(DeniedWith(attempt({"kill", pid, "0"}), "EPERM"));
    EXPECT_FALSE(test::process_gone(host->pid())) << "the host's process was killed";
  }
  EXPECT_TRUE(Denied(attempt({"ptrace", pid})));
  Attempt environ = attempt({"read", "/proc/" + pid + "/environ"});
  EXPECT_TRUE(DeniedWith(environ, "EACCES"));
  EXPECT_EQ(environ.result.out.find(secret), std::string::npos);
  EXPECT_TRUE(DeniedWith(attempt({"read", "/proc/" + pid + "/cmdline"}), "EACCES"));
  EXPECT_TRUE(DeniedWith(attempt({"list", "/proc"}), "EACCES"));
  expect_seccomp_records({"seccomp: ptrace", "seccomp: ptrace"});
}

// Seen from the host, which can look at the plugin's /proc entry.
TEST_P(LandlockEscape, ThePluginRunsWithoutPrivilegesUnderAFilter) {
  Sleeper s = sleeper("marker-" + random_suffix());
  ASSERT_GT(s.plugin, 0);
  auto status = status_of(s.plugin);
  EXPECT_EQ(status["NoNewPrivs"], "1");
  EXPECT_EQ(status["Seccomp"], "2");
  EXPECT_EQ(status["Uid"], std::to_string(uid()) + " " + std::to_string(uid()) + " " +
                               std::to_string(uid()) + " " + std::to_string(uid()));
  const std::string zero = "0000000000000000";
  for (const char *set : {"CapEff", "CapPrm", "CapInh", "CapAmb"}) {
    EXPECT_EQ(status[set], zero) << set;
  }
  // As root, the bounding set is emptied too, so not even a setuid-root exec could raise a
  // capability; as nobody it cannot be (no CAP_SETPCAP), and no_new_privs holds instead.
  if (root()) {
    EXPECT_EQ(status["CapBnd"], zero);
  }
  ::kill(s.launcher->pid(), SIGTERM);  // forwarded to the plugin
  ProcessResult result = s.launcher->wait(10s);
  EXPECT_EQ(result.signal, 0);
  EXPECT_EQ(result.code, 128 + SIGTERM) << result.err;
}

TEST_P(LandlockEscape, AHostDescriptorWithoutCloexecDoesNotReachThePlugin) {
  std::unique_ptr<ScopedPath> secret_holder;
  const fs::path secret = make_secret(secret_holder);
  const int leak = ::open(secret.c_str(), O_RDONLY);  // no O_CLOEXEC, on purpose
  ASSERT_GE(leak, 3);
  Sleeper s = sleeper("marker-" + random_suffix());
  ::close(leak);
  ASSERT_GT(s.plugin, 0);
  const auto fds = fds_of(s.plugin);
  ASSERT_EQ(fds.size(), 3u) << "fds: " << [&] {
    std::string all;
    for (const auto &[fd, target] : fds) all += std::to_string(fd) + "=" + target + " ";
    return all;
  }();
  EXPECT_EQ(fds.count(0) + fds.count(1) + fds.count(2), 3u);
  EXPECT_EQ(fds.at(0), "/dev/null");
  for (const auto &[fd, target] : fds) EXPECT_NE(target, secret.string()) << fd;
}

TEST_P(LandlockEscape, TheEnvironmentIsExactlyBaseEnv) {
  Attempt env = attempt({"env"});
  ASSERT_TRUE(Allowed(env));
  std::vector<std::string> variables;
  for (const auto &line : env.extra) {
    ASSERT_TRUE(line.starts_with("env ")) << line;
    variables.push_back(line.substr(4));
  }
  const std::string tmp = tmp_dir().string();
  EXPECT_EQ(variables, (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin",
                                                 "LANG=C.UTF-8", "HOME=" + tmp, "TMPDIR=" + tmp}));
}

TEST_P(LandlockEscape, KillingTheLauncherTakesThePluginDown) {
  const std::string marker = "marker-" + random_suffix();
  Sleeper s = sleeper(marker);
  ASSERT_GT(s.plugin, 0);
  // No pid namespace and no init: the plugin is the launcher's own child (stage 1 exec'd it).
  EXPECT_EQ(children_of(s.launcher->pid()), std::vector<pid_t>{s.plugin});
  EXPECT_EQ(cmdline_of(s.plugin), (std::vector<std::string>{plugin(), "sleep", "60", marker}));

  ASSERT_EQ(::kill(s.launcher->pid(), SIGKILL), 0);
  s.launcher->wait(5s);
  const bool gone = gone_within(s.plugin, 5s);
  EXPECT_TRUE(gone) << "pid " << s.plugin << " outlived sandbox-host run";
  if (!gone) ::kill(s.plugin, SIGKILL);
}

}  // namespace
}  // namespace sandbox_host
