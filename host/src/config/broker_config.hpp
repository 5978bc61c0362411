// The [broker] table: how the broker serves the requests of sandboxed processes.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_broker(const ConfigReader &r, const toml::table &t, BrokerConfig &broker);
ConfigTableDoc broker_schema();

}  // namespace sandbox_host
