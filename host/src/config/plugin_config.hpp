// A [plugins.<name>] table: one plugin's sandbox, network, read paths, variables, handshake
// and bounds.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

#include <string>

namespace sandbox_host {

// prefix is the table's dotted name, plugins.<name>.
PluginConfig read_plugin(const ConfigReader &r, const toml::table &t, const std::string &prefix);
ConfigTableDoc plugin_schema();

}  // namespace sandbox_host
