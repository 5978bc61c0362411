// The launch service of `sandbox-host serve` ([launcher]) and its clients, `sandbox-host run
// --via` and sandbox-host-launch, through the real binaries, as root and as nobody: what the
// plugin gets, the statuses, signals, the plugin's death with its client, and every bad
// request refused with the service still serving and nothing of it leaked.
#include <sandbox_host/host/launch_client/launch_frames.hpp>
#include <sandbox_host/host/launch_client/launch_request.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ProcessResult;
using test::read_file;
using test::Service;
using test::User;
using test::user_name;

std::vector<std::string> handshake_env() {
  return {"PATH=/usr/bin:/bin",
          "SECRET_TOKEN=hunter2",
          "FOO=from-the-caller",
          "BASIC_PLUGIN=hello",
          "PLUGIN_MIN_PORT=10000",
          "PLUGIN_MAX_PORT=25000",
          "PLUGIN_PROTOCOL_VERSIONS=1",
          "PLUGIN_CLIENT_CERT=-----BEGIN CERTIFICATE-----",
          "CLAWPATROL_SANDBOX_SPEC=not-for-plugins"};
}

std::vector<std::string> passed_env(const std::vector<std::string> &env) {
  std::vector<std::string> passed;
  for (const auto &entry : env) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name != "PATH" && name != "LANG" && name != "HOME" && name != "TMPDIR") {
      passed.push_back(entry);
    }
  }
  return passed;
}

// The service's resting state, before and after: what it holds with no launch running.
struct Resting {
  std::size_t fds, processes;
};

void expect_back_to(const Service &service, const Resting &before) {
  // A launch's prepared sandbox is replaced a moment later; the rest must go.
  EXPECT_TRUE(test::eventually(
      [&] { return service.fds() == before.fds && service.processes() == before.processes; }, 15s))
      << "descriptors " << service.fds() << " (were " << before.fds << "), processes "
      << service.processes() << " (were " << before.processes << ")";
}

Resting resting(const Service &service) {
  // Prepared sandboxes still starting count once they are up.
  std::this_thread::sleep_for(1s);
  return {service.fds(), service.processes()};
}

class LaunchServiceTest : public ::testing::TestWithParam<User> {};

TEST_P(LaunchServiceTest, ThePluginGetsBaseEnvAndOnlyTheVariablesItsCallerNames) {
  Service service(GetParam());
  test::ProcessOptions options = test::with_env(handshake_env());
  const ProcessResult result = test::run_process(
      service.launch({"--env", "FOO", "--env", "BAR=set=here", "--env", "UNSET_ONE", "--handshake",
                      "BASIC_PLUGIN", "--", service.install().report_plugin(), "report"}),
      options);
  ASSERT_EQ(result.code, 0) << result.err;
  const test::PluginReport report = test::parse_report(result.out);
  EXPECT_EQ(passed_env(report.env),
            (std::vector<std::string>{"FOO=from-the-caller", "BAR=set=here", "BASIC_PLUGIN=hello",
                                      "PLUGIN_MIN_PORT=10000", "PLUGIN_MAX_PORT=25000",
                                      "PLUGIN_PROTOCOL_VERSIONS=1",
                                      "PLUGIN_CLIENT_CERT=-----BEGIN CERTIFICATE-----"}));
  EXPECT_EQ(report.uid, GetParam() == User::root ? 0u : test::kNobody);
  const std::string audit = service.audit();
  EXPECT_NE(audit.find("FOO, BAR, BASIC_PLUGIN, PLUGIN_MIN_PORT, PLUGIN_MAX_PORT, "
                       "PLUGIN_PROTOCOL_VERSIONS, PLUGIN_CLIENT_CERT"),
            std::string::npos)
      << audit;
  EXPECT_EQ(audit.find("from-the-caller"), std::string::npos) << "a value reached the audit";
  EXPECT_EQ(audit.find("hunter2"), std::string::npos);
}

TEST_P(LaunchServiceTest, RunViaTheVariableIsTheSameClient) {
  Service service(GetParam());
  std::vector<std::string> env = handshake_env();
  env.push_back("SANDBOX_HOST_LAUNCHER=" + service.socket());
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(), {service.install().sandbox_host(), "run", "--env", "FOO", "--",
                           service.install().report_plugin(), "report", "3"});
  const ProcessResult result = test::run_process(argv, test::with_env(env));
  EXPECT_EQ(result.code, 3) << result.err;
  EXPECT_EQ(passed_env(test::parse_report(result.out).env),
            std::vector<std::string>{"FOO=from-the-caller"});
  // It came through the service: the service's audit names the launch.
  EXPECT_NE(service.audit().find("the caller's variables FOO"), std::string::npos);
}

// A plugin a bound killed: the service records why (death_report.hpp) and its reply carries
// the line, which the client prints; a plugin that aborts on its own gets neither.
TEST_P(LaunchServiceTest, ADeathByABoundIsRecordedAndTheClientSaysSo) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "int 0x80 is x86_64's way to a foreign ABI";
#endif
  Service service(GetParam());
  const std::string plugin = service.install().add_binary(DEATH_PLUGIN);
  const ProcessResult killed = test::run_process(service.launch({"--", plugin, "int80"}));
  EXPECT_EQ(killed.code, 128 + SIGSYS) << killed.err;
  EXPECT_NE(killed.err.find("sandbox-host: plugin death_plugin died: killed by the seccomp "
                            "filter, SIGSYS (exit status 159)"),
            std::string::npos)
      << killed.err;
  const ProcessResult aborted = test::run_process(service.launch({"--", plugin, "abort"}));
  EXPECT_EQ(aborted.code, 128 + SIGABRT) << aborted.err;
  EXPECT_EQ(aborted.err.find(" died: "), std::string::npos) << aborted.err;
  service.stop();
  const std::string audit = service.audit();
  const std::string rule = "\"rule\":\"seccomp-kill\"";
  EXPECT_NE(audit.find(rule), std::string::npos) << audit;
  EXPECT_EQ(audit.find(rule), audit.rfind(rule)) << audit;
}

TEST_P(LaunchServiceTest, StatusesAreRunsOwn) {
  Service service(GetParam());
  const std::string plugin = service.install().report_plugin();
  EXPECT_EQ(test::run_process(service.launch({"--", plugin, "report", "7"})).code, 7);
  EXPECT_EQ(test::run_process(service.launch({"--", plugin, "signal", "15"})).code, 128 + 15);

  const ProcessResult refused =
      test::run_process(service.launch({"--backend", "seatbelt", "--", plugin, "report"}));
  EXPECT_EQ(refused.code, 125);
  EXPECT_NE(refused.err.find("backend seatbelt was asked for plugin \"report_plugin\", but"),
            std::string::npos)
      << refused.err;

  // A script whose interpreter the sandbox does not hold: the setup's one line, and 87.
  const fs::path interpreter = service.dir() / "interpreter";
  fs::copy_file("/bin/true", interpreter);
  const fs::path script = service.install().dir() / "bin/shebang";
  std::ofstream(script) << "#!" << interpreter.string() << "\n";
  fs::permissions(script, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(interpreter,
                  fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const ProcessResult failed = test::run_process(service.launch({"--", script.string()}));
  EXPECT_EQ(failed.code, 87);
  EXPECT_EQ(failed.err,
            "clawpatrol-sandbox: exec: " + script.string() + ": No such file or directory\n");
}

TEST_P(LaunchServiceTest, StdinAndStdoutAreTheCallersOwn) {
  Service service(GetParam());
  test::TempFile input("line one\nline two\n", "input");
  UniqueFd in(::open(input.path().c_str(), O_RDONLY | O_CLOEXEC));
  test::ProcessOptions options;
  options.stdin_fd = in.get();
  const ProcessResult result = test::run_process(service.launch({"--", "/bin/cat"}), options);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "line one\nline two\n");
}

TEST_P(LaunchServiceTest, ASignalTheClientGetsReachesThePlugin) {
  Service service(GetParam());
  test::RunningProcess client(
      service.launch({"--", service.install().report_plugin(), "sleep", "60"}));
  ASSERT_TRUE(client.read_line(20s).value_or("").starts_with("ready")) << client.wait(1s).err;
  ::kill(client.pid(), SIGTERM);
  const ProcessResult result = client.wait(20s);
  EXPECT_EQ(result.code, 128 + SIGTERM) << result.err;
}

// SIGKILL of a client whose plugin sleeps: the plugin is gone soon after, and the service is
// back to what it held before. backend: run --backend, or "" for the service's choice.
void expect_sigkill_of_the_client_takes_the_plugin(const Service &service,
                                                   const std::string &backend) {
  const Resting before = resting(service);
  std::vector<std::string> args;
  if (!backend.empty()) args = {"--backend", backend};
  args.insert(args.end(), {"--", service.install().report_plugin(), "sleep", "61"});
  test::RunningProcess client(service.launch(args));
  ASSERT_TRUE(client.read_line(20s).value_or("").starts_with("ready")) << client.wait(1s).err;
  const std::vector<pid_t> plugin = service.plugins("report_plugin sleep 61");
  ASSERT_FALSE(plugin.empty()) << "no plugin under the service";
  ::kill(client.pid(), SIGKILL);
  client.wait(10s);
  EXPECT_TRUE(test::eventually(
      [&] {
        return std::all_of(plugin.begin(), plugin.end(),
                           [](pid_t p) { return test::process_gone(p); });
      },
      10s))
      << "the plugin outlived its client";
  expect_back_to(service, before);
}

TEST_P(LaunchServiceTest, SigkillOfTheClientTakesThePluginAndLeavesNothing) {
  Service service(GetParam());
  expect_sigkill_of_the_client_takes_the_plugin(service, "");
}

// Landlock's prepared stage 1 execs the plugin itself: it reports no status, and its channel
// closes at the exec, long before the plugin's end.
TEST_P(LaunchServiceTest, SigkillOfTheClientTakesThePluginUnderLandlockToo) {
  Service service(GetParam(), "", "[plugins.report_plugin]\nsandbox = \"landlock\"\n");
  const ProcessResult probe = test::run_process(
      service.launch({"--backend", "landlock", "--", service.install().report_plugin(), "report"}));
  if (probe.code == 125 && probe.err.find("does not work here") != std::string::npos) {
    GTEST_SKIP() << probe.err;
  }
  ASSERT_EQ(probe.code, 0) << probe.err;
  expect_sigkill_of_the_client_takes_the_plugin(service, "landlock");
}

TEST_P(LaunchServiceTest, TwoHundredLaunchesAtOnceAllRunAndLeaveNothing) {
  Service service(GetParam());
  const Resting before = resting(service);
  std::vector<std::unique_ptr<test::RunningProcess>> clients;
  for (int i = 0; i < 200; ++i) {
    clients.push_back(std::make_unique<test::RunningProcess>(service.launch(
        {"--", service.install().report_plugin(), "report", std::to_string(i % 5)})));
  }
  int right = 0;
  std::string wrong;
  for (int i = 0; i < 200; ++i) {
    const ProcessResult result = clients[i]->wait(180s);
    if (result.code == i % 5 && result.out.find("pid ") == 0) {
      ++right;
    } else if (wrong.empty()) {
      wrong = "launch " + std::to_string(i) + ": status " + std::to_string(result.code) + ": " +
              result.err;
    }
  }
  EXPECT_EQ(right, 200) << wrong;
  expect_back_to(service, before);
}

TEST_P(LaunchServiceTest, PastMaxLaunchesALaunchIsRefusedByNameAndTheOthersRun) {
  Service service(GetParam(), "max_launches = 3");
  std::vector<std::unique_ptr<test::RunningProcess>> sleepers;
  for (int i = 0; i < 3; ++i) {
    sleepers.push_back(std::make_unique<test::RunningProcess>(
        service.launch({"--", service.install().report_plugin(), "sleep", "60"})));
    ASSERT_TRUE(sleepers.back()->read_line(20s).value_or("").starts_with("ready"));
  }
  const ProcessResult refused =
      test::run_process(service.launch({"--", service.install().report_plugin(), "report"}));
  EXPECT_EQ(refused.code, 125);
  EXPECT_NE(refused.err.find("3 launches are running, as many as launcher.max_launches allows"),
            std::string::npos)
      << refused.err;
  for (auto &sleeper : sleepers) {
    ::kill(sleeper->pid(), SIGTERM);
    EXPECT_EQ(sleeper->wait(20s).code, 128 + SIGTERM);
  }
  // The slots are free again once the service has seen its plugins go.
  EXPECT_TRUE(test::eventually(
      [&] {
        return test::run_process(
                   service.launch({"--", service.install().report_plugin(), "report"}))
                   .code == 0;
      },
      10s));
}

// The same environment rules for a launch run here, without the service.
TEST_P(LaunchServiceTest, RunHereAppliesTheSameEnvironmentRules) {
  test::UnprivilegedInstall install;
  test::TempFile config(
      "[plugins.report_plugin]\nenv = [\"FOO\", \"CONST=1\"]\nhandshake = \"BASIC_PLUGIN\"\n",
      "config.toml");
  std::vector<std::string> argv =
      GetParam() == User::nobody ? test::as_nobody() : std::vector<std::string>{};
  argv.push_back(install.sandbox_host());
  argv.push_back("run");
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> all = argv;
    all.insert(all.end(), args.begin(), args.end());
    return test::run_process(all, test::with_env(handshake_env()));
  };
  const ProcessResult named =
      run({"--env", "FOO", "--handshake", "BASIC_PLUGIN", "--", install.report_plugin(), "report"});
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(passed_env(test::parse_report(named.out).env),
            (std::vector<std::string>{"FOO=from-the-caller", "BASIC_PLUGIN=hello",
                                      "PLUGIN_MIN_PORT=10000", "PLUGIN_MAX_PORT=25000",
                                      "PLUGIN_PROTOCOL_VERSIONS=1",
                                      "PLUGIN_CLIENT_CERT=-----BEGIN CERTIFICATE-----"}));
  EXPECT_NE(named.err.find("noted: launch plugin=report_plugin rule=env-passed"), std::string::npos)
      << named.err;

  const ProcessResult configured =
      run({"--config", config.path().string(), "--", install.report_plugin(), "report"});
  ASSERT_EQ(configured.code, 0) << configured.err;
  const auto passed = passed_env(test::parse_report(configured.out).env);
  EXPECT_EQ(passed.size(), 7u);
  EXPECT_EQ(passed.at(0), "FOO=from-the-caller");
  EXPECT_EQ(passed.at(1), "CONST=1");

  const ProcessResult nothing = run({"--", install.report_plugin(), "report"});
  EXPECT_EQ(passed_env(test::parse_report(nothing.out).env), std::vector<std::string>{});

  for (const auto &[entry, reason] : std::vector<std::pair<std::string, std::string>>{
           {"CLAWPATROL_SANDBOX_SPEC", "CLAWPATROL_* variables are the gateway's"},
           {"HOME=/root", "env HOME: BaseEnv sets this variable"},
           {"TMPDIR", "env TMPDIR: BaseEnv sets this variable"},
           {"1ABC=x", "not a variable name"},
           {"=x", "not a variable name"}}) {
    const ProcessResult refused = run({"--env", entry, "--", install.report_plugin(), "report"});
    EXPECT_EQ(refused.code, 125) << entry;
    EXPECT_NE(refused.err.find(reason), std::string::npos) << entry << ": " << refused.err;
    EXPECT_EQ(refused.out, "") << entry;
  }
}

INSTANTIATE_TEST_SUITE_P(Users, LaunchServiceTest, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return user_name(info.param); });

// Requests written by hand, for what a client of ours never sends.
class RawRequests : public ::testing::Test {
 protected:
  static LaunchReply exchange(const Service &service, const std::string &body, int fd_count,
                              std::optional<std::uint32_t> claimed_size = std::nullopt) {
    UniqueFd socket = service.connect_raw();
    if (!socket) throw std::runtime_error("connect");
    UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
    const std::vector<int> fds(static_cast<std::size_t>(fd_count), null.get());
    if (claimed_size) {
      const std::array<unsigned char, 4> header{static_cast<unsigned char>(*claimed_size >> 24),
                                                static_cast<unsigned char>(*claimed_size >> 16),
                                                static_cast<unsigned char>(*claimed_size >> 8),
                                                static_cast<unsigned char>(*claimed_size)};
      if (::send(socket.get(), header.data(), header.size(), MSG_NOSIGNAL) != 4) {
        throw std::runtime_error("send");
      }
      ::send(socket.get(), body.data(), body.size(), MSG_NOSIGNAL);
    } else {
      send_frame(socket.get(), body, fds);
    }
    std::optional<Frame> frame =
        receive_frame(socket.get(), kMaxSmallFrame, std::chrono::steady_clock::now() + 20s);
    if (!frame) throw std::runtime_error("the service closed without a reply");
    return decode_reply(frame->body);
  }

  static std::string request_for(const Service &service, const std::string &binary) {
    LaunchRequest request;
    request.spec.binary_path = binary;
    request.spec.args = {"report"};
    request.caller_env = {"PATH=/usr/bin"};
    (void)service;
    return encode_launch_request(request);
  }
};

TEST_F(RawRequests, EachBadRequestIsRefusedByNameAndTheServiceKeepsServing) {
  Service service(User::root);
  const Resting before = resting(service);
  const std::string plugin = service.install().report_plugin();

  struct Case {
    std::string what, body;
    int fds;
    std::optional<std::uint32_t> claimed;
    std::string reason;
  };
  const std::vector<Case> cases{
      {"not JSON", "{\"spec\": ", 3, {}, "not a JSON object"},
      {"not an object", "[1,2]", 3, {}, "not a JSON object"},
      {"no spec", "{\"network_given\": false}", 3, {}, "field \"spec\" is not an object"},
      {"no descriptors",
       request_for(service, plugin),
       0,
       {},
       "exactly its stdin, stdout and stderr"},
      {"one descriptor", request_for(service, plugin), 1, {}, "carries 1 descriptors"},
      {"a binary that does not exist",
       request_for(service, "/nonexistent/plugin"),
       3,
       {},
       "/nonexistent/plugin"},
      {"a relative binary",
       request_for(service, "report_plugin"),
       3,
       {},
       "BinaryPath: \"report_plugin\" is not an absolute path"},
      {"huge", "{}", 0, 1u << 30, "a frame of 1073741824 bytes, over the bound of 1048576"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    const LaunchReply reply = exchange(service, c.body, c.fds, c.claimed);
    EXPECT_EQ(reply.kind, LaunchReply::Kind::refused);
    EXPECT_NE(reply.reason.find(c.reason), std::string::npos) << reply.reason;
  }
  // A client that dies inside its request, and one that only looks.
  {
    UniqueFd socket = service.connect_raw();
    const std::array<char, 6> half{0, 0, 1, 0, '{', '"'};
    ASSERT_EQ(::send(socket.get(), half.data(), half.size(), MSG_NOSIGNAL), 6);
  }
  { UniqueFd socket = service.connect_raw(); }

  const ProcessResult good = test::run_process(service.launch({"--", plugin, "report", "4"}));
  EXPECT_EQ(good.code, 4) << good.err;
  expect_back_to(service, before);
  // Every refusal is in the audit too.
  EXPECT_NE(service.audit().find("launcher-request"), std::string::npos);
}

TEST_F(RawRequests, AnotherUidIsRefusedAndTheSocketIsOwnersOnly) {
  Service service(User::nobody);
  struct stat socket_stat {
  }, dir_stat{};
  ASSERT_EQ(::stat(service.socket().c_str(), &socket_stat), 0);
  ASSERT_EQ(::stat(fs::path(service.socket()).parent_path().c_str(), &dir_stat), 0);
  EXPECT_EQ(socket_stat.st_mode & 07777, 0600u);
  EXPECT_EQ(dir_stat.st_mode & 07777, 0700u);
  EXPECT_EQ(socket_stat.st_uid, test::kNobody);

  // Root passes the directory's mode, not the service's check.
  const ProcessResult root =
      test::run_process({service.install().sandbox_host_launch(), "--via", service.socket(), "--",
                         service.install().report_plugin(), "report"});
  EXPECT_EQ(root.code, 125);
  EXPECT_NE(root.err.find("(uid 0); this launch service"), std::string::npos) << root.err;
  EXPECT_NE(root.err.find("serves uid 65534 only"), std::string::npos) << root.err;
  EXPECT_EQ(root.out, "");
  const ProcessResult own =
      test::run_process(service.launch({"--", service.install().report_plugin(), "report"}));
  EXPECT_EQ(own.code, 0) << own.err;
}

// The long options a --help text names, "--help" and the given ones left out.
std::set<std::string> long_options(const std::string &help, const std::set<std::string> &but) {
  std::set<std::string> found;
  for (size_t at = help.find("--"); at != std::string::npos; at = help.find("--", at + 2)) {
    size_t end = at + 2;
    while (end < help.size() &&
           (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-')) {
      ++end;
    }
    const std::string option = help.substr(at, end - at);
    if (option.size() > 2 && option != "--help" && but.count(option) == 0) found.insert(option);
  }
  return found;
}

TEST(LaunchClient, TakesTheLaunchOptionsOfRunAndNoOther) {
  const ProcessResult client = test::run_process({SANDBOX_HOST_LAUNCH_EXE, "--help"});
  ASSERT_EQ(client.code, 0) << client.err;
  const ProcessResult run = test::run_process({SANDBOX_HOST_EXE, "run", "--help"});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::set<std::string> ours = long_options(client.out, {"--via"});
  EXPECT_FALSE(ours.empty());
  // What run does here and the service never does: its own config, a policy, a prepared
  // sandbox of its own, learning from the plugin's calls.
  EXPECT_EQ(ours, long_options(run.out, {"--via", "--config", "--policy", "--harness", "--prepared",
                                         "--learn", "--learn-json"}));
}

TEST(LaunchClient, EachMistakeOnItsCommandLineIsNamedAndExits125) {
  const std::string client = SANDBOX_HOST_LAUNCH_EXE;
  const std::vector<std::string> no_launcher_env{"PATH=/usr/bin:/bin"};
  for (const auto &[args, line] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--bogus", "x"}, "--bogus: not an option of sandbox-host-launch (see --help)"},
           {{"-x"}, "-x: not an option of sandbox-host-launch (see --help)"},
           {{"--net", "none", "--", "/bin/true"},
            "--net: not an option of sandbox-host-launch (see --help)"},
           {{"--via=/nonexistent/s", "--netw=none", "--", "/bin/true"},
            "--netw: not an option of sandbox-host-launch (see --help)"},
           {{"--name"}, "--name: needs a value"},
           {{"--network", "none", "--network", "outbound", "--", "/bin/true"},
            "--network: given twice; it takes one value"},
           {{"--via", "/nonexistent/s"}, "no plugin named: -- BINARY [ARGS...] (see --help)"},
           {{"--", "/bin/true"},
            "no launch service: name its socket with --via or SANDBOX_HOST_LAUNCHER"},
           {{"--via", "/nonexistent/s", "--network", "wifi", "--", "/bin/true"},
            "--network wifi: not a network; allowed: none, outbound, proxied"},
           {{"--via", "/nonexistent/s", "--", "no-such-command-here"},
            "command no-such-command-here: not found in PATH"},
       }) {
    std::vector<std::string> argv{client};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult result = test::run_process(argv, test::with_env(no_launcher_env));
    EXPECT_EQ(result.code, 125) << args.front();
    EXPECT_EQ(result.err, "sandbox-host-launch: " + line + "\n") << args.front();
  }
}

TEST(LaunchClient, ThePluginsOwnArgumentsAreNotItsOptions) {
  // Parsed as the client's, "--bogus" would be refused before the connection is tried.
  for (const std::vector<std::string> &args : std::vector<std::vector<std::string>>{
           {"--", "/bin/true", "--bogus"}, {"/bin/true", "--bogus", "-x"}}) {
    std::vector<std::string> argv{SANDBOX_HOST_LAUNCH_EXE, "--via", "/nonexistent/s"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult result = test::run_process(argv);
    EXPECT_EQ(result.code, 125);
    EXPECT_EQ(result.err,
              "sandbox-host-launch: launch service /nonexistent/s: connect: No such file or "
              "directory\n");
  }
}

TEST(LauncherConfig, APlaceThatLetsOthersInIsRefusedByName) {
  test::UnprivilegedInstall install;
  test::TempFile home("", "unused");
  fs::create_directories(home.dir() / "open");
  fs::permissions(home.dir() / "open",
                  fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  std::ofstream(home.dir() / "config.toml")
      << "[launcher]\nsocket = \"" << (home.dir() / "open/launch.sock").string()
      << "\"\n[broker]\nstate_dir = \"" << (home.dir() / "state").string() << "\"\n";
  const ProcessResult result = test::run_process(
      {install.sandbox_host(), "serve", "--config", (home.dir() / "config.toml").string()});
  EXPECT_EQ(result.code, 125);
  EXPECT_NE(result.err.find("is mode 0705; it must be 0700"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace sandbox_host
