// The [metrics] table's schema: where serve's Prometheus endpoint listens and its bounds.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

// A [metrics] table that leaves out listen serves on 127.0.0.1:9464; one that turns both
// listeners off is refused at the table's line.
void read_metrics(const ConfigReader &r, const toml::table &t, MetricsConfig &metrics);
ConfigTableDoc metrics_schema();

}  // namespace sandbox_host
