// A hostile plugin against serve's metrics endpoint ([metrics]), as root and as nobody,
// through the real binaries: a sandboxed plugin (Landlock or namespaces, network outbound,
// the socket's directory granted) that connects to the loopback port or to the unix socket
// by path gets no byte of the exposition, and its refusals are audited and counted; a
// flood of connections and requests held half-sent stalls neither the endpoint for its
// operator's scraper nor the launch service.
#include <gtest/gtest.h>

#include "backend_case.hpp"
#include "exposition.hpp"
#include "fixtures.hpp"
#include "metrics_service.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host {
namespace {
using namespace std::chrono_literals;
using test::MetricsService;
using test::ProcessResult;
using test::RunningProcess;
using test::User;

// The service's user for a case: the user the sandbox runs as.
User user_of(const test::BackendCase &c) {
  return c.user == test::BackendCase::User::root ? User::root : User::nobody;
}

// `sandbox-host run` of the hostile plugin under backend, network outbound (the host's
// loopback), with the metrics socket's directory granted read-only (a namespaces plugin
// then reaches the socket by path, as a Landlock plugin always does).
// plugin: the hostile plugin's copy in the service's install.
std::vector<std::string> sandboxed(const MetricsService &served, const std::string &plugin,
                                   const std::string &backend,
                                   const std::vector<std::string> &plugin_args) {
  const auto &service = served.service();
  std::vector<std::string> argv = service.prefix();
  argv.insert(argv.end(),
              {service.install().sandbox_host(), "run", "--backend", backend, "--network",
               "outbound", "--read", served.metrics_socket().parent_path().string(), "--", plugin});
  argv.insert(argv.end(), plugin_args.begin(), plugin_args.end());
  return argv;
}

bool backend_works(const MetricsService &served, const std::string &backend) {
  return served
             .as_user({served.service().install().sandbox_host(), "run", "--backend", backend,
                       "--network", "outbound", "--", "/bin/true"})
             .code == 0;
}

std::size_t audit_records(const std::string &audit, const std::string &rule) {
  std::size_t found = 0;
  for (std::size_t at = audit.find("\"rule\":\"" + rule + "\""); at != std::string::npos;
       at = audit.find("\"rule\":\"" + rule + "\"", at + 1)) {
    ++found;
  }
  return found;
}

class SandboxedScraper : public ::testing::TestWithParam<test::BackendCase> {};

TEST_P(SandboxedScraper, GetsNothingOnThePortOrTheSocket) {
  const MetricsService served(user_of(GetParam()));
  if (!backend_works(served, GetParam().backend)) {
    GTEST_SKIP() << "backend " << GetParam().backend << " does not work here";
  }
  const std::string plugin = served.service().install().add_binary(HOSTILE_PLUGIN);
  for (const std::string &address : {served.tcp_address(), served.unix_address()}) {
    const ProcessResult attack =
        test::run_process(sandboxed(served, plugin, GetParam().backend, {"scrape", address, "5"}));
    ASSERT_EQ(attack.code, 0) << attack.err;
    EXPECT_EQ(attack.out, "scrape: 0 answered, 0 bytes\n") << address << ": " << attack.err;
  }
  // The same binary outside a sandbox is the operator's and is served, on both.
  for (const std::string &address : {served.tcp_address(), served.unix_address()}) {
    const ProcessResult plain = served.as_user({plugin, "scrape", address, "2"});
    EXPECT_TRUE(plain.out.starts_with("scrape: 2 answered")) << address << ": " << plain.out;
  }
  // Each refused connection is audited under the endpoint's rules and counted.
  const std::string audit = served.service().audit();
  const std::size_t refused =
      audit_records(audit, "metrics-sandboxed-peer") + audit_records(audit, "metrics-peer");
  EXPECT_EQ(refused, 10u) << audit.substr(0, 3000);
  // Over the socket the peer is pinned and its mark read: named as a sandbox.
  EXPECT_GE(audit_records(audit, "metrics-sandboxed-peer"), 5u);
  const std::string text = served.scrape();
  EXPECT_EQ(
      test::count(
          text,
          R"(sandbox_host_refusals_total{component="metrics",rule="metrics-sandboxed-peer"})") +
          test::count(text,
                      R"(sandbox_host_refusals_total{component="metrics",rule="metrics-peer"})"),
      10);
}

TEST_P(SandboxedScraper, AFloodStallsNeitherTheEndpointNorTheLaunchService) {
  const MetricsService served(user_of(GetParam()),
                              "max_connections = 4\nrequest_timeout_ms = 500\n");
  if (!backend_works(served, GetParam().backend)) {
    GTEST_SKIP() << "backend " << GetParam().backend << " does not work here";
  }
  const std::string plugin = served.service().install().add_binary(HOSTILE_PLUGIN);
  // 300 connections held half-sent from inside the sandbox, on both listeners, for 20 s.
  RunningProcess tcp_flood(sandboxed(served, plugin, GetParam().backend,
                                     {"scrape-hold", served.tcp_address(), "300", "20"}));
  RunningProcess unix_flood(sandboxed(served, plugin, GetParam().backend,
                                      {"scrape-hold", served.unix_address(), "300", "20"}));
  const auto held_tcp = tcp_flood.read_line(15s);
  const auto held_unix = unix_flood.read_line(15s);
  ASSERT_TRUE(held_tcp && held_unix);
  EXPECT_EQ(*held_tcp, "scrape-hold: 300");
  EXPECT_EQ(*held_unix, "scrape-hold: 300");
  // Once the endpoint has refused all 600 (each at once, or unread when max_connections are
  // busy), while they are still held: the operator's scrapes are served, every one of ten.
  auto metrics_refusals = [&] {
    const auto scraped = served.curl({"--fail", served.url()});
    double total = 0;
    for (const char *rule : {"metrics-peer", "metrics-sandboxed-peer", "metrics-busy"}) {
      total += test::count(
          scraped.out,
          std::string("sandbox_host_refusals_total{component=\"metrics\",rule=\"") + rule + "\"}");
    }
    return total;
  };
  EXPECT_TRUE(test::eventually([&] { return metrics_refusals() >= 600; }, 15s));
  int scraped = 0;
  for (int i = 0; i < 10; ++i) {
    if (served.curl({"--fail", "-o", "/dev/null", served.url()}).code == 0) ++scraped;
  }
  EXPECT_EQ(scraped, 10);
  EXPECT_EQ(test::run_process(served.service().launch({"--", "/bin/true"})).code, 0);

  // The operator's own user holding requests half-sent past max_connections: the next
  // scrape waits at most request_timeout for a place, so one of a few tries is served.
  RunningProcess slow([&] {
    std::vector<std::string> argv = served.service().prefix();
    argv.insert(argv.end(), {plugin, "scrape-hold", served.tcp_address(), "8", "3"});
    return argv;
  }());
  ASSERT_TRUE(slow.read_line(15s));
  bool served_after_timeout = false;
  for (int i = 0; i < 40 && !served_after_timeout; ++i) {
    served_after_timeout = served.curl({"--fail", "-o", "/dev/null", served.url()}).code == 0;
    if (!served_after_timeout) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(served_after_timeout);
}

INSTANTIATE_TEST_SUITE_P(Backends, SandboxedScraper, ::testing::ValuesIn(test::kLinuxBackendCases),
                         test::backend_case_name);

}  // namespace
}  // namespace sandbox_host
