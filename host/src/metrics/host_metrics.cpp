#include <sandbox_host/host/metrics/host_metrics.hpp>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace sandbox_host::metrics {
namespace {

using prometheus::Labels;

double seconds(std::chrono::nanoseconds took) {
  return std::chrono::duration<double>(took).count();
}

// From 1 ms to about 16 s, doubling: a prepared launch takes a few ms, a cold one tens, and
// a broker operation that runs a command up to its reply timeout.
prometheus::Histogram::BucketBoundaries latency_buckets() {
  prometheus::Histogram::BucketBoundaries buckets;
  for (double bound = 0.001; bound < 20; bound *= 2) buckets.push_back(bound);
  return buckets;
}

}  // namespace

HostMetrics::HostMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      launches_(prometheus::BuildCounter()
                    .Name("sandbox_host_launches_total")
                    .Help("Launches the launch service was asked for, by backend and outcome")
                    .Register(*registry_)),
      launch_seconds_(prometheus::BuildHistogram()
                          .Name("sandbox_host_launch_duration_seconds")
                          .Help("From a launch's request to its plugin's start, by backend")
                          .Register(*registry_)),
      running_(prometheus::BuildGauge()
                   .Name("sandbox_host_sandboxes_running")
                   .Help("Plugins the launch service started that still run")
                   .Register(*registry_)
                   .Add({})),
      prepared_(prometheus::BuildGauge()
                    .Name("sandbox_host_sandboxes_prepared")
                    .Help("Sandboxes the launch service holds prepared for the next launches")
                    .Register(*registry_)
                    .Add({})),
      refusals_(prometheus::BuildCounter()
                    .Name("sandbox_host_refusals_total")
                    .Help("Refusals the audit sink recorded, by component and rule")
                    .Register(*registry_)),
      limit_hits_(prometheus::BuildCounter()
                      .Name("sandbox_host_limit_hits_total")
                      .Help("Plugins stopped or refused at a [limits] bound, by limit rule")
                      .Register(*registry_)),
      broker_requests_(prometheus::BuildCounter()
                           .Name("sandbox_host_broker_requests_total")
                           .Help("Broker requests that reached an operation, by op and outcome")
                           .Register(*registry_)),
      broker_seconds_(prometheus::BuildHistogram()
                          .Name("sandbox_host_broker_request_duration_seconds")
                          .Help("How long the broker took to answer or refuse a request, by op")
                          .Register(*registry_)),
      egress_connections_(prometheus::BuildCounter()
                              .Name("sandbox_host_egress_connections_total")
                              .Help("Egress proxy connections, by kind and outcome")
                              .Register(*registry_)),
      egress_refusals_(prometheus::BuildCounter()
                           .Name("sandbox_host_egress_refusals_total")
                           .Help("Connections the egress proxy refused, by rule")
                           .Register(*registry_)),
      egress_bytes_(
          prometheus::BuildCounter()
              .Name("sandbox_host_egress_bytes_total")
              .Help("Bytes the egress proxy carried, by direction, counted when each session ends")
              .Register(*registry_)),
      egress_bytes_from_clients_(egress_bytes_.Add({{"direction", "from_client"}})),
      egress_bytes_to_clients_(egress_bytes_.Add({{"direction", "to_client"}})),
      egress_tunnels_(prometheus::BuildGauge()
                          .Name("sandbox_host_egress_tunnels_open")
                          .Help("CONNECT and SOCKS5 tunnels the egress proxy relays now")
                          .Register(*registry_)
                          .Add({})),
      credential_up_(prometheus::BuildGauge()
                         .Name("sandbox_host_credential_up")
                         .Help("1 when the token keeper's last read of the credential worked")
                         .Register(*registry_)),
      credential_age_(prometheus::BuildGauge()
                          .Name("sandbox_host_credential_last_good_read_age_seconds")
                          .Help("Seconds since the credential was last read well (since the "
                                "first try, when none worked yet)")
                          .Register(*registry_)) {}

HostMetrics::~HostMetrics() = default;

void HostMetrics::refusal(std::string_view component, std::string_view rule) {
  std::string counted_rule(rule);
  {
    std::lock_guard lock(mutex_);
    const auto series = std::make_pair(std::string(component), std::string(rule));
    if (!refusal_series_.contains(series)) {
      if (refusal_series_.size() >= kMaxRefusalSeries) {
        counted_rule = "other";
      } else {
        refusal_series_.insert(series);
      }
    }
  }
  refusals_.Add({{"component", std::string(component)}, {"rule", counted_rule}}).Increment();
  if (component == "limits") limit_hits_.Add({{"limit", counted_rule}}).Increment();
}

void HostMetrics::launch(std::string_view backend, std::string_view outcome,
                         std::chrono::nanoseconds took) {
  const std::string backend_label(backend);
  launches_.Add({{"backend", backend_label}, {"outcome", std::string(outcome)}}).Increment();
  if (outcome == "started") {
    launch_seconds_.Add({{"backend", backend_label}}, latency_buckets()).Observe(seconds(took));
  }
}

void HostMetrics::plugin_running(int delta) {
  running_.Increment(delta);
}

void HostMetrics::broker_request(std::string_view op, std::string_view outcome,
                                 std::chrono::nanoseconds took) {
  const std::string op_label(op);
  broker_requests_.Add({{"op", op_label}, {"outcome", std::string(outcome)}}).Increment();
  broker_seconds_.Add({{"op", op_label}}, latency_buckets()).Observe(seconds(took));
}

void HostMetrics::egress_connection(std::string_view kind, std::string_view outcome) {
  egress_connections_.Add({{"kind", std::string(kind)}, {"outcome", std::string(outcome)}})
      .Increment();
}

void HostMetrics::egress_refusal(std::string_view rule) {
  egress_refusals_.Add({{"rule", std::string(rule)}}).Increment();
}

void HostMetrics::egress_tunnels_open(int delta) {
  egress_tunnels_.Increment(delta);
}

void HostMetrics::egress_bytes(std::uint64_t from_clients, std::uint64_t to_clients) {
  egress_bytes_from_clients_.Increment(static_cast<double>(from_clients));
  egress_bytes_to_clients_.Increment(static_cast<double>(to_clients));
}

void HostMetrics::credential_read(std::string_view credential, bool good) {
  credential_up_.Add({{"credential", std::string(credential)}}).Set(good ? 1 : 0);
  std::lock_guard lock(mutex_);
  auto found = credentials_.find(credential);
  if (found == credentials_.end()) {
    found = credentials_.emplace(std::string(credential), CredentialState{Clock::now(), {}}).first;
  }
  if (good) found->second.last_good = Clock::now();
}

void HostMetrics::sample_prepared_sandboxes(std::function<std::size_t()> read) {
  std::lock_guard lock(mutex_);
  read_prepared_ = std::move(read);
}

std::string HostMetrics::exposition() {
  {
    std::lock_guard lock(mutex_);
    if (read_prepared_) prepared_.Set(static_cast<double>(read_prepared_()));
    const auto now = Clock::now();
    for (const auto &[credential, state] : credentials_) {
      const auto since = state.last_good.value_or(state.first_read);
      credential_age_.Add({{"credential", credential}}).Set(seconds(now - since));
    }
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace sandbox_host::metrics
