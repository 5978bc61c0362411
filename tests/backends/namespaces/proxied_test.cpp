// Network proxied under the namespaces backend, through the real `sandbox-host run`, as
// root and as nobody, each cold and prepared: the plugin's only way out is the egress proxy
// (here a stand-in on a unix socket the test makes), reached as 127.0.0.1:<port> inside,
// with the proxy variables and the CA bundle set and nothing else of the host's network.
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "process.hpp"
#include "stand_in_proxy.hpp"

#include <sandbox_host/host/policy/agent_env.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host {
namespace {

using namespace test::escape;
using test::ProcessResult;
using test::Requests;
using test::StandInProxy;

namespace fs = std::filesystem;

// The port inside that leads to the proxy: the config's listen port.
constexpr int kPort = 8118;

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The interfaces /proc/<pid>/net/dev lists: the network namespace's.
std::set<std::string> interfaces_in(const std::string &net_dev) {
  std::set<std::string> names;
  for (const auto &line : lines_of(net_dev)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.find('|') != std::string::npos) continue;
    const size_t start = line.find_first_not_of(' ');
    names.insert(line.substr(start, colon - start));
  }
  return names;
}

class ProxiedNetwork : public EscapeCorpus {
 protected:
  const char *backend() const override { return "namespaces"; }

  void SetUp() override {
    EscapeCorpus::SetUp();
    if (IsSkipped()) return;
    // The proxy's side, all of it readable by the launching user: its socket, and the
    // egress directory under the runtime directory the config names.
    fs::create_directories(egress_dir());
    write_file(egress_dir() / "bundle.pem", kBundle, kWorldReadable);
    for (const fs::path &dir :
         {runtime_dir(), runtime_dir() / "clawpatrol-sandbox", egress_dir()}) {
      fs::permissions(dir, kWorldReadableDir);
    }
    // The launching user's own, so that only the sandbox stands in the way of writing.
    hand_to_user(egress_dir());
    hand_to_user(egress_dir() / "bundle.pem");
    write_config(socket_path(), kPort);
  }

  void write_config(const fs::path &socket, int port) const {
    std::ofstream(config_.path()) << "[plugins.escape]\n\n[egress]\nallow = [\"example.test\"]\n"
                                  << "socket = \"" << socket.string() << "\"\n"
                                  << "runtime_dir = \"" << runtime_dir().string() << "\"\n"
                                  << "listen = \"127.0.0.1:" << port << "\"\n";
  }

  fs::path socket_path() const { return proxy_home_.dir() / "egress.sock"; }
  fs::path runtime_dir() const { return proxy_home_.dir() / "run"; }
  fs::path egress_dir() const { return runtime_dir() / "clawpatrol-sandbox/egress"; }

  static Launch proxied() {
    Launch launch;
    launch.network = "proxied";
    return launch;
  }

  ProcessResult curl(const std::vector<std::string> &args) const {
    return run("/usr/bin/curl", args, proxied());
  }

  static constexpr const char *kBundle = "-----BEGIN CERTIFICATE-----\nstand-in\n";
  test::TempFile proxy_home_{"", "unused"};
  Requests seen_;
};

TEST_P(ProxiedNetwork, CurlReachesTheProxyThroughHttpProxy) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  const ProcessResult result = curl({"-sS", "http://example.test/x"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "stand-in saw GET http://example.test/x HTTP/1.1\n");
  const auto heads = seen_.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_TRUE(heads[0].starts_with("GET http://example.test/x HTTP/1.1\r\n")) << heads[0];
  EXPECT_NE(heads[0].find("\r\nHost: example.test\r\n"), std::string::npos) << heads[0];
  // The proxy knows the launching user by the kernel's word (SO_PEERCRED).
  EXPECT_EQ(seen_.uids(), std::vector<uid_t>{uid()});
}

TEST_P(ProxiedNetwork, HttpsAsksForATunnelAndAllProxySpeaksSocks5h) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  // The stand-in answers CONNECT with a plain answer, so the TLS that follows fails; what
  // matters is that the request came as CONNECT, through HTTPS_PROXY.
  const ProcessResult https = curl({"-sS", "https://example.test/secure"});
  EXPECT_NE(https.code, 0);
  // Without the HTTP variables, curl takes ALL_PROXY: SOCKS5 with the name left to the proxy.
  const ProcessResult socks =
      run("/bin/sh", {"-c", "unset HTTP_PROXY http_proxy; exec curl -sS http://example.test/socks"},
          proxied());
  EXPECT_EQ(socks.code, 0) << socks.err;
  EXPECT_EQ(socks.out, "stand-in saw GET /socks HTTP/1.1\n");
  const auto heads = seen_.heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_TRUE(heads[0].starts_with("CONNECT example.test:443 HTTP/1.1\r\n")) << heads[0];
  EXPECT_TRUE(heads[1].starts_with("socks5h example.test:80\nGET /socks HTTP/1.1\r\n")) << heads[1];
}

TEST_P(ProxiedNetwork, OnlyLoopbackExistsInAnEmptyNetworkNamespace) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  const ProcessResult devices = run("/bin/cat", {"/proc/self/net/dev"}, proxied());
  ASSERT_EQ(devices.code, 0) << devices.err;
  EXPECT_EQ(interfaces_in(devices.out), std::set<std::string>{"lo"}) << devices.out;
  const ProcessResult inside = run("/bin/readlink", {"/proc/self/ns/net"}, proxied());
  ASSERT_EQ(inside.code, 0) << inside.err;
  const std::string host_namespace = fs::read_symlink("/proc/self/ns/net").string() + "\n";
  EXPECT_TRUE(inside.out.starts_with("net:[")) << inside.out;
  EXPECT_NE(inside.out, host_namespace);

  // What the same reads show with network outbound: the host's own namespace.
  Launch outbound;
  outbound.network = "outbound";
  const ProcessResult host_devices = run("/bin/cat", {"/proc/self/net/dev"}, outbound);
  EXPECT_EQ(interfaces_in(host_devices.out), interfaces_in(slurp("/proc/self/net/dev")));
  EXPECT_EQ(run("/bin/readlink", {"/proc/self/ns/net"}, outbound).out, host_namespace);
}

TEST_P(ProxiedNetwork, NothingButTheRelayLeavesTheNamespace) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  std::unique_ptr<Listener> tcp;
  const int host_port = listen_inet(tcp);
  ASSERT_GT(host_port, 0);
  // The loopback inside is the sandbox's own: a listener on the host's is not there, and
  // the one port that answers is the relay's.
  EXPECT_TRUE(DeniedWith(
      attempt({"connect-tcp", "127.0.0.1", std::to_string(host_port)}, proxied()), "ECONNREFUSED"));
  EXPECT_TRUE(Allowed(attempt({"connect-tcp", "127.0.0.1", std::to_string(kPort)}, proxied())));
  // No route leaves the namespace.
  EXPECT_TRUE(DeniedWith(attempt({"connect-tcp", "192.0.2.1", "80"}, proxied()), "ENETUNREACH"));
  // The host's unix sockets outside the grants are not in the tree.
  test::TempFile socket_home("", "unused");
  std::unique_ptr<Listener> unix_socket;
  const std::string host_socket = (socket_home.dir() / "host.sock").string();
  ASSERT_TRUE(listen_unix(unix_socket, host_socket, false));
  EXPECT_TRUE(DeniedWith(attempt({"connect-unix", host_socket}, proxied()), "ENOENT"));
  EXPECT_TRUE(seen_.heads().empty());
}

TEST_P(ProxiedNetwork, TheEnvironmentIsBaseEnvAndTheProxyVariables) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  auto variables_of = [](const Attempt &env) {
    std::vector<std::string> variables;
    for (const auto &line : env.extra) variables.push_back(line.substr(std::string("env ").size()));
    return variables;
  };
  const std::string tmp = tmp_dir().string();
  const std::string http = "http://127.0.0.1:" + std::to_string(kPort);
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(kPort);
  const std::vector<std::string> base_and_proxy{"PATH=/usr/local/bin:/usr/bin:/bin",
                                                "LANG=C.UTF-8",
                                                "HOME=" + tmp,
                                                "TMPDIR=" + tmp,
                                                "HTTP_PROXY=" + http,
                                                "HTTPS_PROXY=" + http,
                                                "http_proxy=" + http,
                                                "https_proxy=" + http,
                                                "ALL_PROXY=" + socks,
                                                "all_proxy=" + socks,
                                                "NO_PROXY=",
                                                "no_proxy="};
  const std::string bundle = (egress_dir() / "bundle.pem").string();
  const std::string dir = egress_dir().string();
  std::vector<std::string> with_bundle = base_and_proxy;
  with_bundle.insert(
      with_bundle.end(),
      {"SSL_CERT_FILE=" + bundle, "CURL_CA_BUNDLE=" + bundle, "GIT_SSL_CAINFO=" + bundle,
       "REQUESTS_CA_BUNDLE=" + bundle, "NODE_EXTRA_CA_CERTS=" + dir + "/ca.pem",
       "GH_CONFIG_DIR=" + dir + "/gh", "GIT_CONFIG_KEY_0=url.https://github.com/.insteadOf",
       "GIT_CONFIG_VALUE_0=git@github.com:", "GIT_CONFIG_KEY_1=url.https://github.com/.insteadOf",
       "GIT_CONFIG_VALUE_1=ssh://git@github.com/",
       "GIT_CONFIG_KEY_2=credential.https://github.com.helper", "GIT_CONFIG_VALUE_2=",
       "GIT_CONFIG_KEY_3=gpg.program", "GIT_CONFIG_VALUE_3=" + dir + "/gpg", "GIT_CONFIG_COUNT=4"});

  const Attempt env = attempt({"env"}, proxied());
  ASSERT_TRUE(Allowed(env));
  EXPECT_EQ(variables_of(env), with_bundle);
  // A policy's command is pointed at the same files the same way (issue 20: the two had
  // drifted, NODE_EXTRA_CA_CERTS and gh's and git's settings).
  const auto variables = variables_of(env);
  for (const auto &[name, value] : policy::egress_vars(dir)) {
    EXPECT_NE(std::find(variables.begin(), variables.end(), name + "=" + value), variables.end())
        << name << " differs between a proxied plugin and a policy's command";
  }
  // The bundle is there to read, and nothing in the egress directory can be written.
  const Attempt read = attempt({"read", bundle}, proxied());
  EXPECT_TRUE(Allowed(read));
  EXPECT_EQ(read.verdict, "ALLOWED -----BEGIN CERTIFICATE-----.stand-in.");
  EXPECT_TRUE(DeniedWith(attempt({"write", bundle}, proxied()), "EROFS"));
  EXPECT_TRUE(DeniedWith(attempt({"write", (egress_dir() / "new").string()}, proxied()), "EROFS"));
  EXPECT_FALSE(fs::exists(egress_dir() / "new"));

  // Without an egress directory, no variable points at a bundle that is not there.
  fs::remove_all(runtime_dir() / "clawpatrol-sandbox");
  const Attempt plain = attempt({"env"}, proxied());
  ASSERT_TRUE(Allowed(plain));
  EXPECT_EQ(variables_of(plain), base_and_proxy);
}

TEST_P(ProxiedNetwork, ManyConnectionsOneAfterAnotherAndSideBySide) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  // curl's URL globbing: 200 transfers, each on its own connection (the stand-in closes).
  const ProcessResult one_by_one = curl({"-sS", "-o", "/dev/null", "-w", "%{http_code}\\n",
                                         "http://example.test/sequential/[1-200]"});
  EXPECT_EQ(one_by_one.code, 0) << one_by_one.err;
  EXPECT_EQ(lines_of(one_by_one.out), std::vector<std::string>(200, "200"));
  const ProcessResult side_by_side =
      curl({"-sS", "--parallel", "--parallel-immediate", "--parallel-max", "50", "-o", "/dev/null",
            "-w", "%{http_code}\\n", "http://example.test/parallel/[1-200]"});
  EXPECT_EQ(side_by_side.code, 0) << side_by_side.err;
  EXPECT_EQ(lines_of(side_by_side.out), std::vector<std::string>(200, "200"));

  // Each request reached the proxy exactly once.
  std::multiset<std::string> lines;
  for (const auto &head : seen_.heads()) lines.insert(head.substr(0, head.find("\r\n")));
  EXPECT_EQ(lines.size(), 400u);
  for (const char *kind : {"sequential", "parallel"}) {
    for (int i = 1; i <= 200; ++i) {
      const std::string line =
          "GET http://example.test/" + std::string(kind) + "/" + std::to_string(i) + " HTTP/1.1";
      EXPECT_EQ(lines.count(line), 1u) << line;
    }
  }
}

TEST_P(ProxiedNetwork, APortBelow1024Works) {
  StandInProxy proxy(socket_path().string(), test::http_responder(seen_));
  write_config(socket_path(), 80);
  const ProcessResult result = run(
      "/bin/sh", {"-c", "echo \"$HTTP_PROXY\"; exec curl -sS http://example.test/low"}, proxied());
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "http://127.0.0.1:80\nstand-in saw GET http://example.test/low HTTP/1.1\n");
}

TEST_P(ProxiedNetwork, TheLaunchIsRefusedWithoutTheProxysSocket) {
  const fs::path missing = proxy_home_.dir() / "not-there.sock";
  write_config(missing, kPort);
  const ProcessResult result = run("/usr/bin/curl", {"-sS", "http://example.test/"}, proxied());
  EXPECT_EQ(result.code, 87) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "clawpatrol-sandbox: proxy: the egress proxy's socket " + missing.string() +
                            " does not exist; start the egress proxy (sandbox-host egress or "
                            "serve), or set [egress] socket to the one it listens on\n");

  // A file that is no socket is refused as well.
  write_file(missing, "", kWorldReadable);
  const ProcessResult not_a_socket =
      run("/usr/bin/curl", {"-sS", "http://example.test/"}, proxied());
  EXPECT_EQ(not_a_socket.code, 87) << not_a_socket.err;
  EXPECT_EQ(not_a_socket.err, "clawpatrol-sandbox: proxy: the egress proxy's socket " +
                                  missing.string() + " is not a unix socket\n");
}

TEST_P(ProxiedNetwork, TheLaunchIsRefusedWithoutAnEgressTable) {
  std::ofstream(config_.path()) << "[plugins.escape]\n";
  const ProcessResult result = run("/usr/bin/curl", {"-sS", "http://example.test/"}, proxied());
  EXPECT_EQ(result.code, 125) << result.err;
  EXPECT_NE(
      result.err.find("network proxied goes through the egress proxy, and " +
                      config_.path().string() + " has no [egress] table to say where it listens"),
      std::string::npos)
      << result.err;
}

// An HTTP server on the host's loopback: answers each request with the line it got.
class LoopbackHttp {
 public:
  LoopbackHttp() {
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof(address);
    if (::bind(listener_.get(), reinterpret_cast<sockaddr *>(&address), size) != 0 ||
        ::listen(listener_.get(), 16) != 0 ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&address), &size) != 0) {
      throw std::runtime_error("loopback http: bind");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        pollfd p{listener_.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!client) continue;
        const std::string head = test::read_head(client.get());
        const std::string body = "upstream saw " + head.substr(0, head.find("\r\n")) + "\n";
        test::send_all(client.get(),
                       "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\n" + body);
      }
    });
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  UniqueFd listener_;
  std::uint16_t port_ = 0;
  std::jthread thread_;
};

// [egress] implementation names an egress module (the SDK's example, connect): the launch
// is routed where the module says, and what the module allows or refuses is what the
// plugin gets, run by the real `sandbox-host egress` as the launching user.
TEST_P(ProxiedNetwork, AnEgressModuleServesTheLaunchOnTheRouteItGives) {
  LoopbackHttp upstream;
  LoopbackHttp other;
  // The backend and the module where the launching user can load them.
  test::TempFile modules("", "unused");
  fs::permissions(modules.dir(), kWorldReadableDir);
  for (const fs::path &module : {fs::path(BUILD_MODULE_DIR) / "backend_namespaces.so",
                                 fs::path(TEST_MODULE_DIR) / "egress_connect.so"}) {
    fs::copy_file(module, modules.dir() / module.filename());
    fs::permissions(modules.dir() / module.filename(), kWorldReadableDir);
  }
  // The module binds its socket as the launching user, in a directory of the user's.
  fs::permissions(proxy_home_.dir(), kWorldReadableDir);
  const fs::path place = proxy_home_.dir() / "connect";
  fs::create_directory(place);
  hand_to_user(place);
  const fs::path socket = place / "connect.sock";
  std::ofstream(config_.path()) << "module_dirs = [\"" << modules.dir().string() << "\"]\n"
                                << "[plugins.escape]\n\n[egress]\nimplementation = \"connect\"\n"
                                << "\n[egress.connect]\nsocket = \"" << socket.string() << "\"\n"
                                << "allow = [\"" << upstream.address() << "\"]\n"
                                << "port = " << kPort << "\n";
  std::vector<std::string> serve;
  if (!root()) serve = test::as_nobody();
  for (const std::string &arg :
       {sandbox_host(), std::string("egress"), std::string("--config"), config_.path().string()}) {
    serve.push_back(arg);
  }
  test::RunningProcess egress(serve, test::with_env(host_env()));
  ASSERT_TRUE(test::eventually([&] { return fs::exists(socket); }, std::chrono::seconds(10)));

  // -p: curl asks for a CONNECT tunnel for plain HTTP too.
  const ProcessResult allowed =
      curl({"-sS", "-p", "--max-time", "10", "http://" + upstream.address() + "/through"});
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, "upstream saw GET /through HTTP/1.1\n");
  const ProcessResult refused =
      curl({"-sS", "-p", "--max-time", "10", "http://" + other.address() + "/"});
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("403"), std::string::npos) << refused.err;

  ASSERT_EQ(::kill(egress.pid(), SIGTERM), 0);
  const ProcessResult stopped = egress.wait(std::chrono::seconds(10));
  EXPECT_EQ(stopped.code, 0) << stopped.err;
  EXPECT_NE(
      stopped.err.find("sandbox-host egress: egress module connect 0.1.0 on " + socket.string()),
      std::string::npos)
      << stopped.err;
  // The refusal, in the host's audit sink (stderr), naming the rule and the target.
  EXPECT_NE(stopped.err.find("CONNECT " + other.address()), std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find("allow"), std::string::npos) << stopped.err;
  EXPECT_FALSE(fs::exists(socket));
}

INSTANTIATE_TEST_SUITE_P(AsUser, ProxiedNetwork, kEveryCase, case_name);

}  // namespace
}  // namespace sandbox_host
