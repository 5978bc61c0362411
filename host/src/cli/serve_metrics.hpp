// serve's [metrics]: the recorder every part of serve reports to, installed before they
// start, and the endpoint that serves it.
#pragma once

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_service/launch_service.hpp>

#include <memory>

namespace sandbox_host::cli {

class ServedMetrics {
 public:
  virtual ~ServedMetrics() = default;
  // Samples the launch service's prepared sandboxes from now on; the launch service must
  // outlive this.
  virtual void watch(const LaunchService &launcher) = 0;
};

// Null without a [metrics] table. Otherwise the endpoint listens, and its address is on
// stderr. Throws naming the listener it could not set up.
std::unique_ptr<ServedMetrics> start_metrics(Host &host);

}  // namespace sandbox_host::cli
