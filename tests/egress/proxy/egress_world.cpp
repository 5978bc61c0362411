#include "egress_world.hpp"

#include <sandbox_host/egress/proxy/certificate_authority.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace sandbox_host::test {
namespace fs = std::filesystem;
namespace {

void must(const std::vector<std::string> &argv, const fs::path &cwd = {}) {
  std::vector<std::string> command = argv;
  if (!cwd.empty()) command.insert(command.begin(), {"/usr/bin/env", "-C", cwd.string()});
  const ProcessResult result = run_process(command);
  if (result.code != 0) {
    std::string line;
    for (const auto &arg : argv) line += arg + " ";
    throw std::runtime_error("test setup failed: " + line + ": " + result.err);
  }
}

void write_file(const fs::path &path, const std::string &text) {
  std::ofstream(path) << text;
}

}  // namespace

EgressWorld::EgressWorld() {
  char pattern[] = "/tmp/egress-test-XXXXXX";
  dir_ = ::mkdtemp(pattern);
  const pid_t pid = ::getpid();
  address_ = "127." + std::to_string((pid >> 8) & 0xff) + "." + std::to_string(pid & 0xff) + ".1";

  // The stand-in's CA and its one certificate for every name it answers.
  const auto key_options = std::vector<std::string>{"-newkey", "ec", "-pkeyopt",
                                                    "ec_paramgen_curve:prime256v1", "-nodes"};
  std::vector<std::string> ca{"/usr/bin/openssl", "req", "-x509"};
  ca.insert(ca.end(), key_options.begin(), key_options.end());
  ca.insert(ca.end(),
            {"-keyout", (dir_ / "upstream-ca.key").string(), "-out", upstream_ca().string(),
             "-days", "2", "-subj", "/CN=egress test root", "-addext",
             "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"});
  must(ca);
  std::vector<std::string> request{"/usr/bin/openssl", "req"};
  request.insert(request.end(), key_options.begin(), key_options.end());
  request.insert(request.end(), {"-keyout", (dir_ / "server.key").string(), "-out",
                                 (dir_ / "server.csr").string(), "-subj", "/CN=plain.test"});
  must(request);
  write_file(dir_ / "server.ext",
             "subjectAltName=DNS:plain.test,DNS:github.com,DNS:api.github.com,DNS:other.test\n"
             "extendedKeyUsage=serverAuth\n");
  must({"/usr/bin/openssl", "x509", "-req", "-in", (dir_ / "server.csr").string(), "-CA",
        upstream_ca().string(), "-CAkey", (dir_ / "upstream-ca.key").string(), "-CAcreateserial",
        "-out", (dir_ / "server.pem").string(), "-days", "2", "-extfile",
        (dir_ / "server.ext").string()});

  // A repository the stand-in serves through git http-backend.
  const fs::path work = dir_ / "work";
  fs::create_directories(work);
  fs::create_directories(git_root());
  must({"/usr/bin/git", "init", "-q", "--bare", (git_root() / "repo.git").string()});
  must({"/usr/bin/git", "init", "-q", "-b", "main", work.string()});
  write_file(work / "README", "served through the egress proxy\n");
  must({"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "add", "README"}, work);
  must({"/usr/bin/git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first"},
       work);
  must({"/usr/bin/git", "push", "-q", (git_root() / "repo.git").string(), "main"}, work);
  must({"/usr/bin/git", "--git-dir", (git_root() / "repo.git").string(), "symbolic-ref", "HEAD",
        "refs/heads/main"});

  const fs::path ready = dir_ / "upstream.ready";
  upstream_ = std::make_unique<RunningProcess>(std::vector<std::string>{
      "/usr/bin/python3", UPSTREAM_SCRIPT, "--address", address_, "--http-port", "80",
      "--https-port", "443", "--cert", (dir_ / "server.pem").string(), "--key",
      (dir_ / "server.key").string(), "--git-root", git_root().string(), "--git-token", kTestToken,
      "--ready", ready.string()});
  for (int attempt = 0; attempt < 200 && !fs::exists(ready); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!fs::exists(ready)) throw std::runtime_error("the stand-in upstream did not start");
}

EgressWorld::~EgressWorld() {
  proxy_.reset();
  upstream_.reset();
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

void EgressWorld::start_proxy(const std::function<void(egress::EgressOptions &)> &adjust) {
  using namespace egress;
  EgressOptions options;
  options.listen = egress::LoopbackEndpoint::parse("127.0.0.1:0");
  options.socket = socket();
  options.allow = HostAllowList::parse({"plain.test", "github.com", "api.github.com", "other.test",
                                        "loopy.test", "127.0.0.1", "127.0.0.2"});
  options.addresses = AddressPolicy::parse({address_});
  const auto upstream = *parse_ip_literal(address_);
  const auto loopback = *parse_ip_literal("127.0.0.2");
  options.resolve = {{"plain.test", {upstream}},     {"github.com", {upstream}},
                     {"api.github.com", {upstream}}, {"other.test", {upstream}},
                     {"denied.test", {upstream}},    {"loopy.test", {loopback}}};
  options.inject = {"github.com", "api.github.com"};
  options.ca = std::make_shared<CertificateAuthority>(options.inject, std::chrono::hours(24));
  options.token = std::make_shared<Token>();
  options.token->set(kTestToken);
  options.upstream_ca_bundle = upstream_ca();
  options.same_user = ::geteuid();
  options.say = [this](const std::string &line) {
    std::lock_guard lock(said_mutex_);
    said_.push_back(line);
  };
  if (adjust) adjust(options);
  if (options.ca) write_file(proxy_ca(), options.ca->certificate_pem());
  proxy_ = std::make_unique<EgressProxy>(std::move(options));
}

ProcessResult EgressWorld::curl(const std::vector<std::string> &args,
                                const std::vector<std::string> &prefix) const {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), {"/usr/bin/curl", "-sS", "--max-time", "20", "-x", proxy_url()});
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.timeout = std::chrono::seconds(30);
  return run_process(argv, options);
}

std::vector<std::string> EgressWorld::said() const {
  std::lock_guard lock(said_mutex_);
  return said_;
}

bool EgressWorld::said_containing(const std::string &text) const {
  for (const auto &line : said()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace sandbox_host::test
