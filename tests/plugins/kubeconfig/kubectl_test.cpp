// kubectl in a real proxied sandbox (namespaces backend), as nobody and as root, reaching a
// lab's API server on the host's loopback through the kubeconfig the broker's kubeconfig
// op wrote, and through nothing else: the sandbox's SOCKS5 entry, the egress proxy (in this
// process) and its allow list. The API server is a stand-in (fixtures/api_server.py) with
// the test's CA that asks kubectl for the kubeconfig's client certificate and logs which
// process each connection came from.
#include "served_broker.hpp"

#include <sandbox_host/egress/proxy/proxy_server.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char *kKubectl = "/usr/bin/kubectl";
constexpr const char *kLease = "lab-1";

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const fs::path &path, const std::string &text, fs::perms mode, unsigned owner) {
  std::ofstream(path, std::ios::binary) << text;
  fs::permissions(path, mode);
  if (::chown(path.c_str(), owner, owner) != 0) throw std::runtime_error("chown " + path.string());
}

std::string must(const std::vector<std::string> &argv) {
  const ProcessResult result = run_process(argv);
  if (result.code != 0) {
    std::string line;
    for (const auto &arg : argv) line += arg + " ";
    throw std::runtime_error("test setup failed: " + line + ": " + result.err);
  }
  return result.out;
}

// A lab as kind leaves it: a CA, the API server's certificate for 127.0.0.1, the admin's
// client certificate, the server itself on a port of its own, and the lease's kubeconfig.
class Lab {
 public:
  explicit Lab(const fs::path &dir) : dir_(dir) {
    const std::vector<std::string> key{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                       "-nodes"};
    std::vector<std::string> ca{"/usr/bin/openssl", "req", "-x509"};
    ca.insert(ca.end(), key.begin(), key.end());
    ca.insert(ca.end(), {"-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2", "-subj",
                         "/CN=kubernetes", "-addext", "basicConstraints=critical,CA:TRUE",
                         "-addext", "keyUsage=critical,keyCertSign"});
    must(ca);
    issue("server", "/CN=kube-apiserver",
          "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    issue("admin", "/O=kubeadm:cluster-admins/CN=kubernetes-admin",
          "extendedKeyUsage=clientAuth\n");
    const fs::path ready = dir_ / "api.ready";
    server_ = std::make_unique<RunningProcess>(std::vector<std::string>{
        "/usr/bin/python3", API_SERVER_SCRIPT, "--address", "127.0.0.1", "--cert",
        path("server.pem"), "--key", path("server.key"), "--client-ca", path("ca.pem"), "--log",
        path("api.log"), "--ready", ready.string()});
    for (int attempt = 0; attempt < 200 && !fs::exists(ready); ++attempt) {
      std::this_thread::sleep_for(50ms);
    }
    if (!fs::exists(ready)) throw std::runtime_error("the stand-in API server did not start");
    port_ = static_cast<std::uint16_t>(std::stoi(read_file(ready)));
  }

  std::uint16_t port() const { return port_; }
  std::string server() const { return "https://127.0.0.1:" + std::to_string(port_); }

  // `kind get kubeconfig --name lab-1`, as the lab tooling keeps it for the lease.
  std::string kubeconfig() const {
    return "apiVersion: v1\n"
           "clusters:\n"
           "- cluster:\n"
           "    certificate-authority-data: " +
           base64("ca.pem") + "\n    server: " + server() +
           "\n"
           "  name: kind-lab-1\n"
           "contexts:\n"
           "- context:\n"
           "    cluster: kind-lab-1\n"
           "    user: kind-lab-1\n"
           "  name: kind-lab-1\n"
           "current-context: kind-lab-1\n"
           "kind: Config\n"
           "preferences: {}\n"
           "users:\n"
           "- name: kind-lab-1\n"
           "  user:\n"
           "    client-certificate-data: " +
           base64("admin.pem") + "\n    client-key-data: " + base64("admin.key") + "\n";
  }

  // The requests the API server answered: "<peer pid> <client CN> <path>" each.
  std::vector<std::string> requests() const { return lines(read_file(dir_ / "api.log")); }

 private:
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  std::string base64(const std::string &name) const {
    return must({"/usr/bin/base64", "-w0", path(name)});
  }

  void issue(const std::string &name, const std::string &subject, const std::string &extensions) {
    must({"/usr/bin/openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes", "-keyout", path(name + ".key"), "-out", path(name + ".csr"), "-subj", subject});
    std::ofstream(dir_ / (name + ".ext")) << extensions;
    must({"/usr/bin/openssl", "x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.pem"),
          "-CAkey", path("ca.key"), "-CAcreateserial", "-out", path(name + ".pem"), "-days", "2",
          "-extfile", path(name + ".ext")});
  }

  fs::path dir_;
  std::unique_ptr<RunningProcess> server_;
  std::uint16_t port_ = 0;
};

class KubectlInAProxiedSandbox : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "launches sandboxes as nobody and as root";
    if (!fs::exists(kKubectl)) {
      GTEST_SKIP() << kKubectl << " is not installed (Debian has no kubectl package)";
    }
    const unsigned user = GetParam();
    char pattern[] = "/tmp/kubectl-test-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = pattern;
    fs::permissions(dir_, fs::perms(0755));
    fs::create_directory(dir_ / "pki");
    lab_ = std::make_unique<Lab>(dir_ / "pki");

    for (const fs::path &made : {leases(), output(), raw()}) {
      fs::create_directory(made);
      fs::permissions(made, fs::perms(0755));
      if (::chown(made.c_str(), user, user) != 0) throw std::runtime_error("chown");
    }
    write_file(leases() / (std::string(kLease) + ".yaml"), lab_->kubeconfig(), fs::perms(0600),
               user);
    write_file(raw() / "lab-1.yaml", lab_->kubeconfig(), fs::perms(0600), user);

    start_proxy({"127.0.0.1:" + std::to_string(lab_->port())});
    // What `sandbox-host run` reads: where the proxy's socket is, and the port the sandbox's
    // SOCKS5 and HTTP entries listen on inside.
    sandbox_port_ = proxy_->port();
    write_file(dir_ / "run.toml",
               "[egress]\nlisten = \"127.0.0.1:" + std::to_string(sandbox_port_) +
                   "\"\nsocket = \"" + socket().string() + "\"\n",
               fs::perms(0644), 0);

    BrokerSetup setup = setup_for(user);
    setup.ops = {"ping", "kubeconfig"};
    setup.spool_in_sandbox_dir = true;
    setup.op_tables = "[ops.kubeconfig]\nleases_dir = \"" + leases().string() +
                      "\"\noutput_dir = \"" + output().string() +
                      "\"\nrequester_env = [\"ALL_PROXY\"]\n";
    broker_ = std::make_unique<ServedBroker>(setup);
  }

  void TearDown() override {
    broker_.reset();
    proxy_.reset();
    lab_.reset();
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  // The egress proxy, in this process, allowing only allow: its unix socket is what the
  // sandbox's entries forward to, and it serves the sandbox's user alone.
  void start_proxy(const std::vector<std::string> &allow) {
    proxy_.reset();
    egress::EgressOptions options;
    options.listen = egress::LoopbackEndpoint::parse("127.0.0.1:0");
    options.socket = socket();
    options.allow = egress::HostAllowList::parse(allow);
    options.addresses = egress::AddressPolicy::parse({"127.0.0.1/32"});
    options.same_user = GetParam();
    options.say = [this](const std::string &line) {
      std::lock_guard lock(said_mutex_);
      said_.push_back(line);
    };
    options.log = options.say;  // [egress] log_connections: the allowed ones too
    proxy_ = std::make_unique<egress::EgressProxy>(std::move(options));
    if (::chown(socket().c_str(), GetParam(), GetParam()) != 0) {
      throw std::runtime_error("chown " + socket().string());
    }
  }

  std::string said() const {
    std::lock_guard lock(said_mutex_);
    std::string text;
    for (const auto &line : said_) text += line + "\n";
    return text;
  }

  // script run by /bin/sh in a proxied sandbox of the namespaces backend, with $0 the
  // sandbox-host to ask with and $1 the broker's spool; the output directory and the raw
  // lease (for the control) are readable in it.
  ProcessResult in_sandbox(const std::string &script) const {
    std::vector<std::string> argv = broker_->as_user();
    for (const std::string &arg : {std::string("/usr/bin/env"),
                                   std::string("-i"),
                                   std::string("PATH=/usr/bin:/bin"),
                                   std::string("CLAWPATROL_SANDBOX_BACKEND=namespaces"),
                                   "HOME=" + broker_->sandbox_dir().string(),
                                   broker_->sandbox_host(),
                                   std::string("run"),
                                   std::string("--config"),
                                   (dir_ / "run.toml").string(),
                                   std::string("--network"),
                                   std::string("proxied"),
                                   std::string("--socket-dir"),
                                   broker_->sandbox_dir().string(),
                                   std::string("--read"),
                                   broker_->install().dir().string(),
                                   std::string("--read"),
                                   output().string(),
                                   std::string("--read"),
                                   raw().string(),
                                   std::string("--"),
                                   std::string("/bin/sh"),
                                   std::string("-c"),
                                   script,
                                   broker_->sandbox_host(),
                                   broker_->spool().string()}) {
      argv.push_back(arg);
    }
    ProcessOptions options;
    options.timeout = 90s;
    return run_process(argv, options);
  }

  fs::path leases() const { return dir_ / "leases"; }
  fs::path output() const { return dir_ / "kubeconfigs"; }
  fs::path raw() const { return dir_ / "raw"; }
  fs::path socket() const { return dir_ / "egress.sock"; }
  fs::path written() const { return output() / (std::string(kLease) + ".kubeconfig"); }
  std::string sandbox_proxy() const {
    return "socks5://127.0.0.1:" + std::to_string(sandbox_port_);
  }

  fs::path dir_;
  std::unique_ptr<Lab> lab_;
  std::unique_ptr<egress::EgressProxy> proxy_;
  std::uint16_t sandbox_port_ = 0;
  std::unique_ptr<ServedBroker> broker_;
  mutable std::mutex said_mutex_;
  std::vector<std::string> said_;
};

// The op's kubeconfig, asked for from inside the sandbox; then kubectl with it.
constexpr const char *kAskThenKubectl =
    "path=$(\"$0\" ask kubeconfig --resource lab-1 --spool \"$1\") || exit 3\n"
    "echo \"path=$path\"\n"
    "/usr/bin/kubectl --kubeconfig \"$path\" config view || exit 4\n"
    "exec /usr/bin/kubectl --kubeconfig \"$path\" get --raw /version\n";

TEST_P(KubectlInAProxiedSandbox, ReachesTheLabThroughTheSocksEntryAlone) {
  const ProcessResult result = in_sandbox(kAskThenKubectl);
  ASSERT_EQ(result.code, 0) << result.out << result.err << said();
  EXPECT_EQ(field(result.out, "path"), written().string()) << result.out;
  // kubectl itself reads the op's kubeconfig: the lab's cluster, now with the sandbox's proxy.
  EXPECT_TRUE(contains(result.out, "    proxy-url: " + sandbox_proxy() + "\n")) << result.out;
  EXPECT_TRUE(contains(result.out, "    server: " + lab_->server() + "\n")) << result.out;
  EXPECT_TRUE(contains(result.out, "\"gitVersion\": \"v1.32.0-standin\"")) << result.out;
  // The API server saw its peer as the egress proxy (this process), with the lease's
  // client certificate, and nothing else connected.
  const auto requests = lab_->requests();
  ASSERT_FALSE(requests.empty());
  for (const auto &request : requests) {
    EXPECT_TRUE(request.starts_with(std::to_string(::getpid()) + " kubernetes-admin /version"))
        << request;
  }
  EXPECT_EQ(proxy_->counts().refused, 0u) << said();
  // And the proxy logged the tunnel: kubectl's SOCKS5 CONNECT to the lab's port.
  EXPECT_TRUE(contains(said(), "-> 127.0.0.1:" + std::to_string(lab_->port()) + ": SOCKS5 tunnel"))
      << said();
}

TEST_P(KubectlInAProxiedSandbox, CannotReachTheLabWithTheRawKubeconfig) {
  // On the host, the lease's own kubeconfig works.
  ProcessOptions host;
  host.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "HOME=" + dir_.string()};
  const ProcessResult direct =
      run_process({kKubectl, "--kubeconfig", (raw() / "lab-1.yaml").string(), "--request-timeout",
                   "20s", "get", "--raw", "/version"},
                  host);
  ASSERT_EQ(direct.code, 0) << direct.err;
  const std::size_t before = lab_->requests().size();
  // In the sandbox's empty network namespace it does not: loopback is exempt from the
  // proxy variables, and the sandbox's loopback has no API server.
  const ProcessResult result =
      in_sandbox("exec /usr/bin/kubectl --kubeconfig " + (raw() / "lab-1.yaml").string() +
                 " --request-timeout 20s get --raw /version");
  EXPECT_NE(result.code, 0) << result.out;
  EXPECT_TRUE(contains(result.err, "connection refused") || contains(result.err, "was refused"))
      << result.err;
  EXPECT_EQ(lab_->requests().size(), before);
}

TEST_P(KubectlInAProxiedSandbox, TheProxysAllowListHoldsTheTunnel) {
  start_proxy({"127.0.0.1:1"});
  const ProcessResult result = in_sandbox(kAskThenKubectl);
  EXPECT_NE(result.code, 0) << result.out;
  EXPECT_TRUE(contains(result.out, "proxy-url: " + sandbox_proxy())) << result.out;
  EXPECT_TRUE(lab_->requests().empty());
  EXPECT_GT(proxy_->counts().refused, 0u);
  EXPECT_TRUE(
      contains(said(), "-> 127.0.0.1:" + std::to_string(lab_->port()) + ": refused: not allowed: "))
      << said();
}

TEST_P(KubectlInAProxiedSandbox, RefusesWhatItCannotServeAndKeepsServing) {
  // Outside a proxied sandbox the requester has no SOCKS5 proxy to name.
  const ProcessResult host =
      run_process(broker_->ask_argv({"kubeconfig", "--resource", kLease}),
                  with_env({"PATH=/usr/bin:/bin", "HOME=" + broker_->sandbox_dir().string()}));
  EXPECT_EQ(host.code, 126) << host.out;
  EXPECT_TRUE(contains(host.err,
                       "sandbox-host ask: refused: kubeconfig: the requester's SOCKS5 proxy: no "
                       "SOCKS5 proxy: neither ALL_PROXY nor all_proxy is set"))
      << host.err;
  const ProcessResult unknown = in_sandbox(
      "\"$0\" ask kubeconfig --resource lab-9 --spool \"$1\"; echo code=$?\n"
      "\"$0\" ask kubeconfig --resource ../lab-1 --spool \"$1\"; echo code=$?\n"
      "exec \"$0\" ask ping --spool \"$1\"");
  EXPECT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_EQ(lines(unknown.out), (std::vector<std::string>{"code=126", "code=126", "pong"}));
  EXPECT_TRUE(contains(unknown.err, "refused: kubeconfig: no lease \"lab-9\": " +
                                        (leases() / "lab-9.yaml").string() + " does not exist"))
      << unknown.err;
  EXPECT_TRUE(contains(unknown.err,
                       "refused: kubeconfig: resource \"../lab-1\" does not match "
                       "^[a-z0-9][a-z0-9.-]{0,62}$"))
      << unknown.err;
  EXPECT_FALSE(fs::exists(written()));
}

INSTANTIATE_TEST_SUITE_P(Kubeconfig, KubectlInAProxiedSandbox, ::testing::Values(0u, kNobody),
                         [](const auto &info) { return info.param == 0 ? "Root" : "Nobody"; });

}  // namespace
}  // namespace sandbox_host::test
