#include "exposition.hpp"

#include <sandbox_host/host/metrics/host_metrics.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace sandbox_host::metrics {
namespace {

using namespace std::chrono_literals;
using test::count;
using test::sample;

TEST(HostMetrics, EveryFamilyIsExposedWithItsHelpAndTypeOnceItHasASeries) {
  HostMetrics metrics;
  // The gauges and the byte counters have their one series from the start.
  EXPECT_EQ(sample(metrics.exposition(), "sandbox_host_sandboxes_running"), 0);
  EXPECT_EQ(sample(metrics.exposition(), "sandbox_host_launches_total"), std::nullopt);
  metrics.launch("landlock", "started", 1ms);
  metrics.refusal("limits", "memory");
  metrics.broker_request("ping", "answered", 1ms);
  metrics.egress_connection("socks5", "allowed");
  metrics.egress_refusal("busy");
  metrics.credential_read("token", true);
  const std::string text = metrics.exposition();
  for (const char *family :
       {"sandbox_host_launches_total counter", "sandbox_host_launch_duration_seconds histogram",
        "sandbox_host_sandboxes_running gauge", "sandbox_host_sandboxes_prepared gauge",
        "sandbox_host_refusals_total counter", "sandbox_host_limit_hits_total counter",
        "sandbox_host_broker_requests_total counter",
        "sandbox_host_broker_request_duration_seconds histogram",
        "sandbox_host_egress_connections_total counter",
        "sandbox_host_egress_refusals_total counter", "sandbox_host_egress_bytes_total counter",
        "sandbox_host_egress_tunnels_open gauge", "sandbox_host_credential_up gauge",
        "sandbox_host_credential_last_good_read_age_seconds gauge"}) {
    EXPECT_NE(text.find(std::string("# TYPE ") + family + "\n"), std::string::npos) << family;
  }
}

TEST(HostMetrics, LaunchesAreCountedByBackendAndOutcomeAndTimedWhenStarted) {
  HostMetrics metrics;
  metrics.launch("namespaces", "started", 3ms);
  metrics.launch("namespaces", "started", 40ms);
  metrics.launch("none", "refused", {});
  const std::string text = metrics.exposition();
  EXPECT_EQ(count(text, R"(sandbox_host_launches_total{backend="namespaces",outcome="started"})"),
            2);
  EXPECT_EQ(count(text, R"(sandbox_host_launches_total{backend="none",outcome="refused"})"), 1);
  EXPECT_EQ(count(text, R"(sandbox_host_launch_duration_seconds_count{backend="namespaces"})"), 2);
  EXPECT_NEAR(count(text, R"(sandbox_host_launch_duration_seconds_sum{backend="namespaces"})"),
              0.043, 1e-9);
  // 3 ms falls in the bucket up to 4 ms, 40 ms in the one up to 64 ms.
  EXPECT_EQ(
      count(text,
            R"(sandbox_host_launch_duration_seconds_bucket{backend="namespaces",le="0.004"})"),
      1);
  EXPECT_EQ(
      count(text,
            R"(sandbox_host_launch_duration_seconds_bucket{backend="namespaces",le="0.064"})"),
      2);
  EXPECT_FALSE(sample(text, R"(sandbox_host_launch_duration_seconds_count{backend="none"})"));
}

TEST(HostMetrics, RunningPluginsAndPreparedSandboxesAreGauges) {
  HostMetrics metrics;
  metrics.plugin_running(1);
  metrics.plugin_running(1);
  metrics.plugin_running(-1);
  std::size_t prepared = 3;
  metrics.sample_prepared_sandboxes([&] { return prepared; });
  std::string text = metrics.exposition();
  EXPECT_EQ(sample(text, "sandbox_host_sandboxes_running"), 1);
  EXPECT_EQ(sample(text, "sandbox_host_sandboxes_prepared"), 3);
  prepared = 1;
  EXPECT_EQ(sample(metrics.exposition(), "sandbox_host_sandboxes_prepared"), 1);
}

TEST(HostMetrics, RefusalsAreCountedByComponentAndRuleAndLimitsAsLimitHits) {
  HostMetrics metrics;
  metrics.refusal("launcher", "launcher-sandboxed-peer");
  metrics.refusal("launcher", "launcher-sandboxed-peer");
  metrics.refusal("limits", "scratch");
  const std::string text = metrics.exposition();
  EXPECT_EQ(
      count(text,
            R"(sandbox_host_refusals_total{component="launcher",rule="launcher-sandboxed-peer"})"),
      2);
  EXPECT_EQ(count(text, R"(sandbox_host_refusals_total{component="limits",rule="scratch"})"), 1);
  EXPECT_EQ(count(text, R"(sandbox_host_limit_hits_total{limit="scratch"})"), 1);
}

TEST(HostMetrics, RefusalSeriesAreBoundedAndTheRestCountedAsOther) {
  HostMetrics metrics;
  for (std::size_t i = 0; i < kMaxRefusalSeries + 50; ++i) {
    metrics.refusal("module", "rule-" + std::to_string(i));
  }
  metrics.refusal("module", "rule-0");  // a pair already counted keeps its series
  const std::string text = metrics.exposition();
  EXPECT_EQ(count(text, R"(sandbox_host_refusals_total{component="module",rule="rule-0"})"), 2);
  EXPECT_EQ(count(text, R"(sandbox_host_refusals_total{component="module",rule="other"})"), 50);
  EXPECT_FALSE(sample(text, R"(sandbox_host_refusals_total{component="module",rule="rule-300"})"));
}

TEST(HostMetrics, BrokerRequestsAreCountedAndTimedByOp) {
  HostMetrics metrics;
  metrics.broker_request("ping", "answered", 2ms);
  metrics.broker_request("unknown", "refused", 1ms);
  const std::string text = metrics.exposition();
  EXPECT_EQ(count(text, R"(sandbox_host_broker_requests_total{op="ping",outcome="answered"})"), 1);
  EXPECT_EQ(count(text, R"(sandbox_host_broker_requests_total{op="unknown",outcome="refused"})"),
            1);
  EXPECT_EQ(count(text, R"(sandbox_host_broker_request_duration_seconds_count{op="ping"})"), 1);
}

TEST(HostMetrics, EgressConnectionsRefusalsTunnelsAndBytes) {
  HostMetrics metrics;
  metrics.egress_connection("http", "allowed");
  metrics.egress_connection("connect", "refused");
  metrics.egress_refusal("allow-list");
  metrics.egress_tunnels_open(1);
  metrics.egress_tunnels_open(1);
  metrics.egress_tunnels_open(-1);
  metrics.egress_bytes(100, 2000);
  metrics.egress_bytes(1, 2);
  const std::string text = metrics.exposition();
  EXPECT_EQ(count(text, R"(sandbox_host_egress_connections_total{kind="http",outcome="allowed"})"),
            1);
  EXPECT_EQ(
      count(text, R"(sandbox_host_egress_connections_total{kind="connect",outcome="refused"})"), 1);
  EXPECT_EQ(count(text, R"(sandbox_host_egress_refusals_total{rule="allow-list"})"), 1);
  EXPECT_EQ(sample(text, "sandbox_host_egress_tunnels_open"), 1);
  EXPECT_EQ(count(text, R"(sandbox_host_egress_bytes_total{direction="from_client"})"), 101);
  EXPECT_EQ(count(text, R"(sandbox_host_egress_bytes_total{direction="to_client"})"), 2002);
}

TEST(HostMetrics, ACredentialIsUpAfterAGoodReadAndItsAgeCountsFromIt) {
  HostMetrics metrics;
  const std::string age =
      R"(sandbox_host_credential_last_good_read_age_seconds{credential="token"})";
  EXPECT_FALSE(sample(metrics.exposition(), age));  // no read yet: no credential to age
  metrics.credential_read("token", false);
  EXPECT_EQ(sample(metrics.exposition(), R"(sandbox_host_credential_up{credential="token"})"), 0);
  // No good read yet: the age runs from the first try, and no less than the time since.
  std::this_thread::sleep_for(1100ms);
  EXPECT_GE(sample(metrics.exposition(), age).value_or(-1), 1.0);
  metrics.credential_read("token", true);
  std::string text = metrics.exposition();
  EXPECT_EQ(sample(text, R"(sandbox_host_credential_up{credential="token"})"), 1);
  EXPECT_GE(sample(text, age).value_or(-1), 0);
  metrics.credential_read("token", false);
  EXPECT_EQ(sample(metrics.exposition(), R"(sandbox_host_credential_up{credential="token"})"), 0);
}

}  // namespace
}  // namespace sandbox_host::metrics
