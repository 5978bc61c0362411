// The [launcher] table: the launch service serve offers on a unix socket.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

namespace sandbox_host {

void read_launcher(const ConfigReader &r, const toml::table &t, LauncherConfig &launcher);
// Under broker.state_dir unless launcher.socket is written; refused, as a written one is, when
// longer than a unix socket address holds.
void default_launcher_socket(const ConfigReader &r, const toml::table &root, Config &config);
ConfigTableDoc launcher_schema();

}  // namespace sandbox_host
