// The [audit] table: where the host's refusals go, and in which form.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_audit(const ConfigReader &r, const toml::table &t, Config &config);
ConfigTableDoc audit_schema();

}  // namespace sandbox_host
