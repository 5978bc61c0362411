#include "serve_metrics.hpp"

#include <sandbox_host/host/metrics/host_metrics.hpp>
#include <sandbox_host/host/metrics/metrics_endpoint.hpp>

#include <iostream>

namespace sandbox_host::cli {
namespace {

class Served final : public ServedMetrics {
 public:
  Served(const MetricsConfig &config, AuditSink &audit)
      : metrics_(std::make_shared<metrics::HostMetrics>()), endpoint_(config, *metrics_, audit) {
    metrics::install(metrics_);
    std::cerr << "sandbox-host serve: metrics on " << endpoint_.description() << std::endl;
  }
  // The endpoint stops first (its destructor joins its threads), so no scrape samples a
  // launch service that is gone; a part of serve still reporting keeps metrics_ alive.
  ~Served() override { metrics::install(nullptr); }

  void watch(const LaunchService &launcher) override {
    metrics_->sample_prepared_sandboxes([&launcher] { return launcher.prepared(); });
  }

 private:
  std::shared_ptr<metrics::HostMetrics> metrics_;
  metrics::MetricsEndpoint endpoint_;
};

}  // namespace

std::unique_ptr<ServedMetrics> start_metrics(Host &host) {
  if (!host.config().metrics) return nullptr;
  return std::make_unique<Served>(*host.config().metrics, host.audit());
}

}  // namespace sandbox_host::cli
