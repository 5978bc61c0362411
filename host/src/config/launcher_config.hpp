// The [launcher] table: the launch service serve offers on a unix socket.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_launcher(const ConfigReader &r, const toml::table &t, LauncherConfig &launcher);
ConfigTableDoc launcher_schema();

}  // namespace sandbox_host
