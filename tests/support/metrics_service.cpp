#include "metrics_service.hpp"

#include "loopback_port.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace sandbox_host::test {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

MetricsService::MetricsService(User user, const std::string &metrics_lines,
                               bool egress_reaches_metrics)
    : metrics_port_(free_loopback_port()),
      egress_port_(free_loopback_port()),
      upstream_port_(free_loopback_port()) {
  const fs::path dir = dir_.dir();
  fs::create_directories(dir / "m");
  fs::create_directories(dir / "www");
  std::ofstream(dir / "www/index.html") << "upstream\n";
  // The sandboxes under test reach the socket's directory; nothing else of it is secret.
  fs::permissions(dir, fs::perms(0755));
  if (user == User::nobody && ::chown((dir / "m").c_str(), kNobody, kNobody) != 0) {
    throw std::runtime_error("chown " + (dir / "m").string());
  }
  upstream_ = std::make_unique<RunningProcess>(std::vector<std::string>{
      "/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory",
      (dir / "www").string(), std::to_string(upstream_port_)});
  const std::string up = std::to_string(upstream_port_);
  std::ofstream(dir / "token.sh") << "#!/bin/sh\necho tok-" << kSecretMark << "\n";
  fs::permissions(dir / "token.sh", fs::perms(0755));
  const std::string config =
      "[metrics]\nlisten = \"127.0.0.1:" + std::to_string(metrics_port_) + "\"\nsocket = \"" +
      metrics_socket().string() + "\"\n" + metrics_lines +
      "\n[egress]\nlisten = \"127.0.0.1:" + std::to_string(egress_port_) +
      "\"\nallow = [\"plain.test:" + up + "\"" +
      (egress_reaches_metrics ? ", \"127.0.0.1:" + std::to_string(metrics_port_) + "\"" : "") +
      "]\nallow_addresses = [\"127.0.0.1\"]\nresolve = { \"plain.test\" = [\"127.0.0.1\"] }\n" +
      "token_command = [\"" + (dir / "token.sh").string() + "\"]\n";
  service_ = std::make_unique<Service>(user, "", config);
  if (!eventually([&] { return curl({"-o", "/dev/null", url()}).code == 0; }, 20s)) {
    throw std::runtime_error("the metrics endpoint did not answer at " + url());
  }
  if (!eventually(
          [&] {
            return curl({"-o", "/dev/null", "http://127.0.0.1:" + up + "/"}).code == 0;
          },
          20s)) {
    throw std::runtime_error("the stand-in upstream did not start");
  }
}

ProcessResult MetricsService::as_user(std::vector<std::string> argv) const {
  std::vector<std::string> full = service_->prefix();
  full.insert(full.end(), argv.begin(), argv.end());
  return run_process(full);
}

ProcessResult MetricsService::curl(const std::vector<std::string> &args) const {
  std::vector<std::string> argv{"/usr/bin/curl", "-sS", "--max-time", "10"};
  argv.insert(argv.end(), args.begin(), args.end());
  return as_user(argv);
}

std::string MetricsService::scrape() const {
  const ProcessResult result = curl({"--fail", url()});
  EXPECT_EQ(result.code, 0) << result.err;
  return result.out;
}

void MetricsService::launch(int n) const {
  for (int i = 0; i < n; ++i) {
    const ProcessResult result = run_process(
        service_->launch({"--name", std::string("plugin-") + kSecretMark, "--", "/bin/true"}));
    ASSERT_EQ(result.code, 0) << result.err;
  }
  const ProcessResult refused =
      run_process(service_->launch({"--backend", "off", "--", "/bin/true"}));
  ASSERT_EQ(refused.code, 125) << refused.err;
}

void MetricsService::ask(int m) const {
  const std::string config = (service_->dir() / "config.toml").string();
  for (int i = 0; i < m; ++i) {
    const ProcessResult pong =
        as_user({service_->install().sandbox_host(), "ask", "ping", "--config", config});
    ASSERT_EQ(pong.code, 0) << pong.err;
  }
  const ProcessResult unknown = as_user({service_->install().sandbox_host(), "ask",
                                         std::string("op-") + kSecretMark, "--config", config});
  ASSERT_EQ(unknown.code, 126) << unknown.err;
}

void MetricsService::egress(int allowed, int refused) const {
  const std::string proxy = this->proxy();
  const std::string header = std::string("X-Api-Key: hdr-") + kSecretMark;
  const std::string path = std::string("/?path-") + kSecretMark;
  for (int i = 0; i < allowed; ++i) {
    const ProcessResult ok = curl({"--fail", "-x", proxy, "-H", header,
                                   "http://plain.test:" + std::to_string(upstream_port_) + path});
    ASSERT_EQ(ok.code, 0) << ok.err;
  }
  const ProcessResult tunnel = curl({"--fail", "-p", "-x", proxy, "-H", header,
                                     "http://plain.test:" + std::to_string(upstream_port_) + path});
  ASSERT_EQ(tunnel.code, 0) << tunnel.err;
  for (int i = 0; i < refused; ++i) {
    const ProcessResult denied =
        curl({"-o", "/dev/null", "-w", "%{http_code}", "-x", proxy, "-H", header,
              std::string("http://denied-") + kSecretMark + ".test" + path});
    ASSERT_EQ(denied.out, "403") << denied.err;
  }
}

}  // namespace sandbox_host::test
