// The [egress.parent] table: the operator's HTTP proxy every allowed connection is dialled
// through, and where its credential comes from.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

// node is the table; url is required, and at most one credential source is.
void read_parent(const ConfigReader &r, const toml::node &node, ParentProxyConfig &parent);
ConfigTableDoc egress_parent_schema();

}  // namespace sandbox_host
