// `sandbox-host run --learn` end to end: real programs no one here wrote (python3, curl,
// git, openssl) run with --learn under a Spec that lacks what they need, as root and as
// nobody, under namespaces and under landlock. The config lines the report prints are
// parsed from its output and written into the config; the program then works, a second
// --learn finds nothing left to grant, and the escape corpus's secret stays unreadable to a
// plugin of that name under the learned config.
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::kNobody;
using test::ProcessResult;

struct Case {
  const char *backend;
  bool nobody;
};

void PrintTo(const Case &c, std::ostream *out) {
  *out << c.backend << (c.nobody ? " as nobody" : " as root");
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return std::string(info.param.backend) + (info.param.nobody ? "_nobody" : "_root");
}

// The tables of the report's "Config lines that grant this" block: table -> its lines.
using Tables = std::map<std::string, std::vector<std::string>>;

Tables learned_tables(const std::string &err) {
  Tables tables;
  const auto start = err.find("\nConfig lines that grant this");
  if (start == std::string::npos) return tables;
  std::istringstream in(err.substr(start + 1));
  std::string line, table;
  std::getline(in, line);  // the heading
  static const std::regex header(R"(^\[([^\]]+)\]$)"), key(R"(^[a-z_]+ = .*$)");
  std::smatch match;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (std::regex_match(line, match, header)) {
      table = match[1];
    } else if (!table.empty() && std::regex_match(line, key)) {
      tables[table].push_back(line);
    } else {
      break;  // the notes after the block
    }
  }
  return tables;
}

// base, with each learned line replacing the line of its key or added.
Tables merged(Tables base, const Tables &learned) {
  for (const auto &[table, lines] : learned) {
    auto &into = base[table];
    for (const auto &line : lines) {
      const std::string key = line.substr(0, line.find(" = "));
      auto same = std::find_if(into.begin(), into.end(),
                               [&](const std::string &l) { return l.starts_with(key + " = "); });
      if (same != into.end()) {
        *same = line;
      } else {
        into.push_back(line);
      }
    }
  }
  return base;
}

std::string toml(const Tables &tables) {
  std::string out;
  for (const auto &[table, lines] : tables) {
    out += "[" + table + "]\n";
    for (const auto &line : lines) out += line + "\n";
    out += "\n";
  }
  return out;
}

// The plugin's name in its table's header: plugins.demo, or plugins."python3.11".
std::string plugin_of(const Tables &tables) {
  for (const auto &[table, lines] : tables) {
    if (!table.starts_with("plugins.")) continue;
    std::string name = table.substr(8);
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
      name = name.substr(1, name.size() - 2);
    }
    return name;
  }
  return {};
}

// The table's header as the report writes it.
std::string table_of(const Tables &tables) {
  for (const auto &[table, lines] : tables) {
    if (table.starts_with("plugins.")) return table;
  }
  return {};
}

constexpr fs::perms kShared = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec;

bool installed(const char *program) {
  return ::access(program, X_OK) == 0;
}

class LearnRun : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    // Below /var/tmp: the namespaces backend gives a plugin a /tmp of its own.
    char pattern[] = "/var/tmp/learn-run-XXXXXX";
    workspace_ = ::mkdtemp(pattern);
    fs::permissions(workspace_, kShared);
    escape_plugin_ = test::shared_install().add_binary(ESCAPE_PLUGIN);
    // Where the launching user writes the JSON report.
    out_ = directory("out");
    if (nobody()) {
      ASSERT_EQ(::chown(out_.c_str(), kNobody, kNobody), 0);
    }
  }
  void TearDown() override {
    std::error_code ignored;
    if (!workspace_.empty()) fs::remove_all(workspace_, ignored);
    if (!secret_root_.empty()) fs::remove_all(secret_root_, ignored);
  }

  const char *backend() const { return GetParam().backend; }
  bool nobody() const { return GetParam().nobody; }

  // A directory of the workspace, readable by the launching user, granted to nobody.
  fs::path directory(const std::string &name) const {
    const fs::path dir = workspace_ / name;
    fs::create_directories(dir);
    fs::permissions(dir, kShared);
    return dir;
  }
  void write(const fs::path &path, const std::string &contents) const {
    std::ofstream(path) << contents;
    fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);
  }

  // sandbox-host run with config (its text), --learn when learn, then argv.
  ProcessResult run(const Tables &config, bool learn, const std::vector<std::string> &argv,
                    const std::vector<std::string> &options = {}) {
    const fs::path file = workspace_ / ("config-" + std::to_string(++configs_) + ".toml");
    write(file, toml(config));
    std::vector<std::string> command;
    if (nobody()) command = test::as_nobody();
    command.push_back(nobody() ? test::shared_install().sandbox_host() : SANDBOX_HOST_EXE);
    for (const std::string &arg : {std::string("run"), std::string("--config"), file.string()}) {
      command.push_back(arg);
    }
    if (learn) {
      command.push_back("--learn");
      command.push_back("--learn-json");
      command.push_back((out_ / "learn.json").string());
    }
    command.insert(command.end(), options.begin(), options.end());
    command.push_back("--");
    command.insert(command.end(), argv.begin(), argv.end());
    test::ProcessOptions process = test::with_env(
        {"PATH=/usr/bin:/bin", std::string("CLAWPATROL_SANDBOX_BACKEND=") + backend()});
    process.timeout = 60s;
    process.cwd = "/";
    return test::run_process(command, process);
  }

  // Learns what argv needs beyond base, applies it, and checks that argv then works and a
  // second --learn finds nothing more to grant. Returns the learned config.
  Tables learn_and_apply(const Tables &base, const std::vector<std::string> &argv,
                         const std::string &expected_read) {
    const ProcessResult before = run(base, true, argv);
    const Tables learned = learned_tables(before.err);
    const std::string plugin = plugin_of(learned);
    EXPECT_FALSE(plugin.empty()) << before.err;
    const std::string table = table_of(learned);
    const auto &lines = learned.count(table) ? learned.at(table) : std::vector<std::string>{};
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string &line) {
      return line.starts_with("read = ") && line.find(expected_read) != std::string::npos;
    })) << before.err;
    EXPECT_TRUE(fs::exists(out_ / "learn.json"));
    const Tables applied = merged(base, learned);
    const ProcessResult after = run(applied, false, argv);
    EXPECT_EQ(after.code, 0) << toml(applied) << "stdout:\n"
                             << after.out << "stderr:\n"
                             << after.err;
    const ProcessResult again = run(applied, true, argv);
    EXPECT_EQ(learned_tables(again.err).count(table), 0u) << again.err;
    EXPECT_NE(again.err.find("--learn: plugin"), std::string::npos) << again.err;
    expect_secret_unreadable(applied, plugin);
    return applied;
  }

  // The escape corpus's secret (in root's home, or a file of nobody's of its own) stays
  // unreadable to a plugin of that name under the config.
  void expect_secret_unreadable(const Tables &config, const std::string &plugin) {
    const std::string suffix = std::to_string(::getpid()) + "-" + std::to_string(configs_);
    if (nobody()) {
      secret_root_ = "/var/tmp/learn-secret-" + suffix;
      secret_ = secret_root_ / ".ssh/id_ed25519";
      fs::create_directories(secret_.parent_path());
      for (const auto &dir : {secret_.parent_path().parent_path(), secret_.parent_path()}) {
        fs::permissions(dir, kShared);
        ASSERT_EQ(::chown(dir.c_str(), kNobody, kNobody), 0);
      }
    } else {
      secret_root_ = "/root/.learn-secret-" + suffix;
      secret_ = secret_root_ / "id_ed25519";
      fs::create_directories(secret_.parent_path());
    }
    write(secret_, "learn-secret\n");
    for (const std::vector<std::string> &attempt :
         {std::vector<std::string>{"read", secret_.string()},
          std::vector<std::string>{"list", secret_.parent_path().string()},
          std::vector<std::string>{"read", "/etc/shadow"}}) {
      std::vector<std::string> argv{escape_plugin_};
      argv.insert(argv.end(), attempt.begin(), attempt.end());
      const ProcessResult result = run(config, false, argv, {"--name", plugin});
      EXPECT_TRUE(result.out.starts_with("DENIED"))
          << attempt[0] << " " << attempt[1] << ": " << result.out << result.err;
    }
  }

  fs::path workspace_;
  fs::path out_;
  fs::path secret_, secret_root_;  // the secret, and the directory it is made in
  std::string escape_plugin_;
  int configs_ = 0;
};

TEST_P(LearnRun, Python3ImportsModulesFromADirectoryOutsideTheSpec) {
  if (!installed("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is not installed";
  const fs::path lib = directory("lib");
  for (const char *name : {"alpha", "beta", "gamma"}) {
    write(lib / (std::string(name) + ".py"), "VALUE = 1\n");
  }
  const std::vector<std::string> argv = {"/usr/bin/python3", "-B", "-c",
                                         "import sys, ssl; sys.path.insert(0, '" + lib.string() +
                                             "'); import alpha, beta, gamma; print('imported')"};
  learn_and_apply({}, argv, lib.string());
}

TEST_P(LearnRun, OpensslReadsACertificateOutsideTheSpec) {
  if (!installed("/usr/bin/openssl")) GTEST_SKIP() << "/usr/bin/openssl is not installed";
  const fs::path certs = directory("certs");
  const ProcessResult made = test::run_process(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=learn", "-days", "1", "-keyout",
       (certs / "key.pem").string(), "-out", (certs / "cert.pem").string()});
  ASSERT_EQ(made.code, 0) << made.err;
  fs::permissions(certs / "cert.pem",
                  fs::perms::owner_read | fs::perms::others_read | fs::perms::group_read);
  learn_and_apply(
      {}, {"/usr/bin/openssl", "x509", "-in", (certs / "cert.pem").string(), "-noout", "-subject"},
      (certs / "cert.pem").string());
}

// /etc/gitconfig, where the host has one, is no system grant: git works without it, and
// --learn names it.
TEST_P(LearnRun, GitVersionNeedsOnlyWhatTheHostConfiguresForIt) {
  if (!installed("/usr/bin/git")) GTEST_SKIP() << "/usr/bin/git is not installed";
  const std::vector<std::string> argv = {"/usr/bin/git", "--version"};
  if (fs::exists("/etc/gitconfig")) {
    learn_and_apply({}, argv, "/etc/gitconfig");
  } else {
    const ProcessResult result = run({}, true, argv);
    EXPECT_TRUE(learned_tables(result.err).empty()) << result.err;
  }
}

// A free loopback port, for a server the test starts.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool connectable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

// curl needs the CA store that signed the server: the system's (/etc/ssl/certs) is a system
// grant, a test CA's bundle in a directory of its own is not. The server is an openssl
// s_server on the host's loopback, reached with network outbound; under network none the
// report names the connection instead (namespaces; Landlock's filter refuses the socket
// before any call is traced).
TEST_P(LearnRun, CurlNeedsTheCaBundleThatSignedTheServer) {
  for (const char *program : {"/usr/bin/curl", "/usr/bin/openssl"}) {
    if (!installed(program)) GTEST_SKIP() << program << " is not installed";
  }
  const fs::path ca = directory("ca");
  const fs::path server = directory("server");
  auto openssl = [](const std::vector<std::string> &args) {
    std::vector<std::string> argv{"/usr/bin/openssl"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult result = test::run_process(argv);
    EXPECT_EQ(result.code, 0) << result.err;
  };
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-subj", "/CN=learn test CA", "-days", "1", "-keyout", (ca / "ca.key").string(), "-out",
           (ca / "ca.pem").string()});
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
           "/CN=localhost", "-keyout", (server / "key.pem").string(), "-out",
           (server / "req.pem").string()});
  write(server / "ext.cnf", "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl({"x509", "-req", "-in", (server / "req.pem").string(), "-CA", (ca / "ca.pem").string(),
           "-CAkey", (ca / "ca.key").string(), "-CAcreateserial", "-days", "1", "-extfile",
           (server / "ext.cnf").string(), "-out", (server / "cert.pem").string()});
  fs::permissions(ca / "ca.pem",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  const int port = free_port();
  test::RunningProcess s_server({"/usr/bin/openssl", "s_server", "-quiet", "-www", "-accept",
                                 "127.0.0.1:" + std::to_string(port), "-cert",
                                 (server / "cert.pem").string(), "-key",
                                 (server / "key.pem").string()});
  for (int i = 0; i < 200 && !connectable(port); ++i) std::this_thread::sleep_for(25ms);
  ASSERT_TRUE(connectable(port));
  const std::vector<std::string> curl = {"/usr/bin/curl",
                                         "-sS",
                                         "--max-time",
                                         "10",
                                         "--cacert",
                                         (ca / "ca.pem").string(),
                                         "https://localhost:" + std::to_string(port) + "/"};
  const Tables base = {{"plugins.curl", {"network = \"outbound\""}}};
  const Tables applied = learn_and_apply(base, curl, (ca / "ca.pem").string());
  if (std::string(backend()) != "namespaces") return;

  // Network none: the connection to the host's server is named, with the lines that let it
  // out through the egress proxy; applied, with the proxy running as the launching user,
  // curl reaches the server through it, and a second --learn finds nothing more.
  const fs::path state = directory("state"), runtime = directory("run");
  if (nobody()) {
    for (const auto &dir : {state, runtime}) ASSERT_EQ(::chown(dir.c_str(), kNobody, kNobody), 0);
  }
  fs::permissions(runtime, fs::perms::owner_all);
  Tables closed = applied;
  closed["plugins.curl"].erase(closed["plugins.curl"].begin());  // network outbound
  closed["broker"] = {"state_dir = \"" + state.string() + "\""};
  closed["egress"] = {"listen = \"127.0.0.1:" + std::to_string(free_port()) + "\"",
                      "socket = \"" + (state / "egress.sock").string() + "\"",
                      "runtime_dir = \"" + runtime.string() + "\""};
  const ProcessResult none = run(closed, true, curl);
  EXPECT_NE(none.code, 0);
  const Tables learned = learned_tables(none.err);
  ASSERT_EQ(learned.count("plugins.curl"), 1u) << none.err;
  EXPECT_EQ(learned.at("plugins.curl"), std::vector<std::string>{"network = \"proxied\""});
  ASSERT_EQ(learned.count("egress"), 1u) << none.err;
  // curl tries ::1 too where localhost has it; the IPv4 entry is what must be there.
  const auto &egress_lines = learned.at("egress");
  ASSERT_EQ(egress_lines.size(), 2u) << none.err;
  EXPECT_TRUE(egress_lines[0].starts_with("allow = [\"localhost:" + std::to_string(port) + "\""))
      << none.err;
  EXPECT_TRUE(egress_lines[1].starts_with("allow_addresses = [\"127.0.0.1\"")) << none.err;

  const Tables proxied = merged(closed, learned);
  const fs::path proxy_config = workspace_ / "proxy.toml";
  write(proxy_config, toml(proxied));
  std::vector<std::string> egress;
  if (nobody()) egress = test::as_nobody();
  egress.insert(egress.end(), {nobody() ? test::shared_install().sandbox_host() : SANDBOX_HOST_EXE,
                               "egress", "--config", proxy_config.string()});
  test::RunningProcess proxy(egress);
  for (int i = 0; i < 200 && !fs::exists(state / "egress.sock"); ++i) {
    std::this_thread::sleep_for(25ms);
  }
  ASSERT_TRUE(fs::exists(state / "egress.sock"));
  const ProcessResult through = run(proxied, false, curl);
  EXPECT_EQ(through.code, 0) << toml(proxied) << through.out << through.err;
  const ProcessResult again = run(proxied, true, curl);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(learned_tables(again.err).empty()) << again.err;
}

INSTANTIATE_TEST_SUITE_P(BackendAndUser, LearnRun,
                         ::testing::Values(Case{"namespaces", false}, Case{"namespaces", true},
                                           Case{"landlock", false}, Case{"landlock", true}),
                         case_name);

TEST(LearnCli, RunsHelpNamesTheFlags) {
  const ProcessResult help = test::run_process({SANDBOX_HOST_EXE, "run", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--learn "), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--learn-json FILE"), std::string::npos) << help.out;
}

TEST(LearnCli, RefusesLaunchesItCannotLearnFrom) {
  for (const auto &[args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--learn", "--via", "/nonexistent.sock"}, "--learn and --via"},
           {{"--learn", "--prepared"}, "--learn and --prepared"},
           {{"--learn", "--policy", "/nonexistent.toml"}, "--learn and --policy"},
           {{"--learn-json", "/dev/null", "--via", "/x"}, "--learn and --via"},
           {{"--learn", "--backend", "off"}, "--learn: backend off"}}) {
    std::vector<std::string> argv{SANDBOX_HOST_EXE, "run"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    const ProcessResult result = test::run_process(argv);
    EXPECT_EQ(result.code, 125) << result.err;
    EXPECT_NE(result.err.find(expected), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace sandbox_host
