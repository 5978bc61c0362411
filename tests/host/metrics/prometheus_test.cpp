// The endpoint against a real Prometheus (/usr/bin/prometheus, Debian's 2.42): it scrapes a
// real `sandbox-host serve` over loopback TCP every second, and its query API gives back
// the counts of a known workload run after its first scrape; run as serve's user, and as a
// user listed in [metrics] scrapers.
#include "exposition.hpp"
#include "loopback_port.hpp"
#include "metrics_service.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <Poco/URI.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

namespace sandbox_host::test {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char *kPrometheus = "/usr/bin/prometheus";

class RealPrometheus : public ::testing::TestWithParam<User> {};

// The one value an instant query gives, or nullopt while it gives none (no scrape yet).
std::optional<double> query(const MetricsService &served, std::uint16_t port,
                            const std::string &promql) {
  std::string encoded;
  Poco::URI::encode(promql, "=&+{}\"", encoded);
  const ProcessResult result = served.curl(
      {"--fail", "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query?query=" + encoded});
  if (result.code != 0) return std::nullopt;
  const auto answer = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  if (answer->getValue<std::string>("status") != "success") return std::nullopt;
  const auto results = answer->getObject("data")->getArray("result");
  if (results->size() != 1) return std::nullopt;
  // [ <time>, "<value>" ]
  return std::stod(results->getObject(0)->getArray("value")->getElement<std::string>(1));
}

// Whether the query gives expected within 60 s, asked every 250 ms.
bool eventually_gives(const MetricsService &served, std::uint16_t port, const std::string &promql,
                      double expected) {
  return eventually([&] { return query(served, port, promql) == expected; }, 60s);
}

// Prometheus scraping served every second from dir, its API on port, as nobody or as root.
std::unique_ptr<RunningProcess> run_prometheus(const MetricsService &served, const TempFile &dir,
                                               std::uint16_t port, User user) {
  std::ofstream(dir.dir() / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
      << "scrape_configs:\n  - job_name: sandbox-host\n    static_configs:\n"
      << "      - targets: [\"127.0.0.1:" << served.metrics_port() << "\"]\n";
  fs::create_directories(dir.dir() / "data");
  if (user == User::nobody) {
    for (const auto &entry : fs::recursive_directory_iterator(dir.dir())) {
      if (::chown(entry.path().c_str(), kNobody, kNobody) != 0) return nullptr;
    }
    if (::chown(dir.dir().c_str(), kNobody, kNobody) != 0) return nullptr;
  }
  std::vector<std::string> argv = user == User::nobody ? as_nobody() : std::vector<std::string>{};
  argv.insert(argv.end(), {kPrometheus, "--config.file=" + (dir.dir() / "prometheus.yml").string(),
                           "--storage.tsdb.path=" + (dir.dir() / "data").string(),
                           "--web.listen-address=127.0.0.1:" + std::to_string(port)});
  return std::make_unique<RunningProcess>(argv);
}

TEST_P(RealPrometheus, ScrapesTheCountsOfAKnownWorkload) {
  if (!fs::exists(kPrometheus)) {
    GTEST_SKIP() << kPrometheus << " is not installed (Debian's prometheus package)";
  }
  const MetricsService served(GetParam());
  const TempFile dir("", "unused");
  const std::uint16_t port = free_loopback_port();
  // Prometheus runs as serve's user, which needs no listing.
  const auto prometheus = run_prometheus(served, dir, port, GetParam());
  ASSERT_TRUE(prometheus);

  ASSERT_TRUE(eventually_gives(served, port, R"(up{job="sandbox-host"})", 1))
      << "Prometheus never scraped the endpoint: " << prometheus->wait(1s).err.substr(0, 3000);
  // The fixture's probes of the launch service, refused as another uid's as nobody, are
  // counted before the workload.
  const std::string refused = R"(sandbox_host_launches_total{backend="none",outcome="refused"})";
  const double refused_before = query(served, port, refused).value_or(0);
  served.launch(3);
  served.ask(2);
  served.egress(2, 1);
  EXPECT_TRUE(eventually_gives(
      served, port, R"(sum(sandbox_host_launches_total{job="sandbox-host",outcome="started"}))",
      3));
  EXPECT_TRUE(eventually_gives(served, port, refused, refused_before + 1));
  EXPECT_TRUE(eventually_gives(
      served, port, R"(sandbox_host_broker_requests_total{op="ping",outcome="answered"})", 2));
  EXPECT_TRUE(eventually_gives(
      served, port, R"(sandbox_host_egress_connections_total{kind="http",outcome="allowed"})", 2));
  EXPECT_TRUE(eventually_gives(served, port,
                               R"(sandbox_host_egress_refusals_total{rule="allow-list"})", 1));
  EXPECT_TRUE(
      eventually_gives(served, port, R"(sum(sandbox_host_launch_duration_seconds_count))", 3));
  EXPECT_TRUE(
      eventually_gives(served, port, R"(sandbox_host_credential_up{credential="token"})", 1));
}

// The usual deployment: Prometheus as a user of its own, listed in scrapers (nobody here),
// scraping a root serve over TCP.
TEST(RealPrometheusAsScraper, AListedOtherUserScrapes) {
  if (!fs::exists(kPrometheus)) {
    GTEST_SKIP() << kPrometheus << " is not installed (Debian's prometheus package)";
  }
  const MetricsService served(User::root, "scrapers = [\"nobody\"]\n");
  const TempFile dir("", "unused");
  const std::uint16_t port = free_loopback_port();
  const auto prometheus = run_prometheus(served, dir, port, User::nobody);
  ASSERT_TRUE(prometheus);
  ASSERT_TRUE(eventually_gives(served, port, R"(up{job="sandbox-host"})", 1))
      << "Prometheus never scraped the endpoint: " << prometheus->wait(1s).err.substr(0, 3000);
  served.launch(2);
  EXPECT_TRUE(eventually_gives(
      served, port, R"(sum(sandbox_host_launches_total{job="sandbox-host",outcome="started"}))",
      2));
}

INSTANTIATE_TEST_SUITE_P(Users, RealPrometheus, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return user_name(info.param); });

}  // namespace
}  // namespace sandbox_host::test
