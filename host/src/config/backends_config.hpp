// The [backends] table: which backend modules load, and the probe's order of them.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_backends(const ConfigReader &r, const toml::table &t, Config &config);
ConfigTableDoc backends_schema();

}  // namespace sandbox_host
