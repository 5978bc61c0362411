// The world the egress proxy's tests run in: a stand-in internet on a loopback address of
// the test's own (127.x.y.1, HTTP on 80 and HTTPS on 443 with the test's CA), names mapped
// to it by the proxy's resolver overrides, and the proxy itself in this process, with its
// refusals collected.
#pragma once

#include "fixtures.hpp"
#include "loopback_port.hpp"
#include "process.hpp"

#include <sandbox_host/egress/proxy/proxy_server.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandbox_host::test {

inline constexpr const char *kTestToken = "ghu_TESTtoken0123456789secret";

inline bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

class EgressWorld {
 public:
  // The names the stand-in answers for: plain.test (allowed, no credentials), github.com
  // and api.github.com (allowed and injected), other.test (allowed), denied.test (not
  // allowed), loopy.test (allowed, but resolves to 127.0.0.2, which is not).
  EgressWorld();
  ~EgressWorld();

  // Starts the proxy; options adjusts the world's defaults first.
  void start_proxy(const std::function<void(egress::EgressOptions &)> &adjust = {});
  void stop_proxy() { proxy_.reset(); }

  const std::string &upstream_address() const { return address_; }
  std::uint16_t port() const { return proxy_->port(); }
  std::string proxy_url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  std::filesystem::path socket() const { return dir_ / "egress.sock"; }
  // The test CA the stand-in's certificates chain to, and the proxy's own CA.
  std::filesystem::path upstream_ca() const { return dir_ / "upstream-ca.pem"; }
  std::filesystem::path proxy_ca() const { return dir_ / "proxy-ca.pem"; }
  const std::filesystem::path &dir() const { return dir_; }
  std::filesystem::path git_root() const { return dir_ / "git"; }

  // curl through the proxy (-x), with arguments after.
  ProcessResult curl(const std::vector<std::string> &args,
                     const std::vector<std::string> &prefix = {}) const;

  std::vector<std::string> said() const;
  bool said_containing(const std::string &text) const;
  egress::EgressProxy &proxy() { return *proxy_; }

 private:
  std::filesystem::path dir_;
  std::string address_;
  std::unique_ptr<RunningProcess> upstream_;
  std::unique_ptr<egress::EgressProxy> proxy_;
  mutable std::mutex said_mutex_;
  std::vector<std::string> said_;
};

}  // namespace sandbox_host::test
