// serve's metrics, in prometheus-cpp's model: the Recorder the host's code reports to,
// and the Prometheus text exposition of everything recorded. Label values are only the
// words the host's code passes (metrics/recorder.hpp), never a plugin's name, a path, a
// header, a requested host or a credential; the pairs of component and rule are bounded
// besides, should a module's refusals bring rules of their own.
#pragma once

#include <sandbox_host/host/metrics/recorder.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace sandbox_host::metrics {

// Distinct (component, rule) pairs of sandbox_host_refusals_total; past them, a refusal is
// counted under its component with rule "other".
inline constexpr std::size_t kMaxRefusalSeries = 256;

class HostMetrics final : public Recorder {
 public:
  HostMetrics();
  ~HostMetrics() override;
  HostMetrics(const HostMetrics &) = delete;
  HostMetrics &operator=(const HostMetrics &) = delete;

  void refusal(std::string_view component, std::string_view rule) override;
  void launch(std::string_view backend, std::string_view outcome,
              std::chrono::nanoseconds took) override;
  void plugin_running(int delta) override;
  void broker_request(std::string_view op, std::string_view outcome,
                      std::chrono::nanoseconds took) override;
  void egress_connection(std::string_view kind, std::string_view outcome) override;
  void egress_refusal(std::string_view rule) override;
  void egress_tunnels_open(int delta) override;
  void egress_bytes(std::uint64_t from_clients, std::uint64_t to_clients) override;
  void credential_read(std::string_view credential, bool good) override;

  // The gauge read when scraped: the sandboxes the launch service holds prepared.
  void sample_prepared_sandboxes(std::function<std::size_t()> read);

  // The Prometheus text format (version 0.0.4) of every metric, as scraped now.
  std::string exposition();

 private:
  using Clock = std::chrono::steady_clock;
  struct CredentialState {
    Clock::time_point first_read;
    std::optional<Clock::time_point> last_good;
  };

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter> &launches_;
  prometheus::Family<prometheus::Histogram> &launch_seconds_;
  prometheus::Gauge &running_;
  prometheus::Gauge &prepared_;
  prometheus::Family<prometheus::Counter> &refusals_;
  prometheus::Family<prometheus::Counter> &limit_hits_;
  prometheus::Family<prometheus::Counter> &broker_requests_;
  prometheus::Family<prometheus::Histogram> &broker_seconds_;
  prometheus::Family<prometheus::Counter> &egress_connections_;
  prometheus::Family<prometheus::Counter> &egress_refusals_;
  prometheus::Family<prometheus::Counter> &egress_bytes_;
  prometheus::Counter &egress_bytes_from_clients_;
  prometheus::Counter &egress_bytes_to_clients_;
  prometheus::Gauge &egress_tunnels_;
  prometheus::Family<prometheus::Gauge> &credential_up_;
  prometheus::Family<prometheus::Gauge> &credential_age_;

  std::mutex mutex_;  // for what follows
  std::set<std::pair<std::string, std::string>, std::less<>> refusal_series_;
  std::map<std::string, CredentialState, std::less<>> credentials_;
  std::function<std::size_t()> read_prepared_;
};

}  // namespace sandbox_host::metrics
