// A real `sandbox-host serve` with [metrics], as root and as nobody: a known workload of
// launches, broker requests and egress requests, and what the endpoint counts of it.
#include "exposition.hpp"
#include "metrics_service.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <sstream>

namespace sandbox_host::test {
namespace {

class ServeMetrics : public ::testing::TestWithParam<User> {};

// The sum of every series of family whose labels include label (`outcome="started"`).
double sum_where(const std::string &exposition, const std::string &family,
                 const std::string &label) {
  double total = 0;
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(family + "{") || line.find(label) == std::string::npos) continue;
    total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

TEST_P(ServeMetrics, CountsAKnownWorkload) {
  const MetricsService served(GetParam());
  constexpr int kLaunches = 3, kAsks = 4, kAllowed = 2, kRefused = 3;
  // What the fixture did to see serve up (its probes of the launch service are refused as
  // another uid's, as nobody) is counted before the workload.
  const std::string before = served.scrape();
  served.launch(kLaunches);
  served.ask(kAsks);
  served.egress(kAllowed, kRefused);
  const std::string text = served.scrape();
  auto delta = [&](const std::string &series) {
    return count(text, series) - count(before, series);
  };

  EXPECT_EQ(sum_where(text, "sandbox_host_launches_total", R"(outcome="started")"), kLaunches)
      << text;
  EXPECT_EQ(delta(R"(sandbox_host_launches_total{backend="none",outcome="refused"})"), 1);
  EXPECT_EQ(sum_where(text, "sandbox_host_launch_duration_seconds_count", "backend="), kLaunches);
  EXPECT_EQ(sample(text, "sandbox_host_sandboxes_running"), 0);
  EXPECT_TRUE(sample(text, "sandbox_host_sandboxes_prepared").has_value());

  EXPECT_EQ(delta(R"(sandbox_host_broker_requests_total{op="ping",outcome="answered"})"), kAsks);
  EXPECT_EQ(delta(R"(sandbox_host_broker_requests_total{op="unknown",outcome="refused"})"), 1);
  EXPECT_EQ(delta(R"(sandbox_host_broker_request_duration_seconds_count{op="ping"})"), kAsks);

  EXPECT_EQ(delta(R"(sandbox_host_egress_connections_total{kind="http",outcome="allowed"})"),
            kAllowed);
  EXPECT_EQ(delta(R"(sandbox_host_egress_connections_total{kind="connect",outcome="allowed"})"), 1);
  EXPECT_EQ(delta(R"(sandbox_host_egress_connections_total{kind="http",outcome="refused"})"),
            kRefused);
  EXPECT_EQ(delta(R"(sandbox_host_egress_refusals_total{rule="allow-list"})"), kRefused);
  EXPECT_GT(delta(R"(sandbox_host_egress_bytes_total{direction="to_client"})"), 0);
  EXPECT_EQ(sample(text, "sandbox_host_egress_tunnels_open"), 0);
  EXPECT_EQ(sample(text, R"(sandbox_host_credential_up{credential="token"})"), 1);

  // Every refusal the audit wrote is counted under its component and rule.
  EXPECT_EQ(delta(R"(sandbox_host_refusals_total{component="launcher",rule="launcher-launch"})"),
            1);
  EXPECT_EQ(delta(R"(sandbox_host_refusals_total{component="broker",rule="op-refused"})"), 1);
  EXPECT_EQ(delta(R"(sandbox_host_refusals_total{component="egress",rule="egress"})"), kRefused);
}

// A forwarded request's response reaches the bytes counted to clients, as a tunnel's does:
// the counter covers every way through the proxy, not tunnels alone.
TEST_P(ServeMetrics, ForwardedRequestsCountTheBytesTheyCarry) {
  const MetricsService served(GetParam());
  const std::string before = served.scrape();
  const ProcessResult got =
      served.curl({"--fail", "-o", "/dev/null", "-w", "%{size_download}", "-x", served.proxy(),
                   "http://plain.test:" + std::to_string(served.upstream_port()) + "/"});
  ASSERT_EQ(got.code, 0) << got.err;
  const double body = std::stod(got.out);
  ASSERT_GT(body, 0);
  const std::string after = served.scrape();
  const auto series = R"(sandbox_host_egress_bytes_total{direction="to_client"})";
  // The upstream's head and body, as read from it.
  EXPECT_GE(count(after, series) - count(before, series), body) << after;
}

TEST_P(ServeMetrics, TheExpositionHoldsNoPathHostHeaderTokenOrPluginName) {
  const MetricsService served(GetParam());
  served.launch(1);
  served.ask(1);
  served.egress(1, 1);
  const std::string text = served.scrape();
  ASSERT_NE(text.find("sandbox_host_launches_total{"), std::string::npos);
  EXPECT_EQ(text.find(kSecretMark), std::string::npos) << text;  // token, path, header, names
  for (const std::string &absent :
       {served.service().dir().string(), served.metrics_socket().parent_path().string(),
        std::string("plain.test"), std::string("denied-"), std::string("/bin/true"),
        std::string("tok-"), std::string("X-Api-Key"), std::string("/tmp/")}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  }
}

TEST_P(ServeMetrics, TheUnixSocketServesTheSameExposition) {
  const MetricsService served(GetParam());
  const ProcessResult over_unix = served.curl(
      {"--fail", "--unix-socket", served.metrics_socket().string(), "http://metrics/metrics"});
  ASSERT_EQ(over_unix.code, 0) << over_unix.err;
  EXPECT_NE(over_unix.out.find(
                "# TYPE sandbox_host_sandboxes_running gauge\nsandbox_host_sandboxes_running 0\n"),
            std::string::npos)
      << over_unix.out;
}

TEST_P(ServeMetrics, ABadRequestGetsAClearHttpError) {
  const MetricsService served(GetParam(), "request_timeout_ms = 300\n");
  const std::string base = "http://127.0.0.1:" + std::to_string(served.metrics_port());
  auto status = [&](const std::vector<std::string> &args) {
    std::vector<std::string> all{"-o", "/dev/null", "-w", "%{http_code}"};
    all.insert(all.end(), args.begin(), args.end());
    return served.curl(all).out;
  };
  EXPECT_EQ(status({base + "/metrics"}), "200");
  EXPECT_EQ(status({"-I", base + "/metrics"}), "200");
  EXPECT_EQ(status({base + "/"}), "404");
  EXPECT_EQ(status({"-X", "POST", base + "/metrics"}), "405");
  EXPECT_EQ(status({"-H", "X-Pad: " + std::string(9000, 'a'), base + "/metrics"}), "431");
  const ProcessResult body = served.curl({base + "/nothing"});
  EXPECT_EQ(body.out, "sandbox-host metrics: only /metrics is served\n");
  EXPECT_NE(served.service().audit().find("\"rule\":\"metrics-request\""), std::string::npos);
  if (GetParam() == User::root) {
    // A request never finished gets 408 once request_timeout_ms has passed (this test
    // process is root: a scraper of a root serve).
    const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(served.metrics_port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
    ASSERT_EQ(::send(fd.get(), "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL), 23);
    const timeval bound{10, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    char answer[64] = {};
    ASSERT_GT(::recv(fd.get(), answer, sizeof answer - 1, MSG_WAITALL), 0);
    EXPECT_TRUE(std::string(answer).starts_with("HTTP/1.1 408 Request Timeout")) << answer;
  }
}

// A proxied plugin that asks the egress proxy for the endpoint, where the operator's allow
// list lets it, is relayed by serve itself: a holder the TCP check never counts, so the
// connection is refused like any other it cannot tell from a sandbox.
TEST_P(ServeMetrics, TheEgressProxyRelaysNoScrape) {
  const MetricsService served(GetParam(), "", true);
  const ProcessResult relayed = served.curl({"-x", served.proxy(), served.url()});
  EXPECT_EQ(relayed.out.find("sandbox_host_"), std::string::npos) << relayed.out;
  const ProcessResult tunnelled = served.curl({"-p", "-x", served.proxy(), served.url()});
  EXPECT_EQ(tunnelled.out.find("sandbox_host_"), std::string::npos) << tunnelled.out;
  const std::string audit = served.service().audit();
  EXPECT_NE(audit.find("\"rule\":\"metrics-peer\""), std::string::npos) << audit;
  // The same address scraped directly by serve's user is served.
  EXPECT_NE(served.scrape().find("sandbox_host_"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Users, ServeMetrics, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return user_name(info.param); });

}  // namespace
}  // namespace sandbox_host::test
